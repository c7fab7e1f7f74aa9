package render

import (
	"context"
	"fmt"
	"strings"

	"github.com/aviary-dev/aviary/storage"
)

// graph loads the records around the posts and users a response shows,
// each kind in one batched read, remembering what it loaded.
type graph struct {
	h      *Hydrator
	o      Options
	viewer Viewer
	posts  map[int64]storage.Post
	users  map[int64]storage.User
}

// included is what expansions add, in first-seen order.
type included struct {
	posts []storage.Post
	users []int64
	media []int64
}

// idList collects ids once each, in first-seen order.
type idList struct {
	list []int64
	seen map[int64]bool
}

func (l *idList) add(id int64) {
	if id == 0 || l.seen[id] {
		return
	}
	if l.seen == nil {
		l.seen = map[int64]bool{}
	}
	l.seen[id] = true
	l.list = append(l.list, id)
}

// expandPosts resolves the post expansions of posts.
func (g *graph) expandPosts(ctx context.Context, posts []storage.Post) (included, error) {
	var refs, versions, users, media idList
	for _, p := range posts {
		if g.o.Expands(ExpandReferenced) || g.o.Expands(ExpandReferencedUsers) {
			refs.add(p.RepostOfID)
			refs.add(p.QuoteOfID)
			refs.add(p.InReplyToPostID)
		}
		if g.o.Expands(ExpandEditHistory) {
			for _, id := range p.EditHistory {
				if id != p.ID {
					versions.add(id)
				}
			}
		}
		if g.o.Expands(ExpandAuthor) {
			users.add(p.AuthorID)
		}
		if g.o.Expands(ExpandReplyUser) {
			users.add(p.InReplyToUserID)
		}
		if g.o.Expands(ExpandMedia) {
			for _, id := range p.MediaIDs {
				media.add(id)
			}
		}
	}
	referenced, err := g.visiblePosts(ctx, refs.list)
	if err != nil {
		return included{}, err
	}
	if g.o.Expands(ExpandReferencedUsers) {
		for _, p := range referenced {
			users.add(p.AuthorID)
		}
	}
	if g.o.Expands(ExpandMentions) {
		mentioned, err := g.mentioned(ctx, posts)
		if err != nil {
			return included{}, err
		}
		for _, id := range mentioned {
			users.add(id)
		}
	}
	var inc included
	if g.o.Expands(ExpandReferenced) {
		inc.posts = referenced
	}
	older, err := g.visiblePosts(ctx, versions.list)
	if err != nil {
		return included{}, err
	}
	inc.posts = append(inc.posts, older...)
	inc.users, inc.media = users.list, media.list
	return inc, nil
}

// mentioned returns the ids of the users posts mention, in order: the
// user each mention was resolved to when the post was made, else the user
// who has that username now.
func (g *graph) mentioned(ctx context.Context, posts []storage.Post) ([]int64, error) {
	var names []string
	seen := map[string]bool{}
	for _, p := range posts {
		for _, m := range p.Entities.Mentions {
			if key := strings.ToLower(m.Username); m.UserID == 0 && !seen[key] {
				seen[key] = true
				names = append(names, m.Username)
			}
		}
	}
	byName := map[string]int64{}
	if len(names) > 0 {
		found, err := g.h.Store.UsersByUsernames(ctx, names)
		if err != nil {
			return nil, fmt.Errorf("load mentioned users: %w", err)
		}
		for _, u := range found {
			byName[strings.ToLower(u.Username)] = u.ID
			g.users[u.ID] = u
		}
	}
	var out idList
	for _, p := range posts {
		for _, m := range p.Entities.Mentions {
			if m.UserID != 0 {
				out.add(m.UserID)
			} else {
				out.add(byName[strings.ToLower(m.Username)])
			}
		}
	}
	return out.list, nil
}

// visiblePosts loads the posts of ids that viewer may see, in ids order.
func (g *graph) visiblePosts(ctx context.Context, list []int64) ([]storage.Post, error) {
	if err := g.loadPosts(ctx, list); err != nil {
		return nil, err
	}
	var found []storage.Post
	for _, id := range list {
		if p, ok := g.posts[id]; ok {
			found = append(found, p)
		}
	}
	vis, err := g.visibility(ctx, found)
	if err != nil {
		return nil, err
	}
	var out []storage.Post
	for _, p := range found {
		if vis[p.ID] == Visible {
			out = append(out, p)
		}
	}
	return out, nil
}

