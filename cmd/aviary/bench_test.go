package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// BenchmarkCompliance runs one compliance job per iteration through the real
// stack (API and worker processes, PostgreSQL, Redis, MinIO) and reports ids
// per second from upload to complete, ids per second of the worker's own
// processing, and the worker's peak RSS, for 1,000,000 and 10,000,000 lines.
//
//	go test ./cmd/aviary -run '^$' -bench 'Compliance/lines=1000000$' -benchtime 1x
func BenchmarkCompliance(b *testing.B) {
	for _, lines := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) { benchCompliance(b, lines) })
	}
}

func benchCompliance(b *testing.B, lines int) {
	s := newStack(b, stackOptions{driver: "s3"})
	worker := s.start("worker", nil)
	posts := s.seedPosts(100_000)
	upload, want := s.bulkUpload(posts, lines)
	idleRSS := procStatusKB(b, worker.Process.Pid, "VmRSS")
	b.ResetTimer()
	var total, processing time.Duration
	for i := 0; i < b.N; i++ {
		job := s.createJob("tweets", fmt.Sprintf("bench-%d", i))
		s.upload(job["upload_url"].(string), upload)
		start := time.Now()
		final := s.waitJob(job["id"].(string), 30*time.Minute)
		total += time.Since(start)
		b.StopTimer()
		if final["status"] != storage.JobComplete {
			b.Fatalf("job ended %v", final["status"])
		}
		if got := s.download(final["download_url"].(string)); got != want {
			b.Fatalf("result differs: %d bytes, want %d", len(got), len(want))
		}
		rec := s.jobRecord(job["id"].(string))
		processing += rec.CompletedAt.Sub(*rec.StartedAt)
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N * lines)
	b.ReportMetric(n/total.Seconds(), "ids/s")
	b.ReportMetric(n/processing.Seconds(), "processing-ids/s")
	b.ReportMetric(float64(procStatusKB(b, worker.Process.Pid, "VmHWM"))/1024, "worker-peak-RSS-MB")
	b.ReportMetric(float64(idleRSS)/1024, "worker-idle-RSS-MB")
	b.ReportMetric(float64(len(upload))/1e6, "upload-MB")
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of a process from /proc.
func procStatusKB(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatalf("read /proc status of %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				tb.Fatalf("parse %s %q: %v", field, rest, err)
			}
			return kb
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
