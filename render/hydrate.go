package render

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is what hydration reads (storage/postgres.DB satisfies it).
type Store interface {
	PostsByIDs(ctx context.Context, ids []int64) ([]storage.Post, error)
	UsersByIDs(ctx context.Context, ids []int64) ([]storage.User, error)
	UsersByUsernames(ctx context.Context, names []string) ([]storage.User, error)
	MediaByIDs(ctx context.Context, ids []int64) ([]storage.Media, error)
	UserMetrics(ctx context.Context, ids []int64) (map[int64]storage.UserMetrics, error)
}

// Hydrator renders records with what a request asked to see, loading the
// related records its fields and expansions need in a few batched reads.
type Hydrator struct {
	Store Store
	Clock func() time.Time
	// MediaURLs builds the media's url and preview_image_url (nil: they
	// are not shown).
	MediaURLs *MediaURLs
}

func (h *Hydrator) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock()
}

// Viewer is who asks: the user-context caller's id, 0 for app-only and
// for the public (the filtered stream, webhook stream links).
type Viewer int64

// Result is a hydrated answer: the rendered records and what expansions
// added.
type Result[T any] struct {
	Data     []T
	Includes *Includes
}

// Visibility is why a post may not be shown.
type Visibility int

// Visibility outcomes.
const (
	Visible Visibility = iota
	// Gone: deleted, or its author deleted, deactivated or suspended.
	Gone
	// Protected: its author is protected and the viewer is not the author.
	Protected
)

// PostVisibility says whether viewer may see p, written by author.
func PostVisibility(p storage.Post, author storage.User, viewer Viewer) Visibility {
	switch {
	case p.DeletedAt != nil || author.DeletedAt != nil || author.DeactivatedAt != nil || author.SuspendedAt != nil:
		return Gone
	case author.ProtectedAt != nil && int64(viewer) != author.ID:
		return Protected
	}
	return Visible
}

// Visibility says whether viewer may see each of posts (keyed by id),
// loading their authors and, for reposts, their originals.
func (h *Hydrator) Visibility(ctx context.Context, posts []storage.Post, viewer Viewer) (map[int64]Visibility, error) {
	g := h.newGraph(Options{}, viewer)
	for _, p := range posts {
		g.posts[p.ID] = p
	}
	return g.visibility(ctx, posts)
}

func (h *Hydrator) newGraph(o Options, viewer Viewer) *graph {
	return &graph{h: h, o: o, viewer: viewer, posts: map[int64]storage.Post{}, users: map[int64]storage.User{}}
}

// UserVisible reports whether a user can be shown at all.
func UserVisible(u storage.User) bool {
	return u.DeletedAt == nil && u.DeactivatedAt == nil && u.SuspendedAt == nil
}

// Tweets renders posts (already checked visible to viewer) with o's fields
// and expansions.
func (h *Hydrator) Tweets(ctx context.Context, posts []storage.Post, o Options, viewer Viewer) (Result[Tweet], error) {
	g := h.newGraph(o, viewer)
	for _, p := range posts {
		g.posts[p.ID] = p
	}
	inc, err := g.expandPosts(ctx, posts)
	if err != nil {
		return Result[Tweet]{}, err
	}
	media, err := g.loadMedia(ctx, append(append([]storage.Post{}, posts...), inc.posts...), inc.media)
	if err != nil {
		return Result[Tweet]{}, err
	}
	c := tweetContext{fields: o.Tweet, media: media, now: h.now()}
	out := Result[Tweet]{Data: make([]Tweet, len(posts)), Includes: &Includes{}}
	for i, p := range posts {
		out.Data[i] = renderTweet(p, c)
	}
	for _, p := range inc.posts {
		out.Includes.Tweets = append(out.Includes.Tweets, renderTweet(p, c))
	}
	for _, id := range inc.media {
		if m, ok := media[id]; ok {
			out.Includes.Media = append(out.Includes.Media, renderMedia(m, o.Media, h.MediaURLs))
		}
	}
	users, err := g.renderUsers(ctx, inc.users)
	if err != nil {
		return Result[Tweet]{}, err
	}
	out.Includes.Users = users
	if out.Includes.Empty() {
		out.Includes = nil
	}
	return out, nil
}

// Users renders users (already checked visible) with o's fields and
// expansions (pinned_tweet_id).
func (h *Hydrator) Users(ctx context.Context, users []storage.User, o Options, viewer Viewer) (Result[User], error) {
	g := h.newGraph(o, viewer)
	var list []int64
	for _, u := range users {
		g.users[u.ID] = u
		list = append(list, u.ID)
	}
	rendered, err := g.renderUsers(ctx, list)
	if err != nil {
		return Result[User]{}, err
	}
	out := Result[User]{Data: rendered, Includes: &Includes{}}
	if o.Expands(ExpandPinned) {
		var pinned []int64
		for _, u := range users {
			if u.PinnedPostID != 0 {
				pinned = append(pinned, u.PinnedPostID)
			}
		}
		posts, err := g.visiblePosts(ctx, pinned)
		if err != nil {
			return Result[User]{}, err
		}
		media, err := g.loadMedia(ctx, posts, nil)
		if err != nil {
			return Result[User]{}, err
		}
		c := tweetContext{fields: o.Tweet, media: media, now: h.now()}
		for _, p := range posts {
			out.Includes.Tweets = append(out.Includes.Tweets, renderTweet(p, c))
		}
	}
	if out.Includes.Empty() {
		out.Includes = nil
	}
	return out, nil
}