// loadPosts makes sure the posts of list are loaded (unknown ids stay
// absent).
func (g *graph) loadPosts(ctx context.Context, list []int64) error {
	var missing []int64
	for _, id := range list {
		if _, ok := g.posts[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	found, err := g.h.Store.PostsByIDs(ctx, missing)
	if err != nil {
		return fmt.Errorf("load posts %v: %w", missing, err)
	}
	for _, p := range found {
		g.posts[p.ID] = p
	}
	return nil
}

// visibility says whether the viewer may see each of posts. A repost shows
// its original's text, so it is visible only while the original is too.
func (g *graph) visibility(ctx context.Context, posts []storage.Post) (map[int64]Visibility, error) {
	var originals, authors idList
	for _, p := range posts {
		authors.add(p.AuthorID)
		originals.add(p.RepostOfID)
	}
	if err := g.loadPosts(ctx, originals.list); err != nil {
		return nil, err
	}
	for _, id := range originals.list {
		if o, ok := g.posts[id]; ok {
			authors.add(o.AuthorID)
		}
	}
	if err := g.loadUsers(ctx, authors.list); err != nil {
		return nil, err
	}
	out := make(map[int64]Visibility, len(posts))
	for _, p := range posts {
		v := PostVisibility(p, g.users[p.AuthorID], g.viewer)
		if v == Visible && p.IsRepost() {
			o, ok := g.posts[p.RepostOfID]
			v = Gone
			if ok {
				v = PostVisibility(o, g.users[o.AuthorID], g.viewer)
			}
		}
		out[p.ID] = v
	}
	return out, nil
}

// loadUsers makes sure the users of list are loaded (unknown ids stay
// absent).
func (g *graph) loadUsers(ctx context.Context, list []int64) error {
	var missing []int64
	for _, id := range list {
		if _, ok := g.users[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	found, err := g.h.Store.UsersByIDs(ctx, missing)
	if err != nil {
		return fmt.Errorf("load users %v: %w", missing, err)
	}
	for _, u := range found {
		g.users[u.ID] = u
	}
	return nil
}

// renderUsers renders the visible users of list with the user fields,
// loading their metrics when public_metrics is asked for.
func (g *graph) renderUsers(ctx context.Context, list []int64) ([]User, error) {
	if err := g.loadUsers(ctx, list); err != nil {
		return nil, err
	}
	var shown []storage.User
	for _, id := range list {
		if u, ok := g.users[id]; ok && UserVisible(u) {
			shown = append(shown, u)
		}
	}
	metrics := map[int64]storage.UserMetrics{}
	if g.o.User.Has("public_metrics") && len(shown) > 0 {
		ids := make([]int64, len(shown))
		for i, u := range shown {
			ids[i] = u.ID
		}
		var err error
		if metrics, err = g.h.Store.UserMetrics(ctx, ids); err != nil {
			return nil, fmt.Errorf("load user metrics: %w", err)
		}
	}
	out := make([]User, len(shown))
	for i, u := range shown {
		out[i] = renderUser(u, metrics[u.ID], g.o.User)
	}
	return out, nil
}

// loadMedia loads the media of posts and extra when the response shows
// attachments or expands media.
func (g *graph) loadMedia(ctx context.Context, posts []storage.Post, extra []int64) (map[int64]storage.Media, error) {
	if !g.o.Tweet.Has("attachments") && len(extra) == 0 {
		return nil, nil
	}
	var list idList
	for _, p := range posts {
		for _, id := range p.MediaIDs {
			list.add(id)
		}
	}
	for _, id := range extra {
		list.add(id)
	}
	if len(list.list) == 0 {
		return nil, nil
	}
	found, err := g.h.Store.MediaByIDs(ctx, list.list)
	if err != nil {
		return nil, fmt.Errorf("load media: %w", err)
	}
	out := make(map[int64]storage.Media, len(found))
	for _, m := range found {
		out[m.ID] = m
	}
	return out, nil
}
