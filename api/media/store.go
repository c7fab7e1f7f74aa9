package media

import (
	"context"
	"io"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
)

// Store is the record access the media upload endpoints need
// (storage/postgres.DB satisfies it).
type Store interface {
	NextID(ctx context.Context) (int64, error)
	// UserMediaElevated reports whether a user gets the larger limits
	// (premium or verified).
	UserMediaElevated(ctx context.Context, userID int64) (bool, error)
	// UsersByIDs returns the known users among ids.
	UsersByIDs(ctx context.Context, ids []int64) ([]storage.User, error)
	CreateMedia(ctx context.Context, m storage.Media) (storage.Media, error)
	Media(ctx context.Context, id int64) (storage.Media, error)
	// MediaByKey loads a media by its media_key (the public route).
	MediaByKey(ctx context.Context, key string) (storage.Media, error)
	// AddMediaSegment records a stored copy of a segment; storage.ErrConflict
	// when the upload no longer takes segments (finalized or expired at at).
	AddMediaSegment(ctx context.Context, seg storage.MediaSegment, at time.Time) (storage.Media, error)
	// FinalizeMedia checks the segments and moves the media to pending:
	// *storage.SegmentsError when they do not add up, storage.ErrConflict
	// when it is no longer uploading.
	FinalizeMedia(ctx context.Context, id int64, at time.Time) (storage.Media, error)
}

// BlobStore stores the appended segments (blob.Store satisfies it). Put
// streams when size is -1.
type BlobStore interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Get opens a processed copy for the public route.
	Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error)
	Delete(ctx context.Context, key string) error
}
