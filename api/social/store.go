package social

import (
	"context"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the social graph endpoints need
// (storage/postgres.DB satisfies it).
type Store interface {
	render.Store
	Follow(ctx context.Context, app, source, target int64) (storage.FollowState, error)
	Unfollow(ctx context.Context, app, source, target int64) (bool, error)
	Mute(ctx context.Context, app, source, target int64) (bool, error)
	Unmute(ctx context.Context, app, source, target int64) (bool, error)
	Block(ctx context.Context, app, source, target int64) (bool, error)
	Unblock(ctx context.Context, app, source, target int64) (bool, error)
	SocialList(ctx context.Context, page storage.SocialPage) ([]storage.SocialEntry, error)
	Follows(ctx context.Context, source, target int64) (bool, error)
}
