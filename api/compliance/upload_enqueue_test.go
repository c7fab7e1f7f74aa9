package compliance

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// turnStore answers ComplianceJobTurn; the rest of Store is unused.
type turnStore struct {
	Store
	turn bool
	err  error
}

func (s turnStore) ComplianceJobTurn(context.Context, storage.ComplianceJob) (bool, error) {
	return s.turn, s.err
}

// recordingQueue records the task ids it is handed and answers err.
type recordingQueue struct {
	ids []string
	err error
}

func (q *recordingQueue) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	p, err := tasks.ParseComplianceProcess(t)
	if err != nil {
		return nil, err
	}
	q.ids = append(q.ids, tasks.ComplianceTaskID(p.JobID))
	return &asynq.TaskInfo{}, q.err
}

// TestEnqueueAfterUpload: an uploaded job is enqueued at once when it is its
// turn, under its own task id; a job waiting behind another, a failed turn
// check or a failed enqueue leave it to the sweeper (a conflict is quiet).
func TestEnqueueAfterUpload(t *testing.T) {
	job := storage.ComplianceJob{ID: 42, AppID: 7, Type: storage.ComplianceTypeTweets}
	for _, tt := range []struct {
		name     string
		store    turnStore
		queueErr error
		want     []string
		warns    bool
	}{
		{"its turn", turnStore{turn: true}, nil, []string{"compliance-42"}, false},
		{"waits its turn", turnStore{turn: false}, nil, nil, false},
		{"turn unknown", turnStore{err: errors.New("db down")}, nil, nil, true},
		{"already queued", turnStore{turn: true}, asynq.ErrTaskIDConflict, []string{"compliance-42"}, false},
		{"redis down", turnStore{turn: true}, errors.New("redis down"), []string{"compliance-42"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			q := &recordingQueue{err: tt.queueErr}
			m := &Module{Deps{Store: tt.store, Queue: q, Logger: log}}
			m.enqueue(t.Context(), log, job)
			if strings.Join(q.ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("enqueued %v, want %v", q.ids, tt.want)
			}
			if got := strings.Contains(logs.String(), "level=WARN"); got != tt.warns {
				t.Errorf("warned = %v, want %v: %s", got, tt.warns, logs.String())
			}
		})
	}
	// Without a queue nothing is asked.
	(&Module{Deps{Store: turnStore{err: errors.New("must not be called")}}}).enqueue(t.Context(), slog.Default(), job)
}
