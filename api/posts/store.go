package posts

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the post endpoints need (storage/postgres.DB
// satisfies it).
type Store interface {
	render.Store
	CreatePost(ctx context.Context, p storage.Post) (storage.Post, error)
	// EditPost stores p as the version after previousID; storage.ErrConflict
	// when previousID may no longer be edited.
	EditPost(ctx context.Context, previousID int64, p storage.Post, now time.Time) (storage.Post, error)
	PostByID(ctx context.Context, id int64) (storage.Post, error)
	DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error)
	LikeWith(ctx context.Context, appID, userID, postID int64) (bool, error)
	Unlike(ctx context.Context, userID, postID int64) (bool, error)
	Repost(ctx context.Context, userID, appID, postID int64) (storage.Post, error)
	Unrepost(ctx context.Context, userID, postID int64) (bool, error)
	// UserMediaElevated reports whether a user gets the larger media limits
	// (premium or verified): the video length an author may post.
	UserMediaElevated(ctx context.Context, userID int64) (bool, error)
}
