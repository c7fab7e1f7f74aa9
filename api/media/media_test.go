package media_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
)

const mediaBase = "/2/media/upload"

// bundle is the API under test (apitest.Bundle) with the media upload tests'
// helpers.
type bundle struct{ *apitest.Bundle }

// setup starts a bundle as apitest.Setup does.
func setup(t testing.TB, rateScale float64, opts ...func(*api.Deps)) *bundle {
	t.Helper()
	return &bundle{apitest.Setup(t, rateScale, opts...)}
}

// payload is a request body with its content type.
type payload struct {
	ctype string
	body  []byte
}

func jsonPayload(v any) payload { return payload{"application/json", apitest.JSONBody(v)} }

// appendJSON is an append's JSON body.
func appendJSON(index int, data []byte) payload {
	return jsonPayload(map[string]any{"media": base64.StdEncoding.EncodeToString(data), "segment_index": index})
}

// formField is one part of a multipart body: a file part or a plain field.
type formField struct {
	name, value string
	file        bool
}

func indexField(i int) formField { return formField{name: "segment_index", value: strconv.Itoa(i)} }

func mediaFile(data []byte) formField {
	return formField{name: "media", value: string(data), file: true}
}

func mediaField(data []byte) formField { return formField{name: "media", value: string(data)} }

