package opsredis

import (
	"context"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestRecorderRetention: a flush writes the gathered counts and errors;
// each app keeps its newest MaxErrors errors; the minute buckets and the
// error lists carry their TTL; Clear removes everything.
func TestRecorderRetention(t *testing.T) {
	rc, prefix := storagetest.RedisPrefix(t)
	ctx := context.Background()
	s := New(rc, prefix)
	rec := NewRecorder(s, nil)
	at := time.Unix(1_700_000_000/60*60, 0).UTC() // a minute's start
	for i := range MaxErrors + 5 {
		rec.Error(storage.APIError{At: at.Add(time.Duration(i) * time.Millisecond), AppID: 1, Status: 404, Path: "/x"})
		if i%100 == 0 { // several flushes, as in Run
			if err := rec.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	rec.Request(1, 204, at)
	rec.Request(1, 302, at)
	rec.Request(2, 500, at.Add(time.Minute))
	rec.Job("media", true, at)
	rec.Job("media", false, at)
	rec.Job("compliance", false, at.Add(time.Minute))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	errs, err := s.Errors(ctx, []int64{1}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != MaxErrors || !errs[0].At.Equal(at.Add((MaxErrors+4)*time.Millisecond)) {
		t.Errorf("kept %d, newest %v", len(errs), errs[0].At)
	}
	if ttl := rc.TTL(ctx, s.errKey(1)).Val(); ttl <= ErrorTTL-time.Minute || ttl > ErrorTTL {
		t.Errorf("error list TTL %v", ttl)
	}
	if ttl := rc.TTL(ctx, s.reqKey("1", at.Unix()/60)).Val(); ttl <= 0 || ttl > MinuteTTL {
		t.Errorf("minute TTL %v", ttl)
	}
	tests := []struct {
		name string
		apps []int64
		want [][4]int64
	}{
		{"app 1", []int64{1}, [][4]int64{{1, 1, 0, 0}, {0, 0, 0, 0}}},
		{"app 2", []int64{2}, [][4]int64{{0, 0, 0, 0}, {0, 0, 0, 1}}},
		{"all", nil, [][4]int64{{1, 1, 0, 0}, {0, 0, 0, 1}}},
		{"none", []int64{}, [][4]int64{{}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mins, err := s.Requests(ctx, tt.apps, at, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range mins {
				if m.ByClass != tt.want[i] || !m.Minute.Equal(at.Add(time.Duration(i)*time.Minute)) {
					t.Errorf("minute %d: %+v, want %v", i, m, tt.want[i])
				}
			}
		})
	}
	jobs, err := s.Jobs(ctx, at, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.JobMinute{{Minute: at, Queue: "media", Processed: 2, Failed: 1}, {Minute: at.Add(time.Minute), Queue: "compliance", Processed: 1}}
	if len(jobs) != 2 || jobs[0] != want[0] || jobs[1] != want[1] {
		t.Errorf("jobs %+v, want %+v", jobs, want)
	}
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.Keys(ctx, prefix+"*").Val()); n != 0 {
		t.Errorf("%d keys left after Clear", n)
	}
}

// BenchmarkRecorderRequest is the cost of counting one answer.
func BenchmarkRecorderRequest(b *testing.B) {
	rec := NewRecorder(New(nil, ""), nil)
	at := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec.Request(7, 200, at)
		}
	})
}
