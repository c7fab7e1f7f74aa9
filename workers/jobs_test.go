package workers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

type countedJob struct {
	queue  string
	failed bool
}

type jobList struct{ runs []countedJob }

func (j *jobList) Job(queue string, failed bool, _ time.Time) {
	j.runs = append(j.runs, countedJob{queue, failed})
}

// TestObserveCountsJobs: every run is counted for the console's charts
// with its queue and whether it failed.
func TestObserveCountsJobs(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want countedJob
	}{
		{"processed", nil, countedJob{"", false}},
		{"failed", errors.New("boom"), countedJob{"", true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &jobList{}
			h := observe(slog.New(slog.NewTextHandler(io.Discard, nil)), newTaskMetrics(prometheus.NewRegistry()), jobs,
				asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return tt.err }))
			_ = h.ProcessTask(context.Background(), asynq.NewTask("test:x", nil))
			if len(jobs.runs) != 1 || jobs.runs[0] != tt.want {
				t.Errorf("runs %+v, want %+v", jobs.runs, tt.want)
			}
		})
	}
}
