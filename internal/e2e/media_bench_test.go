package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/validation"
)

// BenchmarkMediaUpload measures chunked media upload through the API
// (docs/benchmarks.md, "Media upload"): one upload of BENCH_MEDIA_MIB MiB
// (256 by default, 1024 with BENCH_FULL=1) in 5 MiB multipart segments with
// up to BENCH_MEDIA_INFLIGHT (4) appends in flight, timed from the start of
// initialize to finalize's answer; then, in the same run, a direct PUT of
// the same bytes to the same blob store through a presigned URL (the local
// driver's /blobs/ endpoint, or MinIO). It reports both MB/s (1 MB = 10^6
// bytes), their ratio and the API process's peak RSS (VmHWM) during the
// API upload; figures, never asserted. No worker runs: the upload ends at
// finalize.
//
//	go test ./internal/e2e -run '^$' -bench 'MediaUpload' -benchtime 1x
func BenchmarkMediaUpload(b *testing.B) {
	for _, driver := range []string{"local", "s3"} {
		b.Run("driver="+driver, func(b *testing.B) { benchMediaUpload(b, driver) })
	}
}

// benchMediaSegment is the segment size: the largest append takes.
const benchMediaSegment = 5 << 20

func benchMediaUpload(b *testing.B, driver string) {
	defMiB := 256
	if os.Getenv("BENCH_FULL") == "1" {
		defMiB = 1024
	}
	total := int64(benchInt(b, "BENCH_MEDIA_MIB", defMiB)) << 20
	inflight := benchInt(b, "BENCH_MEDIA_INFLIGHT", 4)
	// Limits evaluated as in production, scaled so none refuses.
	s := newStack(b, stackOptions{driver: driver, env: benchAviaryEnv("AVIARY_RATE_LIMIT_SCALE=1000")})
	u := &benchUploader{s: s, tok: s.demoToken(), client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: inflight}}}
	// The bytes: one random 5 MiB block, repeated (content does not matter
	// to the API or the store, and the client stays small).
	block := make([]byte, benchMediaSegment)
	rng := rand.NewChaCha8([32]byte{7})
	_, _ = rng.Read(block)

	apiPid := s.api.Process.Pid
	idle := procStatusKB(b, apiPid, "VmRSS")
	b.ResetTimer()
	var aviary, direct time.Duration
	var hwm, maxRSS int64
	for i := 0; i < b.N; i++ {
		resetPeakRSS(apiPid) // VmHWM from here on (best effort)
		stop := sampleRSS(apiPid, &maxRSS)
		start := time.Now()
		id, err := u.upload(total, block, inflight)
		elapsed := time.Since(start)
		stop()
		if err != nil {
			b.Fatal(err)
		}
		aviary += elapsed
		// Before the direct PUT: with the local driver the API process
		// serves it too.
		hwm = max(hwm, procStatusKB(b, apiPid, "VmHWM"))
		b.StopTimer()
		u.check(b, id, total)
		b.StartTimer()

		key := fmt.Sprintf("bench/direct-%d-%d", i, time.Now().UnixNano())
		d, err := directPut(s.blobs(b), u.client, key, total, block)
		if err != nil {
			b.Fatal(err)
		}
		direct += d
		b.StopTimer()
		if info, err := s.blobs(b).Stat(context.Background(), key); err != nil || info.Size != total {
			b.Fatalf("direct object %s: %+v, %v; want %d bytes", key, info, err, total)
		}
		_ = s.blobs(b).Delete(context.Background(), key)
		b.StartTimer()
	}
	b.StopTimer()
	mb := float64(total) * float64(b.N) / 1e6
	b.ReportMetric(mb/aviary.Seconds(), "MB/s")
	b.ReportMetric(mb/direct.Seconds(), "direct-MB/s")
	b.ReportMetric(direct.Seconds()/aviary.Seconds(), "ratio")
	b.ReportMetric(float64(max(hwm, maxRSS))/1024, "api-peak-RSS-MB")
	b.ReportMetric(float64(idle)/1024, "api-idle-RSS-MB")
	b.ReportMetric(float64(total>>20), "upload-MiB")
	b.ReportMetric(aviary.Seconds()/float64(b.N), "upload-s")
	b.ReportMetric(direct.Seconds()/float64(b.N), "direct-s")
}

// resetPeakRSS resets pid's VmHWM to its current RSS (Linux clear_refs 5);
// where that is not allowed the peak covers the process's whole life.
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// benchUploader sends the chunked protocol from goroutines (errors are
// returned, not reported through testing.B).
type benchUploader struct {
	s      *stack
	tok    userToken
	client *http.Client
}

