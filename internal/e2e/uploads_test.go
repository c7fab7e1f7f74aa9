package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TestComplianceUploadLifecycle drives the upload URL through its life on
// both blob drivers (docs/compliance-upload-gateway.md): it takes one upload
// while the job is created, refuses later and concurrent ones with 409,
// refuses bodies over AVIARY_COMPLIANCE_MAX_UPLOAD with 413, the result is
// served as JSON lines, uploads and results are deleted after their
// retention, and the upload and /blobs/ routes are rate limited per job.
func TestComplianceUploadLifecycle(t *testing.T) {
	for _, driver := range []string{"local", "s3"} {
		t.Run(driver, func(t *testing.T) {
			s := newStack(t, stackOptions{driver: driver, workers: 1})
			w := buildWorld(s)
			t.Run("upload after processing started", func(t *testing.T) { checkUploadAfterStart(t, s, w) })
			t.Run("concurrent uploads", func(t *testing.T) { checkConcurrentUploads(t, s, w) })
			t.Run("upload over the cap", func(t *testing.T) { checkUploadCap(t, s, w) })
			t.Run("result content type", func(t *testing.T) { checkResultContentType(t, s, w) })
			t.Run("retention", func(t *testing.T) { checkRetention(t, s, w) })
			t.Run("rate limits per job", func(t *testing.T) { checkUploadRateLimits(t, s, driver) })
		})
	}
}

// checkUploadAfterStart: once the job has left created, its upload URL
// refuses a new file with 409 instead of silently replacing the upload.
func checkUploadAfterStart(t *testing.T, s *stack, w world) {
	deleted := s.mustPost(w.posts["alice-deleted"])
	body := ids.Format(deleted.ID) + "\n"
	job, result := s.runJob("tweets", body)
	want := resultLine(deleted.ID, deleted.CreatedAt, *deleted.DeletedAt, "deleted") + "\n"
	if result != want {
		t.Fatalf("result %q, want %q", result, want)
	}
	again := s.put(job["upload_url"].(string), strings.NewReader("123\n"), 4)
	wantProblem(t, again, http.StatusConflict, "already")
	rec := s.jobRecord(job["id"].(string))
	if got := s.readBlob(t, rec.UploadKey); got != body {
		t.Errorf("stored upload after the refused PUT = %q, want the original %q", got, body)
	}
	if got := s.download(job["download_url"].(string)); got != want {
		t.Errorf("result after the refused PUT = %q, want %q", got, want)
	}
}

