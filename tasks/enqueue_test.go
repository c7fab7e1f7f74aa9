package tasks

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
)

// queue answers err and keeps the context it was handed.
type queue struct {
	err    error
	ctxErr error
	n      int
}

func (q *queue) EnqueueContext(ctx context.Context, _ *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.n++
	q.ctxErr = ctx.Err()
	return &asynq.TaskInfo{}, q.err
}

// TestEnqueueRecorded: enqueue-after-commit hands the task over even when
// the request that recorded it is gone, takes a task id conflict as done,
// and only logs any other failure (the sweeper enqueues the work).
func TestEnqueueRecorded(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	build := func() (*asynq.Task, error) { return AudienceBatch.New("b1") }
	tests := []struct {
		name    string
		q       *queue
		task    func() (*asynq.Task, error)
		wantLog string
	}{
		{"queued", &queue{}, build, ""},
		{"already queued", &queue{err: asynq.ErrTaskIDConflict}, build, ""},
		{"redis down", &queue{err: errors.New("connection refused")}, build, "enqueue batch; the sweeper will enqueue it"},
		{"no task", &queue{}, func() (*asynq.Task, error) { return nil, errors.New("encode") }, "encode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			EnqueueRecorded(gone, tc.q, slog.New(slog.NewTextHandler(&out, nil)), "batch", tc.task, "batch_id", "b1")
			if tc.q.ctxErr != nil {
				t.Errorf("enqueued with a done context: %v", tc.q.ctxErr)
			}
			if got := out.String(); (tc.wantLog == "") != (got == "") || !strings.Contains(got, tc.wantLog) {
				t.Errorf("log %q, want %q", got, tc.wantLog)
			}
		})
	}
	EnqueueRecorded(context.Background(), nil, nil, "batch", build) // no queue: nothing to do
}

// TestBatchTask: a kind's task carries its id, queue and payload.
func TestBatchTask(t *testing.T) {
	task, err := DoNotReachBatch.New("b7")
	if err != nil || task.Type() != TypeDoNotReachApply {
		t.Fatalf("task %v, %v", task, err)
	}
	if id := DoNotReachBatch.TaskID("b7"); id != "donotreach-b7" {
		t.Errorf("task id %q", id)
	}
	if p, err := DoNotReachBatch.Parse(task); err != nil || p.BatchID != "b7" {
		t.Errorf("parse = %+v, %v", p, err)
	}
	if _, err := AudienceBatch.Parse(asynq.NewTask(TypeAudienceApplyBatch, []byte(`{}`))); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("payload without id: %v, want SkipRetry", err)
	}
}
