package posts

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the post endpoints need (storage/postgres.DB
// satisfies it).
type Store interface {
	CreatePost(ctx context.Context, p storage.Post) (storage.Post, error)
	PostByID(ctx context.Context, id int64) (storage.Post, error)
	DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error)
	// MediaByIDs loads the media of ids that exist (attachments).
	MediaByIDs(ctx context.Context, ids []int64) ([]storage.Media, error)
	// UserMediaElevated reports whether a user gets the larger media limits
	// (premium or verified): the video length an author may post.
	UserMediaElevated(ctx context.Context, userID int64) (bool, error)
}
