package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Sweep is the media sweep source: each tick it has the task of every
// finalized media not processed yet enqueued again (the API's enqueue
// failed, or Redis lost the task), fails media whose task was archived,
// and removes uploads that were never finalized once their session
// expired (records, then segment objects).
type Sweep struct {
	Store  SweepStore
	Blobs  blob.Store
	Logger *slog.Logger
}

var _ sweep.Source[storage.Media] = (*Sweep)(nil)

// Name implements sweep.Source.
func (s *Sweep) Name() string { return "media" }

// Due implements sweep.Source: pending and in-progress media, and expired
// uploads, least recently swept first.
func (s *Sweep) Due(ctx context.Context, now time.Time, limit int) ([]storage.Media, error) {
	return s.Store.MediaDue(ctx, now, limit)
}

// Check implements sweep.Source.
func (s *Sweep) Check(ctx context.Context, m storage.Media, now time.Time) (*sweep.Work, error) {
	switch m.State {
	case storage.MediaPending, storage.MediaInProgress:
		return work(m.ID)
	case storage.MediaUploading:
		if now.Before(m.ExpiresAt) {
			return nil, nil
		}
		return nil, s.deleteExpired(ctx, m, now)
	}
	return nil, nil
}

func work(id int64) (*sweep.Work, error) {
	task, err := tasks.NewMediaProcess(id)
	if err != nil {
		return nil, err
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueMedia, TaskID: tasks.MediaTaskID(id)}, nil
}

// deleteExpired removes an upload never finalized: with its row locked,
// its segment objects, then its records. A finalize racing it waits for the
// lock and then finds no upload (404), or wins and the upload is no longer
// due; a failed object delete leaves everything for the next tick.
func (s *Sweep) deleteExpired(ctx context.Context, m storage.Media, now time.Time) error {
	deleted := 0
	err := s.Store.DeleteExpiredUpload(ctx, m.ID, now, func(keys []string) error {
		deleted = len(keys)
		return s.deleteObjects(ctx, m.ID, keys)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	logctx.OrDefault(s.Logger).InfoContext(ctx, "expired upload removed", "media_id", m.ID, "segments", deleted)
	return nil
}

// deleteObjects deletes the segment objects of upload id.
func (s *Sweep) deleteObjects(ctx context.Context, id int64, keys []string) error {
	for _, key := range keys {
		if err := s.Blobs.Delete(ctx, key); err != nil {
			return fmt.Errorf("delete segment %s of expired upload %d: %w", key, id, err)
		}
	}
	return nil
}

// Enqueued implements sweep.Source.
func (s *Sweep) Enqueued(ctx context.Context, m storage.Media, now time.Time) error {
	return s.Store.MarkMediaSwept(ctx, []int64{m.ID}, now)
}

// Abandoned implements sweep.Source: the media fails like one whose
// retries ran out (code 3).
func (s *Sweep) Abandoned(ctx context.Context, m storage.Media, info *asynq.TaskInfo, now time.Time) error {
	logctx.OrDefault(s.Logger).ErrorContext(ctx, "media task archived; failing media", "media_id", m.ID, "attempts", info.Retried+1, "last_err", info.LastErr)
	err := s.Store.FailMedia(ctx, m.ID, storage.MediaErrorInternal, ErrorNameInternal, failedAfterRetries(m.ID, info.Retried+1), now)
	if err != nil && !errors.Is(err, storage.ErrConflict) {
		return err
	}
	return nil
}

// Swept implements sweep.Source.
func (s *Sweep) Swept(ctx context.Context, items []storage.Media, now time.Time) error {
	ids := make([]int64, len(items))
	for i, m := range items {
		ids[i] = m.ID
	}
	return s.Store.MarkMediaSwept(ctx, ids, now)
}
