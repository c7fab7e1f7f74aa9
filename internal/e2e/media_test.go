package e2e

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
)

// End-to-end tests of chunked media upload and processing
// (docs/media-upload.md) through the built binary's HTTP API: raw HTTP with
// both append encodings across two API replicas, the duration caps of
// premium and default users, a worker killed mid-transcode, and bad input.
// The npm client twitter-api-v2 drives it in media_node_test.go.

// TestMediaUploadRawHTTP uploads a video of more than 5 MiB (so the worker
// assembles it from two S3 multipart parts on MinIO) in segments sent out of
// order, alternating between two API replicas on one database, Redis and
// bucket, and between the three append encodings (multipart with the media
// part before segment_index, multipart with it after, JSON base64). Segment
// 2 is first sent with other bytes of another length and then again with
// the right ones: only the retry counts, so finalize (on the second
// replica) accepts the total, the assembled original is byte for byte the
// video, STATUS polled on the first replica reaches succeeded with the
// declared size and the video's real duration and dimensions, and the media
// can be posted. Then every segment of a PNG is sent at once, spread over
// both replicas, and it too is assembled exactly.
func TestMediaUploadRawHTTP(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "s3", workers: 1})
	bases := []string{s.baseURL, s.replica(t)}
	tok := s.demoToken()
	video := noisyVideo(t, t.TempDir(), 9)
	const segSize = 1<<20 + 12345
	var segs [][]byte
	for off := 0; off < len(video); off += segSize {
		segs = append(segs, video[off:min(off+segSize, len(video))])
	}
	n := len(segs)
	if len(video) <= 5<<20 || n < 6 {
		t.Fatalf("generated video is %d bytes in %d segments; want more than 5 MiB and at least 6 segments", len(video), n)
	}
	id := s.mustInitMedia(tok, map[string]any{"media_type": "video/mp4", "media_category": "tweet_video", "total_bytes": len(video)})

	wrong := bytes.Repeat([]byte("not the video!"), len(segs[2])/28) // half the length, other bytes
	s.mustAppend(tok, bases[1], id, 2, wrong, multipartMediaFirst)
	order := []int{n - 1, 3, 0, 2, 1}
	for idx := 4; idx < n-1; idx++ {
		order = append(order, idx)
	}
	for i, idx := range order { // every replica gets every encoding
		s.mustAppend(tok, bases[i%2], id, idx, segs[idx], appendEncoding(i%3))
	}

	fin := s.finalizeMedia(tok, bases[1], id)
	if fin.Status != http.StatusOK {
		t.Fatalf("finalize on the second replica: %d %s", fin.Status, fin.Raw)
	}
	data, _ := fin.Body["data"].(map[string]any)
	info, _ := data["processing_info"].(map[string]any)
	if data["id"] != id || data["media_key"] != "7_"+id || data["size"] != float64(len(video)) ||
		info["state"] != string(storage.MediaPending) || info["check_after_secs"] != float64(1) {
		t.Fatalf("finalize answer %s; want id %s, media_key 7_%s, size %d, processing_info {pending, check_after_secs 1}", fin.Raw, id, id, len(video))
	}
	again := s.finalizeMedia(tok, bases[0], id)
	wantMediaProblem(t, "a second finalize", again, http.StatusConflict, "conflict")

	done := s.waitMedia(tok, bases[0], id, 2*time.Minute)
	wantSucceeded(t, done, len(video))
	if v, _ := done["video"].(map[string]any); v == nil || v["video_type"] != "video/mp4" {
		t.Errorf("STATUS video %v, want {video_type: video/mp4}", done["video"])
	}
	rec := s.mediaRecord(id)
	if got := s.readBlob(t, storage.MediaOriginalKey(rec.ID)); got != string(video) {
		t.Errorf("the assembled original (%d bytes) differs from the uploaded video (%d bytes)", len(got), len(video))
	}
	if rec.Width != 160 || rec.Height != 120 || rec.DurationMS < 8500 || rec.DurationMS > 9500 {
		t.Errorf("processed media %dx%d, %d ms; want the uploaded 160x120, 9 s video", rec.Width, rec.Height, rec.DurationMS)
	}
	s.mustTweetWithMedia(tok, "a video appended in pieces", id)

	// All segments of a ~2.5 MB PNG at once, on both replicas.
	img := noisyPNG(t, 900, 700)
	var parts [][]byte
	for off := 0; off < len(img); off += 200_001 {
		parts = append(parts, img[off:min(off+200_001, len(img))])
	}
	imgID := s.mustInitMedia(tok, map[string]any{"media_type": "image/png", "total_bytes": len(img)})
	errs := make(chan error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, ct := appendBody(appendEncoding(i%3), i, part)
			if status, raw, err := s.trySigned(tok, bases[i%2], http.MethodPost, "/2/media/upload/"+imgID+"/append", body, ct); err != nil || status != http.StatusOK {
				errs <- fmt.Errorf("concurrent append %d to %s: %d %s %v", i, bases[i%2], status, raw, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if fin := s.finalizeMedia(tok, bases[0], imgID); fin.Status != http.StatusOK {
		t.Fatalf("finalize after %d concurrent appends: %d %s", len(parts), fin.Status, fin.Raw)
	}
	imgDone := s.waitMedia(tok, bases[1], imgID, time.Minute)
	wantSucceeded(t, imgDone, len(img))
	if got, _ := imgDone["image"].(map[string]any); got["w"] != float64(900) || got["h"] != float64(700) {
		t.Errorf("STATUS image %v, want 900x700", imgDone["image"])
	}
	if got := s.readBlob(t, storage.MediaOriginalKey(s.mediaRecord(imgID).ID)); got != string(img) {
		t.Errorf("the assembled original of the concurrent upload (%d bytes) differs from the PNG (%d bytes)", len(got), len(img))
	}
}

// TestMediaVideoOverAuthorsCap: a premium user (set with `aviary admin user
// premium`) uploads a 20.5-minute video shared with a default user
// (additional_owners). It processes (the uploader's cap is 125 minutes) and
// the uploader may post it, but the default user posting it gets 403 naming
// their 20-minute cap. The same file uploaded by the default user fails
// processing with LimitExceeded (code 2).
func TestMediaVideoOverAuthorsCap(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	premium := s.demoToken()
	plain := s.userToken("media-default")
	plainID := s.userID("media-default")
	var flag map[string]any
	s.runJSON(&flag, "admin", "user", "premium", s.creds.UserID, "on")
	if flag["user_id"] != s.creds.UserID || flag["premium"] != true {
		t.Fatalf("aviary admin user premium %s on: %v", s.creds.UserID, flag)
	}
	long := ffmpeg(t, t.TempDir(), "long.mp4", "-f", "lavfi", "-i", "color=c=black:s=32x32:r=1", "-t", "1230",
		"-c:v", "libx264", "-preset", "ultrafast")

	id := s.uploadMedia(premium, long, 1<<20, map[string]any{"media_type": "video/mp4", "media_category": "tweet_video",
		"additional_owners": []string{plainID}})
	wantSucceeded(t, s.waitMedia(premium, s.baseURL, id, 2*time.Minute), len(long))
	if d := s.mediaRecord(id).DurationMS; d < 1229_000 || d > 1231_000 {
		t.Errorf("processed duration %d ms, want 1230 s", d)
	}

	refused := s.tweetWithMedia(plain, "longer than my cap", id)
	wantMediaProblem(t, "a default user posting a 20.5-minute video", refused, http.StatusForbidden, "", "20 minutes")
	s.mustTweetWithMedia(premium, "within my cap", id)

	own := s.uploadMedia(plain, long, 1<<20, map[string]any{"media_type": "video/mp4", "media_category": "tweet_video"})
	failed := s.waitMedia(plain, s.baseURL, own, 2*time.Minute)
	info, _ := failed["processing_info"].(map[string]any)
	e, _ := info["error"].(map[string]any)
	if info["state"] != string(storage.MediaFailed) || e["code"] != float64(storage.MediaErrorTooLarge) || e["name"] != "LimitExceeded" {
		t.Errorf("a default user's 20.5-minute upload: processing_info %v, want failed with error {code 2, name LimitExceeded}", info)
	}
	wantMediaProblem(t, "posting media that failed", s.tweetWithMedia(plain, "failed media", own), http.StatusBadRequest, "invalid-request", "media.media_ids")
}

// TestMediaWorkerKilledMidTranscode kills (SIGKILL) a media-only worker
// while ffmpeg transcodes an upload: the media stays in_progress, and a new
// worker (after asynq's lease on the task expired) runs it again from the
// start to succeeded, in two attempts.
func TestMediaWorkerKilledMidTranscode(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for asynq lease recovery (about a minute)")
	}
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	tok := s.demoToken()
	video := ffmpeg(t, t.TempDir(), "transcode.mp4", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
		"-f", "lavfi", "-i", "sine", "-t", "40", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest")
	// The workers' working directories go to a directory of the test's.
	workDir := t.TempDir()
	mediaWorker := []string{"AVIARY_WORKER_QUEUES=media=1", "TMPDIR=" + workDir}
	worker := s.start("worker", mediaWorker)
	id := s.uploadMedia(tok, video, 4<<20, map[string]any{"media_type": "video/mp4"})

	var ffmpegPID int
	deadline := time.Now().Add(60 * time.Second)
	for ffmpegPID == 0 {
		_, info := processingInfo(t, s.mediaStatus(tok, s.baseURL, id))
		if st := storage.MediaState(fmt.Sprint(info["state"])); st.Final() {
			t.Fatalf("media %s ended %s before the worker was killed; make the video longer", id, st)
		} else if st == storage.MediaInProgress {
			ffmpegPID = childNamed(worker.Process.Pid, "ffmpeg")
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ffmpeg transcode of media %s under the worker after 60 s", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // well into the transcode
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	_ = worker.Wait()
	t.Cleanup(func() { killIfRunning(ffmpegPID, "ffmpeg") })
	time.Sleep(time.Second)
	if running(ffmpegPID, "ffmpeg") {
		t.Logf("note: ffmpeg (pid %d) kept running after its worker was SIGKILLed (orphaned transcode)", ffmpegPID)
	}
	_, info := processingInfo(t, s.mediaStatus(tok, s.baseURL, id))
	if info["state"] != string(storage.MediaInProgress) {
		t.Fatalf("media %v after the kill, want in_progress", info)
	}

	s.start("worker", mediaWorker)
	wantSucceeded(t, s.waitMedia(tok, s.baseURL, id, 4*time.Minute), len(video))
	if rec := s.mediaRecord(id); rec.Attempts != 2 || rec.DurationMS < 39_500 || rec.DurationMS > 40_500 {
		t.Errorf("media after recovery: attempts %d, duration %d ms; want 2 attempts and the 40 s video", rec.Attempts, rec.DurationMS)
	}
	s.mustTweetWithMedia(tok, "survived a worker crash", id)
	if left, _ := filepath.Glob(filepath.Join(workDir, "media-"+id+"-*")); len(left) > 0 {
		t.Logf("note: the killed attempt's working directory is left behind: %v", left)
	}
}

// childNamed returns the pid of a child process of parent whose command is
// name, or 0.
func childNamed(parent int, name string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ppid, ok := procStat(pid)
		if ok && ppid == parent && comm == name {
			return pid
		}
	}
	return 0
}

// procStat reads the command name and parent pid of pid.
func procStat(pid int) (comm string, ppid int, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(string(raw[end+1:])) // state, ppid, ...
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return string(raw[open+1 : end]), ppid, err == nil && fields[0] != "Z"
}

// running reports whether pid is alive and still runs name.
func running(pid int, name string) bool {
	comm, _, ok := procStat(pid)
	return ok && comm == name
}

// killIfRunning kills pid (a process the test's own worker started) if it
// still runs name.
func killIfRunning(pid int, name string) {
	if pid > 0 && running(pid, name) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestMediaUploadBadInput sends rows of the docs' bad-input table through
// HTTP: each answer is Problem JSON (type, title, status, detail) naming the
// parameter, and nothing is stored (a refused append leaves the upload
// without bytes).
func TestMediaUploadBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	owner := s.demoToken()
	other := s.userToken("media-other")
	png := pngImage(t, 16, 16)
	base := s.baseURL
	const unknown = "1234567890123"

	wantMediaProblem(t, "initialize with total_bytes 0", s.initMedia(owner, map[string]any{"media_type": "image/png", "total_bytes": 0}),
		http.StatusBadRequest, "invalid-request", "total_bytes")
	wantMediaProblem(t, "initialize of an image over 5 MiB", s.initMedia(owner, map[string]any{"media_type": "image/png", "total_bytes": 5<<20 + 1}),
		http.StatusBadRequest, "invalid-request", "total_bytes")
	wantMediaProblem(t, "initialize of a video type as tweet_image", s.initMedia(owner, map[string]any{"media_type": "video/mp4",
		"media_category": "tweet_image", "total_bytes": 10}), http.StatusBadRequest, "invalid-request", "media_type")

	wantMediaProblem(t, "append to an unknown id", s.appendMedia(owner, base, unknown, 0, png, multipartMediaLast),
		http.StatusNotFound, "resource-not-found", "id", unknown)
	wantMediaProblem(t, "STATUS of an unknown id", s.mediaStatus(owner, base, unknown), http.StatusNotFound, "resource-not-found", "media_id", unknown)
	wantMediaProblem(t, "STATUS without media_id", s.signedAt(owner, base, http.MethodGet, "/2/media/upload?command=STATUS", nil, ""),
		http.StatusBadRequest, "invalid-request", "media_id")

	expired := s.mustInitMedia(owner, map[string]any{"media_type": "image/png", "total_bytes": len(png)})
	s.exec(`UPDATE media SET expires_at = now() - interval '1 second' WHERE id = $1`, expired)
	wantMediaProblem(t, "append to an expired upload", s.appendMedia(owner, base, expired, 0, png, multipartMediaLast),
		http.StatusConflict, "conflict", "expired")

	id := s.mustInitMedia(owner, map[string]any{"media_type": "image/png", "total_bytes": len(png)})
	wantMediaProblem(t, "another user's append", s.appendMedia(other, base, id, 0, png, multipartMediaLast), http.StatusNotFound, "resource-not-found", id)
	wantMediaProblem(t, "another user's finalize", s.finalizeMedia(other, base, id), http.StatusNotFound, "resource-not-found", id)
	wantMediaProblem(t, "another user's STATUS", s.mediaStatus(other, base, id), http.StatusNotFound, "resource-not-found", id)
	wantMediaProblem(t, "STATUS before finalize", s.mediaStatus(owner, base, id), http.StatusConflict, "conflict", "finalize")

	badB64 := []byte(`{"media": "this is not base64!", "segment_index": 0}`)
	wantMediaProblem(t, "append with bad base64", s.signedAt(owner, base, http.MethodPost, "/2/media/upload/"+id+"/append", badB64, "application/json"),
		http.StatusBadRequest, "invalid-request", "media")
	wantMediaProblem(t, "append with segment_index 1000", s.appendMedia(owner, base, id, 1000, png, jsonBase64),
		http.StatusBadRequest, "invalid-request", "segment_index")
	wantMediaProblem(t, "append of a segment over total_bytes", s.appendMedia(owner, base, id, 0, append(png, 0), multipartMediaFirst),
		http.StatusBadRequest, "invalid-request")
	wantMediaProblem(t, "finalize after refused appends only", s.finalizeMedia(owner, base, id), http.StatusBadRequest, "invalid-request",
		fmt.Sprintf("received 0 bytes, but total_bytes is %d", len(png)))

	// A JSON append over the 8 MiB cap: 413 whether its length is declared
	// or it is chunked (the cap is found while reading); so is a multipart
	// body whose declared length is over the cap. A multipart media part of
	// 5 MiB + 1 byte (a body under the cap) is a 400 naming media, found
	// while streaming it; another content type 415.
	big := s.mustInitMedia(owner, map[string]any{"media_type": "video/mp4", "total_bytes": 64 << 20})
	huge, _ := appendBody(jsonBase64, 0, make([]byte, 6<<20+1)) // 8 MiB + base64
	for _, size := range []int64{int64(len(huge)), -1} {
		req, err := http.NewRequest(http.MethodPost, base+"/2/media/upload/"+big+"/append", io.MultiReader(bytes.NewReader(huge)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		wantMediaProblem(t, fmt.Sprintf("a %d-byte JSON append (Content-Length %d)", len(huge), size), s.sendSigned(owner, req), http.StatusRequestEntityTooLarge, "")
	}
	wantMediaProblem(t, "a 9 MiB multipart media part", s.appendMedia(owner, base, big, 0, make([]byte, 9<<20), multipartMediaLast),
		http.StatusRequestEntityTooLarge, "")
	wantMediaProblem(t, "a segment of 5 MiB + 1 byte", s.appendMedia(owner, base, big, 0, make([]byte, 5<<20+1), multipartMediaFirst),
		http.StatusBadRequest, "invalid-request", "media")
	wantMediaProblem(t, "append as text/plain", s.signedAt(owner, base, http.MethodPost, "/2/media/upload/"+big+"/append", []byte("0"), "text/plain"),
		http.StatusUnsupportedMediaType, "")
	wantMediaProblem(t, "finalize after refused appends", s.finalizeMedia(owner, base, big), http.StatusBadRequest, "invalid-request",
		fmt.Sprintf("received 0 bytes, but total_bytes is %d", 64<<20))

	half := len(png) / 2
	s.mustAppend(owner, base, id, 1, png[half:], jsonBase64)
	wantMediaProblem(t, "finalize without segment 0", s.finalizeMedia(owner, base, id), http.StatusBadRequest, "invalid-request", "segments [0] are missing")
	s.mustAppend(owner, base, id, 0, png[:half], multipartMediaFirst)
	if resp := s.finalizeMedia(owner, base, id); resp.Status != http.StatusOK {
		t.Fatalf("finalize: %d %s", resp.Status, resp.Raw)
	}
	wantMediaProblem(t, "append after finalize", s.appendMedia(owner, base, id, 2, png[:1], multipartMediaLast), http.StatusConflict, "conflict", "finalize")
	wantMediaProblem(t, "finalize after finalize", s.finalizeMedia(owner, base, id), http.StatusConflict, "conflict")
	if _, info := processingInfo(t, s.mediaStatus(owner, base, id)); info["state"] != string(storage.MediaPending) {
		t.Errorf("STATUS without a worker: %v, want pending", info)
	}
	wantMediaProblem(t, "posting media that is not processed", s.tweetWithMedia(owner, "too early", id), http.StatusBadRequest, "invalid-request", "media.media_ids")
}

// TestMediaAppendStreamsSegments checks that a multipart append is streamed
// into the blob store as it arrives, not buffered (docs/media-upload.md:
// "Multipart bodies are streamed part by part", memory flat): with the media
// part sent first and the body held open after 3 of its 4 MiB, the local
// driver is already writing the segment's temporary file (tmp/put-*); then
// the rest of the body and segment_index arrive and the append answers 200.
func TestMediaAppendStreamsSegments(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	tok := s.demoToken()
	var blobDir string
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "AVIARY_BLOB_DIR="); ok {
			blobDir = v
		}
	}
	seg := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	id := s.mustInitMedia(tok, map[string]any{"media_type": "video/mp4", "total_bytes": len(seg)})

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, err := http.NewRequest(http.MethodPost, s.baseURL+"/2/media/upload/"+id+"/append", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, tok.token, tok.secret, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		raw    []byte
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := s.client.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, raw, err}
	}()
	part, err := mw.CreateFormFile("media", "blob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(seg[:3<<20]); err != nil {
		t.Fatalf("write the first 3 MiB: %v", err)
	}
	var spooled int64
	for deadline := time.Now().Add(10 * time.Second); spooled < 1<<20 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(blobDir, "tmp", "put-*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				spooled = max(spooled, fi.Size())
			}
		}
	}
	if spooled < 1<<20 {
		t.Errorf("3 MiB of the media part sent, the body still open: the segment's blob is not being written (largest tmp/put-* file %d bytes); the API buffers the multipart body instead of streaming it", spooled)
	}
	if _, err := part.Write(seg[3<<20:]); err != nil {
		t.Fatalf("write the rest: %v", err)
	}
	if err := mw.WriteField("segment_index", "0"); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if a := <-done; a.err != nil || a.status != http.StatusOK {
		t.Fatalf("streamed append: %d %s %v", a.status, a.raw, a.err)
	}
	fin := s.finalizeMedia(tok, s.baseURL, id)
	if data, _ := fin.Body["data"].(map[string]any); fin.Status != http.StatusOK || data["size"] != float64(len(seg)) {
		t.Fatalf("finalize after the streamed append: %d %s", fin.Status, fin.Raw)
	}
}
