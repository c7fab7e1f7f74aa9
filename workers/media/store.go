// Package media is the worker side of chunked media upload
// (docs/media-upload.md): Processor runs media:process tasks (it assembles
// the uploaded segments into the original, then decodes and normalises a
// photo, probes and transcodes a video or animated GIF with ffmpeg, or checks
// subtitles), and Sweep (a sweep source) re-enqueues finalized media whose
// task was lost and removes uploads that expired without a finalize.
package media

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access processing needs (storage/postgres.DB
// satisfies it).
type Store interface {
	Media(ctx context.Context, id int64) (storage.Media, error)
	StartMediaProcessing(ctx context.Context, id int64, at time.Time) (storage.Media, error)
	MediaSegments(ctx context.Context, id int64) ([]storage.MediaSegment, error)
	DeleteMediaSegments(ctx context.Context, id int64) error
	UserMediaElevated(ctx context.Context, id int64) (bool, error)
	SetMediaProgress(ctx context.Context, id int64, percent int) error
	CompleteMedia(ctx context.Context, id int64, r storage.MediaResult, at time.Time) error
	FailMedia(ctx context.Context, id int64, code int, name, message string, at time.Time) error
}

// SweepStore is the record access the Sweep source needs.
type SweepStore interface {
	MediaDue(ctx context.Context, now time.Time, limit int) ([]storage.Media, error)
	MarkMediaSwept(ctx context.Context, ids []int64, at time.Time) error
	DeleteExpiredUpload(ctx context.Context, id int64, now time.Time, deleteObjects func(keys []string) error) error
	FailMedia(ctx context.Context, id int64, code int, name, message string, at time.Time) error
}
