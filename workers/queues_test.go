package workers

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestKeepQueuesListed: after Redis lost its data, a long-lived asynq
// client enqueues without listing its queue again and the inspector cannot
// find the task; KeepQueuesListed lists it again within one interval.
func TestKeepQueuesListed(t *testing.T) {
	addr, db := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: db}
	client := asynq.NewClient(opt)
	defer client.Close()
	inspector := asynq.NewInspector(opt)
	defer inspector.Close()
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer rc.Close()
	ctx := t.Context()

	if _, err := client.EnqueueContext(ctx, asynq.NewTask("test:a", nil, asynq.Queue("media"), asynq.TaskID("a"))); err != nil {
		t.Fatal(err)
	}
	// Redis loses the queue set (as when it loses its data).
	if err := rc.Del(ctx, asynqQueuesKey).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.EnqueueContext(ctx, asynq.NewTask("test:b", nil, asynq.Queue("media"), asynq.TaskID("b"))); err != nil {
		t.Fatal(err)
	}
	if _, err := inspector.GetTaskInfo("media", "b"); err == nil {
		t.Fatal("the inspector found the task although its queue is not listed: the scenario does not hold")
	}

	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		KeepQueuesListed(run, rc, []string{"media", "default"}, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if info, err := inspector.GetTaskInfo("media", "b"); err == nil && info.State == asynq.TaskStatePending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task's queue was not listed again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	listed, err := rc.SMembers(ctx, asynqQueuesKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, []string{"default", "media"}) {
		t.Errorf("listed queues %v, want [default media]", listed)
	}
}