// checkConcurrentUploads sends a second PUT while the first is still
// streaming: exactly one wins (the first), the other gets 409, and the job
// processes the bytes that were stored.
func checkConcurrentUploads(t *testing.T, s *stack, w world) {
	deleted := s.mustPost(w.posts["alice-deleted"])
	winner := "123\n" + ids.Format(deleted.ID) + "\n"
	loser := ids.Format(w.posts["alice"]) + "\n"
	job := s.createJob("tweets", "concurrent")
	uploadURL := job["upload_url"].(string)

	pr, pw := io.Pipe()
	first := make(chan response, 1)
	go func() { first <- s.putAsync(uploadURL, pr) }()
	if _, err := pw.Write([]byte(winner[:4])); err != nil { // the server is reading the first PUT
		t.Fatalf("write first half: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	second := s.put(uploadURL, strings.NewReader(loser), int64(len(loser)))
	if _, err := pw.Write([]byte(winner[4:])); err != nil {
		t.Fatalf("write second half: %v", err)
	}
	pw.Close()
	firstResp := <-first
	if firstResp.Status != http.StatusOK {
		t.Fatalf("first (streaming) PUT: %d %s, want 200", firstResp.Status, firstResp.Raw)
	}
	wantProblem(t, second, http.StatusConflict, "in progress")

	final := s.waitJob(job["id"].(string), 60*time.Second)
	if final["status"] != string(storage.JobComplete) {
		t.Fatalf("job ended %v", final)
	}
	rec := s.jobRecord(job["id"].(string))
	stored := s.readBlob(t, rec.UploadKey)
	if stored != winner {
		t.Fatalf("stored upload %q, want the winning PUT's %q", stored, winner)
	}
	want := resultLine(deleted.ID, deleted.CreatedAt, *deleted.DeletedAt, "deleted") + "\n"
	if got := s.download(final["download_url"].(string)); got != want {
		t.Fatalf("result %q, want %q (the stored upload's)", got, want)
	}
}

// checkUploadCap runs an API replica with a 1 KiB upload cap: a larger body
// is refused with 413 whether its length is declared or not, and the job
// still takes a later upload within the cap.
func checkUploadCap(t *testing.T, s *stack, w world) {
	base := s.replica(t, "AVIARY_COMPLIANCE_MAX_UPLOAD=1KiB")
	job := s.createJob("tweets", "capped")
	uploadURL := rebase(t, job["upload_url"].(string), base)
	big := strings.Repeat("1234567890\n", 200) // 2200 bytes
	wantProblem(t, s.put(uploadURL, strings.NewReader(big), int64(len(big))), http.StatusRequestEntityTooLarge, "1024 bytes")
	wantProblem(t, s.put(uploadURL, io.MultiReader(strings.NewReader(big)), -1), http.StatusRequestEntityTooLarge, "1024 bytes")
	if st := s.jobRecord(job["id"].(string)).Status; st != storage.JobCreated {
		t.Fatalf("job %s after refused uploads, want created", st)
	}
	deleted := s.mustPost(w.posts["alice-deleted"])
	if r := s.put(uploadURL, strings.NewReader(ids.Format(deleted.ID)+"\n"), -1); r.Status != http.StatusOK {
		t.Fatalf("upload within the cap after refused ones: %d %s", r.Status, r.Raw)
	}
	final := s.waitJob(job["id"].(string), 60*time.Second)
	want := resultLine(deleted.ID, deleted.CreatedAt, *deleted.DeletedAt, "deleted") + "\n"
	if final["status"] != string(storage.JobComplete) || s.download(final["download_url"].(string)) != want {
		t.Fatalf("job after the refused uploads: %v", final)
	}
}

// checkResultContentType: a plain GET of download_url is served as JSON
// lines, not as application/json (a one-line result would otherwise be
// parsed as one object by clients that go by the content type).
func checkResultContentType(t *testing.T, s *stack, w world) {
	deleted := s.mustPost(w.posts["alice-deleted"])
	job, _ := s.runJob("tweets", ids.Format(deleted.ID)+"\n")
	resp, err := s.client.Get(job["download_url"].(string))
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	resp.Body.Close()
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || err != nil || mt != "application/x-ndjson" {
		t.Fatalf("download: %d Content-Type %q, want 200 application/x-ndjson", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// checkRetention: a complete job's upload and result are deleted once its
// download URL expired (a GET of the URL then answers 404), a failed job's
// upload soon after it failed.
func checkRetention(t *testing.T, s *stack, w world) {
	deleted := s.mustPost(w.posts["alice-deleted"])
	done, _ := s.runJob("tweets", ids.Format(deleted.ID)+"\n")
	kept, _ := s.runJob("tweets", ids.Format(deleted.ID)+"\n")
	doneRec := s.jobRecord(done["id"].(string))
	s.exec(`UPDATE compliance_jobs SET download_expires_at = now() - interval '1 second' WHERE id = $1`, doneRec.ID)

	failed := s.createJob("users", "retention-failed")
	s.upload(failed["upload_url"].(string), "\x1f\x8b\x08\x00binary")
	if final := s.waitJob(failed["id"].(string), 30*time.Second); final["status"] != string(storage.JobFailed) {
		t.Fatalf("gzip upload: job %v, want failed", final["status"])
	}
	failedRec := s.jobRecord(failed["id"].(string))

	s.waitGone(t, doneRec.UploadKey, doneRec.ResultKey, failedRec.UploadKey)
	if code := s.status(done["download_url"].(string)); code != http.StatusNotFound && code != http.StatusForbidden {
		t.Errorf("GET of the expired job's download_url: %d, want 404 or 403", code)
	}
	keptRec := s.jobRecord(kept["id"].(string))
	for _, key := range []string{keptRec.UploadKey, keptRec.ResultKey} {
		if _, err := s.blobs(t).Stat(context.Background(), key); err != nil {
			t.Errorf("blob %s of a job whose download URL is still valid: %v", key, err)
		}
	}
	if code := s.status(kept["download_url"].(string)); code != http.StatusOK {
		t.Errorf("GET of a valid download_url after the retention run: %d", code)
	}
}

// checkUploadRateLimits runs an API replica whose limits are scaled down to
// one upload request and three /blobs/ requests per job and window: the
// next request for the same job gets 429, another job is not affected.
func checkUploadRateLimits(t *testing.T, s *stack, driver string) {
	base := s.replica(t, "AVIARY_RATE_LIMIT_SCALE=0.02")
	a, b := s.createJob("users", "limited-a"), s.createJob("users", "limited-b")
	upA, upB := rebase(t, a["upload_url"].(string), base), rebase(t, b["upload_url"].(string), base)
	if r := s.put(upA, strings.NewReader("1\n"), -1); r.Status != http.StatusOK {
		t.Fatalf("first upload of job a: %d %s", r.Status, r.Raw)
	}
	wantProblem(t, s.put(upA, strings.NewReader("1\n"), -1), http.StatusTooManyRequests, "")
	if r := s.put(upB, strings.NewReader("1\n"), -1); r.Status != http.StatusOK {
		t.Errorf("upload of job b after job a's limit: %d %s", r.Status, r.Raw)
	}
	if driver != "local" {
		return // downloads are served by the S3 server, not by Aviary
	}
	downA, downB := rebase(t, a["download_url"].(string), base), rebase(t, b["download_url"].(string), base)
	for i := range 3 {
		if code := s.status(downA); code == http.StatusTooManyRequests {
			t.Fatalf("download %d of job a: 429 before the limit", i+1)
		}
	}
	if code := s.status(downA); code != http.StatusTooManyRequests {
		t.Errorf("fourth download of job a: %d, want 429", code)
	}
	if code := s.status(downB); code == http.StatusTooManyRequests {
		t.Errorf("download of job b after job a's limit: 429")
	}
}

// replica starts another API process of the stack with extraEnv and returns
// its base URL.
func (s *stack) replica(t *testing.T, extraEnv ...string) string {
	t.Helper()
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	s.start("api", append([]string{fmt.Sprintf("AVIARY_HTTP_ADDR=127.0.0.1:%d", port), "AVIARY_SANDBOX_ADDR=off"}, extraEnv...))
	waitStatus(t, base+"/readyz", http.StatusOK)
	return base
}

// rebase points raw (a URL the stack handed out) at another replica.
func rebase(t *testing.T, raw, base string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	b, _ := url.Parse(base)
	u.Scheme, u.Host = b.Scheme, b.Host
	return u.String()
}

// put sends a PUT of body to url; size -1 sends it chunked.
func (s *stack) put(url string, body io.Reader, size int64) response {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		s.t.Fatalf("build upload: %v", err)
	}
	req.ContentLength = size
	if size < 0 {
		req.ContentLength = -1
	}
	req.Header.Set("Content-Type", "text/plain")
	return s.send(req)
}

// putAsync is put for a goroutine: failures are returned as status 0.
func (s *stack) putAsync(url string, body io.Reader) response {
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		return response{Raw: []byte(err.Error())}
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := s.client.Do(req)
	if err != nil {
		return response{Raw: []byte(err.Error())}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
}

// status is the HTTP status of a plain GET of url.
func (s *stack) status(url string) int {
	s.t.Helper()
	resp, err := s.client.Get(url)
	if err != nil {
		s.t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// wantProblem checks a Problem JSON answer with status whose detail
// mentions detail.
func wantProblem(t *testing.T, r response, status int, detail string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d %s, want %d", r.Status, r.Raw, status)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	if got, _ := r.Body["detail"].(string); !strings.Contains(got, detail) {
		t.Errorf("problem detail %q, want it to mention %q", got, detail)
	}
}

var (
	blobsMu    sync.Mutex
	blobStores = map[*stack]blob.Store{}
)

// blobs opens the stack's blob store the way its processes do.
func (s *stack) blobs(t testing.TB) blob.Store {
	t.Helper()
	blobsMu.Lock()
	defer blobsMu.Unlock()
	if st, ok := blobStores[s]; ok {
		return st
	}
	env := map[string]string{}
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var st blob.Store
	var err error
	if env["AVIARY_BLOB_DRIVER"] == "s3" {
		st, err = s3.New(context.Background(), s3.Options{Endpoint: env["AVIARY_S3_ENDPOINT"], Bucket: env["AVIARY_S3_BUCKET"],
			Region: env["AVIARY_S3_REGION"], AccessKey: env["AVIARY_S3_ACCESS_KEY"], SecretKey: env["AVIARY_S3_SECRET_KEY"], PathStyle: true})
	} else {
		st, err = local.New(local.Options{Dir: env["AVIARY_BLOB_DIR"], BaseURL: s.baseURL})
	}
	if err != nil {
		t.Fatalf("open the stack's blob store: %v", err)
	}
	blobStores[s] = st
	s.t.Cleanup(func() {
		blobsMu.Lock()
		delete(blobStores, s)
		blobsMu.Unlock()
	})
	return st
}

// readBlob returns the object at key.
func (s *stack) readBlob(t *testing.T, key string) string {
	t.Helper()
	r, _, err := s.blobs(t).Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get blob %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read blob %s: %v", key, err)
	}
	return string(b)
}

// waitGone waits until none of keys exists.
func (s *stack) waitGone(t *testing.T, keys ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, key := range keys {
		for {
			_, err := s.blobs(t).Stat(context.Background(), key)
			if errors.Is(err, blob.ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatalf("stat %s: %v", key, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("blob %s still stored 30s after its retention ended", key)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
