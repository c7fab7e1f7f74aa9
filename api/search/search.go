package search

import (
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// searchResponse answers a search; meta is always there.
type searchResponse struct {
	Data     []render.Tweet   `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Meta     searchMeta       `json:"meta"`
}

type searchMeta struct {
	NewestID    string `json:"newest_id,omitempty"`
	OldestID    string `json:"oldest_id,omitempty"`
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

// searchToken is the kind of search page tokens.
const searchToken = "s"

func (m *Module) searchHandler(a archive) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s, opts, err := m.parseSearch(r, a)
		if err != nil {
			return err
		}
		page, err := m.Store.SearchPosts(r.Context(), s)
		if err != nil {
			return fmt.Errorf("search posts: %w", err)
		}
		res, err := m.hydrator.Tweets(r.Context(), page.Posts, opts, render.Viewer(s.ViewerID))
		if err != nil {
			return err
		}
		out := searchResponse{Data: res.Data, Includes: res.Includes, Meta: searchMeta{ResultCount: len(res.Data)}}
		if n := len(page.Posts); n > 0 {
			out.Meta.NewestID, out.Meta.OldestID = httpx.FormatID(page.Posts[0].ID), httpx.FormatID(page.Posts[n-1].ID)
			if s.SortOrder == storage.SortRelevancy {
				out.Meta.NewestID, out.Meta.OldestID = newestOldest(page.Posts)
			}
		}
		if page.Next != nil {
			out.Meta.NextToken = encodeToken(searchToken, page.Next.Score, page.Next.ID)
		}
		return httpx.WriteJSON(w, http.StatusOK, out)
	}
}

// parseSearch reads a search request; every parameter problem is answered
// at once.
func (m *Module) parseSearch(r *http.Request, a archive) (storage.PostSearch, render.Options, error) {
	q := httpx.ReadQuery(r)
	win, err := parseWindow(q, a, m.Clock().UTC())
	if err != nil {
		return storage.PostSearch{}, render.Options{}, err
	}
	s := storage.PostSearch{Query: win.query, Start: win.start, End: win.end, SinceID: win.sinceID, UntilID: win.untilID,
		Limit:     q.Int("max_results", 10, a.maxResults, 10),
		SortOrder: q.Enum("sort_order", []string{storage.SortRecency, storage.SortRelevancy}, storage.SortRecency),
		ViewerID:  int64(objects.ViewerOf(r))}
	if win.token != "" {
		score, id := decodeToken(win.token, searchToken, q)
		s.After = &storage.PostCursor{Score: score, ID: id}
	}
	if err := q.Err(); err != nil {
		return storage.PostSearch{}, render.Options{}, err
	}
	opts, err := objects.ParseTweetOptions(r)
	return s, opts, err
}

// newestOldest are the highest and lowest ids of posts.
func newestOldest(posts []storage.Post) (string, string) {
	newest, oldest := posts[0].ID, posts[0].ID
	for _, p := range posts[1:] {
		newest, oldest = max(newest, p.ID), min(oldest, p.ID)
	}
	return httpx.FormatID(newest), httpx.FormatID(oldest)
}
