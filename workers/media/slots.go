package media

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// Slots caps how many of a worker's task slots media processing holds at
// once (docs/media-upload.md, "Worker slots"), per class: Video for videos
// and animated GIFs (minutes of ffmpeg), Image for photos and subtitles
// (bounded work, kept apart so a finalize waiting for its image is never
// stuck behind transcodes). 0 means no cap. A task that finds its class
// full does not wait in its slot: it returns tasks.ErrDeferred and asynq
// puts it back without counting an attempt (on its last attempt it waits
// instead, so a deferral never archives it). The other queues keep the
// remaining slots.
type Slots struct {
	Video int
	Image int

	once  sync.Once
	video chan struct{}
	image chan struct{}
}

func (s *Slots) init() {
	s.once.Do(func() {
		if s.Video > 0 {
			s.video = make(chan struct{}, s.Video)
		}
		if s.Image > 0 {
			s.image = make(chan struct{}, s.Image)
		}
	})
}

// slotStore is what take reads: the media's kind and state.
type slotStore interface {
	Media(ctx context.Context, id int64) (storage.Media, error)
}

// take reserves a slot of media id's class and returns the function that
// gives it back; tasks.ErrDeferred when the class is full.
func (s *Slots) take(ctx context.Context, store slotStore, id int64) (func(), error) {
	s.init()
	if s.video == nil && s.image == nil {
		return func() {}, nil
	}
	m, err := store.Media(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return func() {}, nil // the task ends at once (nothing to process)
	case err != nil:
		return nil, fmt.Errorf("load media %d: %w", id, err)
	case m.State.Final() || m.State == storage.MediaUploading:
		return func() {}, nil // nothing to do: no work to cap
	}
	ch := s.image
	if m.Kind == storage.MediaVideo || m.Kind == storage.MediaAnimatedGIF {
		ch = s.video
	}
	if ch == nil {
		return func() {}, nil
	}
	release := func() { <-ch }
	select {
	case ch <- struct{}{}:
		return release, nil
	default:
	}
	if !lastAttempt(ctx) {
		return nil, fmt.Errorf("media %d (%s): %w", id, m.Kind, tasks.ErrDeferred)
	}
	select {
	case ch <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a media slot: %w", context.Cause(ctx))
	}
}

// lastAttempt reports whether the task of ctx runs for the last time (a
// failure now would archive it); false outside asynq.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}
