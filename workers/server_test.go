package workers

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/tasks"
)

// TestNewServerRunsDeferredTasksAgain runs a task on the server NewServer
// builds that is deferred twice (tasks.ErrDeferred: no room, not a
// failure) and then succeeds: it runs three times and completes without
// spending its single retry. The gaps between the runs are printed: with
// DelayedTaskCheckInterval at 1 s a deferred run comes back after about
// 1-3 s (asynq's default forwarder made it 5 s rounds).
func TestNewServerRunsDeferredTasksAgain(t *testing.T) {
	t.Parallel()
	addr, db := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: db}
	var mu sync.Mutex
	var runs []time.Time
	done := make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc("test:deferred", func(context.Context, *asynq.Task) error {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, time.Now())
		if len(runs) < 3 {
			return tasks.ErrDeferred
		}
		close(done)
		return nil
	})
	srv := NewServer(opt, ServerConfig{Queues: map[string]int{"default": 1}, Concurrency: 1,
		ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	if _, err := client.Enqueue(asynq.NewTask("test:deferred", nil), asynq.MaxRetry(1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the deferred task did not complete; runs at %v", runs)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(runs); i++ {
		t.Logf("run %d came %v after run %d", i+1, runs[i].Sub(runs[i-1]).Round(time.Millisecond), i)
	}
}