// do signs and sends a request and returns its status and body.
func (u *benchUploader) do(method, path string, body io.Reader, size int64, contentType string) (int, []byte, error) {
	req, err := http.NewRequest(method, u.s.baseURL+path, body)
	if err != nil {
		return 0, nil, err
	}
	req.ContentLength = size
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c := u.s.creds
	if err := auth.SignRequest(req, u.s.baseURL, c.ConsumerKey, c.ConsumerSecret, u.tok.token, u.tok.secret, time.Now(), ""); err != nil {
		return 0, nil, err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// upload runs initialize, the appends (inflight at a time) and finalize,
// and returns the media id.
func (u *benchUploader) upload(total int64, block []byte, inflight int) (string, error) {
	init, _ := json.Marshal(map[string]any{"media_type": "video/mp4", "media_category": "tweet_video", "total_bytes": total})
	status, raw, err := u.do(http.MethodPost, "/2/media/upload/initialize", bytes.NewReader(init), int64(len(init)), "application/json")
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("initialize: %d %s %v", status, raw, err)
	}
	var created struct{ Data struct{ ID string } }
	if err := json.Unmarshal(raw, &created); err != nil || created.Data.ID == "" {
		return "", fmt.Errorf("initialize answer %s: %v", raw, err)
	}
	id := created.Data.ID
	segments := int((total + benchMediaSegment - 1) / benchMediaSegment)
	next := make(chan int)
	errs := make(chan error, inflight)
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idx := range next {
				n := min(int64(benchMediaSegment), total-int64(idx)*benchMediaSegment)
				if err := u.appendSegment(id, idx, block[:n]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var failed error
feed:
	for idx := range segments {
		select {
		case next <- idx:
		case failed = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if failed == nil && len(errs) > 0 {
		failed = <-errs
	}
	if failed != nil {
		return "", failed
	}
	status, raw, err = u.do(http.MethodPost, "/2/media/upload/"+id+"/finalize", nil, 0, "")
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("finalize: %d %s %v", status, raw, err)
	}
	return id, nil
}

// appendSegment streams one multipart append (segment_index, then the
// media part) without copying the segment.
func (u *benchUploader) appendSegment(id string, idx int, data []byte) error {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	_ = mw.WriteField("segment_index", strconv.Itoa(idx))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="media"; filename="blob"`)
	h.Set("Content-Type", "application/octet-stream")
	if _, err := mw.CreatePart(h); err != nil {
		return err
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	size := int64(head.Len()) + int64(len(data)) + int64(len(tail))
	body := io.MultiReader(bytes.NewReader(head.Bytes()), bytes.NewReader(data), bytes.NewReader([]byte(tail)))
	status, raw, err := u.do(http.MethodPost, "/2/media/upload/"+id+"/append", body, size, mw.FormDataContentType())
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("append %d: %d %s %v", idx, status, raw, err)
	}
	return nil
}

// check verifies, outside the timed part, that the API stored the upload:
// STATUS says pending with the declared size, and the newest copy of every
// segment is recorded.
func (u *benchUploader) check(b *testing.B, id string, total int64) {
	b.Helper()
	data, info := processingInfo(b, u.s.mediaStatus(u.tok, u.s.baseURL, id))
	if data["size"] != float64(total) || info["state"] != "pending" {
		b.Fatalf("STATUS after the upload: %v", data)
	}
	n, _ := validation.ParseID(id)
	segs, err := u.s.db.MediaSegments(context.Background(), n)
	if err != nil {
		b.Fatal(err)
	}
	var sum int64
	for _, seg := range segs {
		sum += seg.Size
	}
	if want := (total + benchMediaSegment - 1) / benchMediaSegment; int64(len(segs)) != want || sum != total {
		b.Fatalf("stored %d segments of %d bytes in all, want %d of %d", len(segs), sum, want, total)
	}
}

// blockReader repeats block until total bytes were read.
type blockReader struct {
	block []byte
	left  int64
	off   int
}

func (r *blockReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(int64(len(p)), r.left)], r.block[r.off:])
	r.off = (r.off + n) % len(r.block)
	r.left -= int64(n)
	return n, nil
}

// directPut PUTs total bytes (block repeated, the API upload's bytes) to
// key through a presigned URL of store and returns how long it took.
func directPut(store interface {
	PresignPut(context.Context, string, time.Duration) (string, error)
}, client *http.Client, key string, total int64, block []byte) (time.Duration, error) {
	url, err := store.PresignPut(context.Background(), key, time.Hour)
	if err != nil {
		return 0, fmt.Errorf("presign %s: %w", key, err)
	}
	start := time.Now()
	req, err := http.NewRequest(http.MethodPut, url, &blockReader{block: block, left: total})
	if err != nil {
		return 0, err
	}
	req.ContentLength = total
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("direct PUT: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	elapsed := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		return 0, errors.New("direct PUT: " + resp.Status + " " + string(raw))
	}
	return elapsed, nil
}
