package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// row is a record of the test source: it wants its task enqueued unless
// idle.
type row struct {
	id   int
	idle bool
}

// rows is an in-memory Source that records what the sweeper told it.
type rows struct {
	mu        sync.Mutex
	items     []row
	enqueued  []int
	abandoned []int
	swept     []int
}

func (r *rows) Name() string { return "test" }

func (r *rows) Due(ctx context.Context, now time.Time, limit int) ([]row, error) {
	return slices.Clone(r.items[:min(limit, len(r.items))]), nil
}

func (r *rows) Check(ctx context.Context, item row, now time.Time) (*Work, error) {
	if item.idle {
		return nil, nil
	}
	id := fmt.Sprintf("test-%d", item.id)
	return &Work{Task: asynq.NewTask("test:run", nil, asynq.TaskID(id), asynq.Queue("test"), asynq.Retention(time.Hour)),
		Queue: "test", TaskID: id}, nil
}

func (r *rows) Enqueued(ctx context.Context, item row, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueued = append(r.enqueued, item.id)
	return nil
}

func (r *rows) Abandoned(ctx context.Context, item row, info *asynq.TaskInfo, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.abandoned = append(r.abandoned, item.id)
	return nil
}

func (r *rows) Swept(ctx context.Context, items []row, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range items {
		r.swept = append(r.swept, it.id)
	}
	return nil
}

type queueBundle struct {
	opt       asynq.RedisClientOpt
	client    *asynq.Client
	inspector *asynq.Inspector
}

func newQueue(t *testing.T) queueBundle {
	t.Helper()
	addr, db := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: db}
	q := queueBundle{opt: opt, client: asynq.NewClient(opt), inspector: asynq.NewInspector(opt)}
	t.Cleanup(func() { q.client.Close(); q.inspector.Close() })
	return q
}

func (q queueBundle) state(t *testing.T, id int) string {
	t.Helper()
	info, err := q.inspector.GetTaskInfo("test", fmt.Sprintf("test-%d", id))
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return "none"
	}
	if err != nil {
		t.Fatal(err)
	}
	return info.State.String()
}

// TestSweeperTick covers what one tick does with each kind of row: new
// work is enqueued, queued work is only recorded, an archived task is
// handed back, a completed task of an open row is replaced at once, and an
// idle row is left alone; every row is recorded as swept.
func TestSweeperTick(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ctx := t.Context()
	completed := asynq.NewTask("test:run", nil, asynq.TaskID("test-4"), asynq.Queue("test"), asynq.Retention(time.Hour))
	if _, err := q.client.EnqueueContext(ctx, completed); err != nil {
		t.Fatal(err)
	}
	runAll(t, q)
	queued := asynq.NewTask("test:run", nil, asynq.TaskID("test-2"), asynq.Queue("test"))
	archived := asynq.NewTask("test:run", nil, asynq.TaskID("test-3"), asynq.Queue("test"))
	for _, task := range []*asynq.Task{queued, archived} {
		if _, err := q.client.EnqueueContext(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.inspector.ArchiveTask("test", "test-3"); err != nil {
		t.Fatal(err)
	}
	src := &rows{items: []row{{id: 1}, {id: 2}, {id: 3}, {id: 4}, {id: 5, idle: true}}}
	s := &Sweeper[row]{Source: src, Queue: q.client, Inspector: q.inspector, Logger: slog.New(slog.DiscardHandler)}
	if err := s.Tick(ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	if want := []int{1, 2, 4}; !slices.Equal(src.enqueued, want) {
		t.Errorf("enqueued %v, want %v", src.enqueued, want)
	}
	if want := []int{3}; !slices.Equal(src.abandoned, want) {
		t.Errorf("abandoned %v, want %v", src.abandoned, want)
	}
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(src.swept, want) {
		t.Errorf("swept %v, want %v", src.swept, want)
	}
	for id, want := range map[int]string{1: "pending", 2: "pending", 3: "archived", 4: "pending", 5: "none"} {
		if got := q.state(t, id); got != want {
			t.Errorf("task %d is %s, want %s", id, got, want)
		}
	}
}

// runAll runs the queued tasks with a real asynq server until none is
// pending, so they end completed (retained).
func runAll(t *testing.T, q queueBundle) {
	t.Helper()
	srv := asynq.NewServer(q.opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"test": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if info, err := q.inspector.GetQueueInfo("test"); err == nil && info.Pending == 0 && info.Active == 0 && info.Completed > 0 {
			return
		}
	}
	t.Fatal("tasks were not processed")
}

// TestSweeperRoutineLogging: a routine source's enqueues are logged at
// debug level, a recovery source's at info.
func TestSweeperRoutineLogging(t *testing.T) {
	t.Parallel()
	for _, routine := range []bool{false, true} {
		q := newQueue(t)
		var logs strings.Builder
		s := &Sweeper[row]{Source: &rows{items: []row{{id: 1}}}, Queue: q.client, Routine: routine,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		if err := s.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		want := "level=INFO msg=\"task enqueued\""
		if routine {
			want = "level=DEBUG msg=\"task enqueued\""
		}
		if !strings.Contains(logs.String(), want) {
			t.Errorf("routine %v: logs %q lack %q", routine, logs.String(), want)
		}
	}
}
