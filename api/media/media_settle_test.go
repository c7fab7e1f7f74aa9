package media_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// imageWorker stands in for the worker pool behind the queue: each
// enqueued media:process task settles its media as the worker would
// (succeeded with the result, or failed with message), a little later; a
// nil db never settles (no worker running).
type imageWorker struct {
	db      *postgres.DB
	result  storage.MediaResult
	message string // when set, the media fails with it
}

func (w *imageWorker) EnqueueContext(_ context.Context, task *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	p, err := tasks.ParseMediaProcess(task)
	if err != nil || w.db == nil {
		return &asynq.TaskInfo{}, err
	}
	go func() {
		ctx := context.Background()
		time.Sleep(30 * time.Millisecond)
		if _, err := w.db.StartMediaProcessing(ctx, p.MediaID, time.Now()); err != nil {
			return
		}
		if w.message != "" {
			_ = w.db.FailMedia(ctx, p.MediaID, storage.MediaErrorInvalidMedia, "InvalidMedia", w.message, time.Now())
			return
		}
		_ = w.db.CompleteMedia(ctx, p.MediaID, w.result, time.Now())
	}()
	return &asynq.TaskInfo{}, nil
}

// withImageWorker makes the bundle's media module enqueue to w and wait
// up to wait for images.
func withImageWorker(w *imageWorker, wait time.Duration) func(*api.Deps) {
	return func(d *api.Deps) {
		md := d.Modules.Media.Deps
		md.Queue, md.ImageWait, md.Validator = w, wait, validation.New()
		d.Modules.Media = media.New(md)
	}
}

// TestImageUsableAtFinalize (issue 23): an image's finalize, and the
// one-shot upload, answer once the worker processed it: no
// processing_info, the image's dimensions, and a post made right after
// attaches it. A failed image is a 400; a worker that does not answer in
// time leaves the platform's pending answer. Every answer matches the
// OpenAPI description.
func TestImageUsableAtFinalize(t *testing.T) {
	t.Parallel()
	router := apitest.OptionalOpenAPI(t)
	worker := &imageWorker{result: storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"}}
	b := setup(t, 100, withImageWorker(worker, 5*time.Second))
	worker.db = b.DB
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n fixture bytes"))

	check := func(t *testing.T, method, path string, r apitest.Reply, status int) map[string]any {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Raw, status)
		}
		if err := apitest.ValidateResponse(t.Context(), router, method, path, r); err != nil {
			t.Errorf("%s %s does not match the OpenAPI description: %v\n%s", method, path, err, r.Raw)
		}
		data, _ := r.Body["data"].(map[string]any)
		return data
	}
	wantUsable := func(t *testing.T, data map[string]any) {
		t.Helper()
		img, _ := data["image"].(map[string]any)
		if data["processing_info"] != nil || img["w"] != float64(64) || img["h"] != float64(48) || img["image_type"] != "image/png" {
			t.Fatalf("answer %v, want no processing_info and image {64, 48, image/png}", data)
		}
		body := fmt.Appendf(nil, `{"text":"at once","media":{"media_ids":[%q]}}`, data["id"])
		check(t, "POST", "/2/tweets", b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", body), 201)
	}

	t.Run("chunked", func(t *testing.T) {
		id := b.Call(t, "POST", "/2/media/upload/initialize", "oauth:author", "application/json",
			fmt.Appendf(nil, `{"media_type":"image/png","total_bytes":%d}`, base64.StdEncoding.DecodedLen(len(png))-strings.Count(png, "="))).Body["data"].(map[string]any)["id"].(string)
		r := b.Call(t, "POST", "/2/media/upload/"+id+"/append", "oauth:author", "application/json",
			fmt.Appendf(nil, `{"media":%q,"segment_index":0}`, png))
		if r.Status != 200 {
			t.Fatalf("append: %d %s", r.Status, r.Raw)
		}
		path := "/2/media/upload/" + id + "/finalize"
		wantUsable(t, check(t, "POST", path, b.Call(t, "POST", path, "oauth:author", "", nil), 200))
	})
	t.Run("one-shot JSON", func(t *testing.T) {
		body := fmt.Appendf(nil, `{"media":%q,"media_category":"tweet_image"}`, png)
		wantUsable(t, check(t, "POST", "/2/media/upload", b.Call(t, "POST", "/2/media/upload", "oauth:author", "application/json", body), 200))
	})
	t.Run("one-shot multipart", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("media_category", "dm_image")
		fw, _ := mw.CreateFormFile("media", "a.png")
		raw, _ := base64.StdEncoding.DecodeString(png)
		_, _ = fw.Write(raw)
		_ = mw.Close()
		r := b.Call(t, "POST", "/2/media/upload", "oauth:author", mw.FormDataContentType(), buf.Bytes())
		data := check(t, "POST", "/2/media/upload", r, 200)
		if m := mediaOf(t, b.DB, data["id"]); m.Category != storage.MediaDMImage || m.MediaType != "image/png" || m.TotalBytes != int64(len(raw)) {
			t.Errorf("one-shot record %s %s %d", m.Category, m.MediaType, m.TotalBytes)
		}
	})

	failing := &imageWorker{message: "The file is not a PNG image (media_type image/png)."}
	bf := setup(t, 100, withImageWorker(failing, 5*time.Second))
	failing.db = bf.DB
	t.Run("failed image", func(t *testing.T) {
		body := fmt.Appendf(nil, `{"media":%q,"media_category":"tweet_image"}`, png)
		r := bf.Call(t, "POST", "/2/media/upload", "oauth:author", "application/json", body)
		check(t, "POST", "/2/media/upload", r, 400)
		if !strings.Contains(r.Raw, "not a PNG image") {
			t.Errorf("answer %s, want the processing error", r.Raw)
		}
	})

	bn := setup(t, 100, withImageWorker(&imageWorker{}, 100*time.Millisecond)) // no worker answers
	t.Run("no worker in time", func(t *testing.T) {
		body := fmt.Appendf(nil, `{"media":%q,"media_category":"tweet_image"}`, png)
		data := check(t, "POST", "/2/media/upload", bn.Call(t, "POST", "/2/media/upload", "oauth:author", "application/json", body), 200)
		info, _ := data["processing_info"].(map[string]any)
		if info["state"] != "pending" || info["check_after_secs"] != float64(1) {
			t.Errorf("answer %v, want processing_info pending, check_after_secs 1", data)
		}
	})
}

func mediaOf(t *testing.T, db *postgres.DB, id any) storage.Media {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(fmt.Sprint(id), &n); err != nil {
		t.Fatalf("media id %v", id)
	}
	m, err := db.Media(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
