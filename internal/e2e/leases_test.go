package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestMediaRedisEmptiedMidTranscode empties Redis while a video transcodes
// under one of two media workers: the sweepers see the media in_progress
// with no task, but its run holds the task's lease, so the media is not
// enqueued again. No second ffmpeg ever runs beside the first, and the
// media succeeds in one attempt (docs/outages.md, task leases).
func TestMediaRedisEmptiedMidTranscode(t *testing.T) {
	if testing.Short() {
		t.Skip("transcodes a 40 s video")
	}
	t.Parallel()
	addr, redisDB := storagetest.RedisDB(t)
	s := newStackWithRedisDB(t, stackOptions{driver: "local"}, redisDB)
	tok := s.demoToken()
	video := ffmpeg(t, t.TempDir(), "transcode.mp4", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
		"-f", "lavfi", "-i", "sine", "-t", "40", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest")
	mediaWorker := []string{"AVIARY_WORKER_QUEUES=media=1", "TMPDIR=" + t.TempDir()}
	workers := []int{s.start("worker", mediaWorker).Process.Pid, s.start("worker", mediaWorker).Process.Pid}
	ffmpegs := func() []int {
		var pids []int
		for _, w := range workers {
			if pid := childNamed(w, "ffmpeg"); pid != 0 {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	id := s.uploadMedia(tok, video, 4<<20, map[string]any{"media_type": "video/mp4"})

	deadline := time.Now().Add(60 * time.Second)
	for len(ffmpegs()) == 0 {
		_, info := processingInfo(t, s.mediaStatus(tok, s.baseURL, id))
		if st := storage.MediaState(fmt.Sprint(info["state"])); st.Final() {
			t.Fatalf("media %s ended %s before Redis was emptied; make the video longer", id, st)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ffmpeg transcode of media %s after 60 s", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: redisDB})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.FlushDB(t.Context()).Err(); err != nil {
		t.Fatalf("empty Redis: %v", err)
	}
	// Many sweep ticks (AVIARY_RECONCILE_INTERVAL=200ms) while it transcodes.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if pids := ffmpegs(); len(pids) > 1 {
			t.Fatalf("two ffmpeg runs at once after Redis was emptied: %v", pids)
		}
	}
	wantSucceeded(t, s.waitMedia(tok, s.baseURL, id, 4*time.Minute), len(video))
	if rec := s.mediaRecord(id); rec.Attempts != 1 {
		t.Errorf("media processed in %d attempts, want 1: the sweeper ran it again while its run lived", rec.Attempts)
	}
}