// form is a multipart/form-data body of fields, in order.
func form(fields ...formField) payload {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		h := textproto.MIMEHeader{}
		if f.file {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="blob"`, f.name))
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, f.name))
		}
		part, _ := w.CreatePart(h)
		_, _ = part.Write([]byte(f.value))
	}
	_ = w.Close()
	return payload{w.FormDataContentType(), buf.Bytes()}
}

// send posts p to path as authz.
func (b *bundle) send(t testing.TB, path, authz string, p payload) apitest.Reply {
	t.Helper()
	return b.Call(t, "POST", path, authz, p.ctype, p.body)
}

// initMedia initializes an upload as authz and returns its id.
func (b *bundle) initMedia(t testing.TB, authz string, req map[string]any) string {
	t.Helper()
	r := b.send(t, mediaBase+"/initialize", authz, jsonPayload(req))
	if r.Status != 200 {
		t.Fatalf("initialize %v: %d %s", req, r.Status, r.Raw)
	}
	return r.Body["data"].(map[string]any)["id"].(string)
}

// completeUpload initializes a photo upload of data as authz and appends
// it as one segment; it returns the id, ready to finalize.
func (b *bundle) completeUpload(t testing.TB, authz string, data []byte) string {
	t.Helper()
	id := b.initMedia(t, authz, map[string]any{"media_type": "image/png", "total_bytes": len(data)})
	if r := b.send(t, mediaBase+"/"+id+"/append", authz, appendJSON(0, data)); r.Status != 200 {
		t.Fatalf("append: %d %s", r.Status, r.Raw)
	}
	return id
}

// mediaState counts what media uploads stored: media rows, segment rows
// and segment objects in the blob store.
type mediaState struct{ media, segments, objects int }

func (b *bundle) mediaState(t testing.TB) mediaState {
	t.Helper()
	var s mediaState
	b.Query(t, `SELECT (SELECT count(*) FROM media), (SELECT count(*) FROM media_segments)`, &s.media, &s.segments)
	s.objects = len(b.segmentObjects(t))
	return s
}

// segmentObjects lists the files of segment objects in the local blob
// store (objects/media.d/<id>.d/segments.d/<copy>.blob).
func (b *bundle) segmentObjects(t testing.TB) []string {
	t.Helper()
	var out []string
	root := filepath.Join(b.BlobDir, "objects", "media.d")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".blob") && strings.Contains(path, "segments.d") {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk blobs: %v", err)
	}
	return out
}

// blobBytes reads one object of the bundle's blob store.
func (b *bundle) blobBytes(t testing.TB, key string) []byte {
	t.Helper()
	store, err := local.New(local.Options{Dir: b.BlobDir, BaseURL: "http://blobs.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// taskRecorder is a media.Enqueuer that keeps the tasks and answers err.
type taskRecorder struct {
	mu    sync.Mutex
	tasks []*asynq.Task
	err   error
}

func (q *taskRecorder) EnqueueContext(_ context.Context, task *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tasks = append(q.tasks, task)
	return &asynq.TaskInfo{Type: task.Type()}, q.err
}

// enqueued lists the media ids of the media:process tasks received.
func (q *taskRecorder) enqueued(t *testing.T) []int64 {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	var ids []int64
	for _, task := range q.tasks {
		p, err := tasks.ParseMediaProcess(task)
		if err != nil || task.Type() != tasks.TypeMediaProcess {
			t.Fatalf("task %s %s: %v", task.Type(), task.Payload(), err)
		}
		ids = append(ids, p.MediaID)
	}
	return ids
}

// TestMediaUpload drives a whole upload with each encoding of append:
// segments out of order, a retried segment replacing a wrong copy, then
// finalize, which enqueues processing; the upload then takes no more
// segments and no second finalize.
func TestMediaUpload(t *testing.T) {
	t.Parallel()
	queue := &taskRecorder{}
	b := setup(t, 100, func(d *api.Deps) { d.Modules.Media.Queue = queue })
	encodings := []struct {
		name string
		body func(index int, data []byte) payload
	}{
		{"json", appendJSON},
		{"multipart file part, index first", func(i int, data []byte) payload { return form(indexField(i), mediaFile(data)) }},
		{"multipart field, index last", func(i int, data []byte) payload { return form(mediaField(data), indexField(i)) }},
	}
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			id := b.initMedia(t, "oauth:author", map[string]any{"media_type": "video/mp4", "total_bytes": 10})
			mid := apitest.MustID(t, id)
			appendTo := func(index int, data string) apitest.Reply {
				t.Helper()
				r := b.send(t, mediaBase+"/"+id+"/append", "oauth:author", enc.body(index, []byte(data)))
				if r.Status != 200 {
					t.Fatalf("append %d: %d %s", index, r.Status, r.Raw)
				}
				return r
			}
			first := appendTo(2, "hij")
			appendTo(0, "abcd")
			appendTo(1, "WRONG")
			stored, err := b.DB.Media(t.Context(), mid)
			if err != nil {
				t.Fatal(err)
			}
			if got := first.Body["data"].(map[string]any)["expires_at"]; got != float64(stored.ExpiresAt.Unix()) {
				t.Errorf("expires_at %v, want %d", got, stored.ExpiresAt.Unix())
			}
			// The wrong copy of segment 1 counts until it is replaced.
			early := b.Call(t, "POST", mediaBase+"/"+id+"/finalize", "oauth:author", "", nil)
			if early.Status != 400 || !strings.Contains(early.Raw, "received 12 bytes, but total_bytes is 10") {
				t.Fatalf("finalize with the wrong copy: %d %s", early.Status, early.Raw)
			}
			appendTo(1, "efg")

			fin := b.Call(t, "POST", mediaBase+"/"+id+"/finalize", "oauth:author", "", nil)
			if fin.Status != 200 {
				t.Fatalf("finalize: %d %s", fin.Status, fin.Raw)
			}
			data := fin.Body["data"].(map[string]any)
			if data["id"] != id || data["media_key"] != "7_"+id || data["size"] != float64(10) {
				t.Errorf("finalize answer %s", fin.Raw)
			}
			if secs := data["expires_after_secs"].(float64); secs < 86390 || secs > 86400 {
				t.Errorf("expires_after_secs %v", secs)
			}
			if got := apitest.CanonicalJSON(t, string(apitest.JSONBody(data["processing_info"]))); got != `{"check_after_secs":1,"state":"pending"}` {
				t.Errorf("processing_info %s", got)
			}
			checkSegments(t, b, mid, "abcdefghij", 4)
			if m, err := b.DB.Media(t.Context(), mid); err != nil || m.State != storage.MediaPending {
				t.Errorf("media after finalize: %+v %v", m, err)
			}
			if ids := queue.enqueued(t); len(ids) == 0 || ids[len(ids)-1] != mid {
				t.Errorf("enqueued %v, want media %d last", ids, mid)
			}

			before := b.mediaState(t)
			late := b.send(t, mediaBase+"/"+id+"/append", "oauth:author", enc.body(3, []byte("k")))
			if late.Status != 409 || late.Body["type"] != apitest.Problems+"conflict" || !strings.Contains(late.Raw, "already finalized") {
				t.Errorf("append after finalize: %d %s", late.Status, late.Raw)
			}
			again := b.Call(t, "POST", mediaBase+"/"+id+"/finalize", "oauth:author", "", nil)
			if again.Status != 409 || !strings.Contains(again.Raw, "already finalized") {
				t.Errorf("second finalize: %d %s", again.Status, again.Raw)
			}
			if after := b.mediaState(t); after != before {
				t.Errorf("refused requests stored something: %+v -> %+v", before, after)
			}
		})
	}
}

// checkSegments checks media id's stored copies: copies in all, and the
// newest copy of each index, in order, holding want.
func checkSegments(t *testing.T, b *bundle, id int64, want string, copies int) {
	t.Helper()
	segs, err := b.DB.MediaSegments(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != copies {
		t.Fatalf("%d segment copies, want %d: %+v", len(segs), copies, segs)
	}
	newest := map[int]storage.MediaSegment{}
	for _, s := range segs {
		if !strings.HasPrefix(s.Key, fmt.Sprintf("media/%d/segments/", id)) {
			t.Errorf("segment key %s", s.Key)
		}
		if s.Seq > newest[s.Index].Seq {
			newest[s.Index] = s
		}
	}
	var got []byte
	for i := range len(newest) {
		data := b.blobBytes(t, newest[i].Key)
		if int64(len(data)) != newest[i].Size {
			t.Errorf("segment %d: %d bytes stored, %d recorded", i, len(data), newest[i].Size)
		}
		got = append(got, data...)
	}
	if string(got) != want {
		t.Errorf("newest segments hold %q, want %q", got, want)
	}
}

// TestMediaFinalizeBodies: finalize takes no parameters, so no body, an
// empty JSON object and forms (as clients send them) are all accepted.
func TestMediaFinalizeBodies(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	tests := []struct {
		name string
		in   payload
	}{
		{"no body", payload{}},
		{"empty JSON object", jsonPayload(map[string]any{})},
		{"JSON without a content type", payload{"", []byte(`{}`)}},
		{"form", payload{"application/x-www-form-urlencoded", []byte("command=FINALIZE")}},
		{"multipart form", form(formField{name: "command", value: "FINALIZE"})},
		{"empty text body", payload{"text/plain", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := b.completeUpload(t, "oauth:author", []byte("png!"))
			r := b.send(t, mediaBase+"/"+id+"/finalize", "oauth:author", tt.in)
			if r.Status != 200 || r.Body["data"].(map[string]any)["id"] != id {
				t.Fatalf("finalize: %d %s", r.Status, r.Raw)
			}
		})
	}
}

// TestMediaFinalizeEnqueueFailure: finalize answers 200 whether or not the
// enqueue works; a failure is logged (the sweeper enqueues the media), a
// task that is already queued is not.
func TestMediaFinalizeEnqueueFailure(t *testing.T) {
	t.Parallel()
	const warning = "enqueue finalized media; the sweeper will enqueue it"
	queue := &taskRecorder{}
	logs := &apitest.LogRecorder{}
	b := setup(t, 100, func(d *api.Deps) {
		d.Modules.Media.Queue = queue
		d.Modules.Media.Logger = slog.New(logs)
	})
	tests := []struct {
		name     string
		err      error
		warnings int
	}{
		{"queue down", errors.New("dial tcp: connection refused"), 1},
		{"already queued", asynq.ErrTaskIDConflict, 1},
		{"enqueued", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queue.mu.Lock()
			queue.err = tt.err
			queue.mu.Unlock()
			id := b.completeUpload(t, "oauth:author", []byte("png!"))
			if r := b.Call(t, "POST", mediaBase+"/"+id+"/finalize", "oauth:author", "", nil); r.Status != 200 {
				t.Fatalf("finalize: %d %s", r.Status, r.Raw)
			}
			if m, err := b.DB.Media(t.Context(), apitest.MustID(t, id)); err != nil || m.State != storage.MediaPending {
				t.Errorf("media %+v %v, want pending", m, err)
			}
			if got := logs.Count(warning, slog.LevelWarn); got != tt.warnings {
				t.Errorf("%d enqueue warnings logged, want %d", got, tt.warnings)
			}
		})
	}
}

// TestMediaStatus renders STATUS for every processing state: check_after
// only while not final, progress once a worker started, error only on
// failure, image for photos and video for videos and GIFs that succeeded.
func TestMediaStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	ctx := context.Background()
	start := func(m storage.Media, percent int) {
		if _, err := b.DB.StartMediaProcessing(ctx, m.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.DB.SetMediaProgress(ctx, m.ID, percent); err != nil {
			t.Fatal(err)
		}
	}
	photo := storage.MediaResult{Width: 640, Height: 480, OutputType: "image/jpeg", OutputKey: "media/1/media.jpg"}
	video := storage.MediaResult{Width: 1280, Height: 720, DurationMS: 61_000, AspectRatio: "16:9", OutputType: "video/mp4"}
	tests := []struct {
		name            string
		media           func() storage.Media
		processing      string
		image, videoObj string
	}{
		{"pending", func() storage.Media {
			return apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{}, time.Now())
		}, `{"check_after_secs":1,"state":"pending"}`, "null", "null"},
		{"in progress", func() storage.Media {
			m := apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{Category: storage.MediaTweetVideo}, time.Now())
			start(m, 40)
			return m
		}, `{"check_after_secs":1,"progress_percent":40,"state":"in_progress"}`, "null", "null"},
		{"photo succeeded", func() storage.Media {
			return apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"}, photo)
		}, `{"progress_percent":100,"state":"succeeded"}`, `{"h":480,"image_type":"image/jpeg","w":640}`, "null"},
		{"video succeeded", func() storage.Media {
			return apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{Category: storage.MediaTweetVideo}, video)
		}, `{"progress_percent":100,"state":"succeeded"}`, "null", `{"video_type":"video/mp4"}`},
		{"animated GIF succeeded", func() storage.Media {
			return apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{Category: storage.MediaTweetGIF}, video)
		}, `{"progress_percent":100,"state":"succeeded"}`, "null", `{"video_type":"video/mp4"}`},
		{"subtitles succeeded", func() storage.Media {
			return apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{Category: storage.MediaSubtitles}, storage.MediaResult{OutputType: "text/srt"})
		}, `{"progress_percent":100,"state":"succeeded"}`, "null", "null"},
		{"failed", func() storage.Media {
			m := apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{}, time.Now())
			start(m, 10)
			if err := b.DB.FailMedia(ctx, m.ID, storage.MediaErrorInvalidMedia, "InvalidMedia", "The bytes are not a PNG image.", time.Now()); err != nil {
				t.Fatal(err)
			}
			return m
		}, `{"error":{"code":1,"message":"The bytes are not a PNG image.","name":"InvalidMedia"},"progress_percent":10,"state":"failed"}`, "null", "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.media()
			id := strconv.FormatInt(m.ID, 10)
			r := b.Call(t, "GET", mediaBase+"?command=STATUS&media_id="+id, "oauth:author", "", nil)
			if r.Status != 200 {
				t.Fatalf("STATUS: %d %s", r.Status, r.Raw)
			}
			data := r.Body["data"].(map[string]any)
			if data["id"] != id || data["media_key"] != m.Key || data["size"] != float64(m.TotalBytes) {
				t.Errorf("STATUS %s", r.Raw)
			}
			if secs, _ := data["expires_after_secs"].(float64); secs < 86390 || secs > 86400 {
				t.Errorf("expires_after_secs %v, want about a day (from finalize)", data["expires_after_secs"])
			}
			for name, want := range map[string]string{"processing_info": tt.processing, "image": tt.image, "video": tt.videoObj} {
				if got := apitest.CanonicalJSON(t, string(apitest.JSONBody(data[name]))); got != want {
					t.Errorf("%s %s, want %s", name, got, want)
				}
			}
			// Without command, as the OpenAPI description allows.
			if r := b.Call(t, "GET", mediaBase+"?media_id="+id, "oauth:author", "", nil); r.Status != 200 {
				t.Errorf("STATUS without command: %d %s", r.Status, r.Raw)
			}
		})
	}
}

// watchedBlobs is the media module's blob store with a signal: started is
// closed once a Put has read segment bytes; sizes records Put's sizes.
type watchedBlobs struct {
	media.BlobStore
	once    sync.Once
	started chan struct{}
	mu      sync.Mutex
	sizes   []int64
}

func (w *watchedBlobs) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	w.mu.Lock()
	w.sizes = append(w.sizes, size)
	w.mu.Unlock()
	return w.BlobStore.Put(ctx, key, readSignal{r, func() { w.once.Do(func() { close(w.started) }) }}, size, contentType)
}

type readSignal struct {
	r    io.Reader
	read func()
}

func (s readSignal) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.read()
	}
	return n, err
}

// TestMediaAppendStreams: a multipart segment reaches the blob store while
// the request body is still arriving (streamed, size unknown), not after
// the whole body was buffered.
func TestMediaAppendStreams(t *testing.T) {
	t.Parallel()
	watched := &watchedBlobs{started: make(chan struct{})}
	b := setup(t, 100, func(d *api.Deps) {
		watched.BlobStore = d.Modules.Media.Blobs
		d.Modules.Media.Blobs = watched
	})
	const size = 3 << 20
	id := b.initMedia(t, "oauth:author", map[string]any{"media_type": "video/mp4", "total_bytes": size})
	full := form(indexField(0), mediaFile(bytes.Repeat([]byte("s"), size)))
	half := len(full.body) / 2

	pr, pw := io.Pipe()
	defer pw.CloseWithError(errors.New("the test ended")) // unblocks the server on a failure
	req, err := http.NewRequest("POST", b.Srv.URL+mediaBase+"/"+id+"/append", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", full.ctype)
	if err := auth.SignRequest(req, "", b.App.ConsumerKey, b.App.ConsumerSecret, b.AuthorToken.Token, b.AuthorToken.Secret, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	answer := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answer <- 0
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	if _, err := pw.Write(full.body[:half]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watched.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the blob store got no bytes while half the body was sent: append buffers the body")
	}
	if _, err := pw.Write(full.body[half:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if status := <-answer; status != 200 {
		t.Fatalf("append: %d", status)
	}
	watched.mu.Lock()
	defer watched.mu.Unlock()
	if len(watched.sizes) != 1 || watched.sizes[0] != -1 {
		t.Errorf("Put sizes %v, want one streamed Put (-1)", watched.sizes)
	}
	checkSegments(t, b, apitest.MustID(t, id), strings.Repeat("s", size), 1)
}
