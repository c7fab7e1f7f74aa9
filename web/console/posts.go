package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
)

// postsPageSize is how many posts a page of results shows.
const postsPageSize = 20

// recentWindow is the recent search's archive: the last 7 days.
const recentWindow = 7 * 24 * time.Hour

// postsData is the posts page's: the search form and a page of results.
type postsData struct {
	Base
	Query    string
	Archive  string // "recent" or "all"
	Order    string // storage.SortRecency or storage.SortRelevancy
	Searched bool
	Error    string
	Posts    []postRow
	Next     string // the next page's URL ("": the last page)
}

type postRow struct {
	storage.Post
	Author string
}

// posts searches posts with the platform's query language, through the
// same parser (searchquery.ParseSearch) and store call (SearchPosts) as
// GET /2/tweets/search/recent and /all; a refused query shows the API's
// detail. The viewer searches as themselves: a protected author's posts
// only for that author.
func (s *Server) posts(w http.ResponseWriter, r *http.Request, v viewer) {
	q := r.URL.Query()
	d := postsData{Base: s.base(&v, "Posts", "posts"), Query: q.Get("q"), Archive: "recent", Order: storage.SortRecency}
	if q.Get("archive") == "all" {
		d.Archive = "all"
	}
	if q.Get("order") == storage.SortRelevancy {
		d.Order = storage.SortRelevancy
	}
	if strings.TrimSpace(d.Query) == "" {
		s.render(w, r, http.StatusOK, "posts", "", d)
		return
	}
	d.Searched = true
	search, err := s.postSearch(d, q.Get("after"), v)
	var refused *searchquery.Refusal
	if errors.As(err, &refused) {
		d.Error = refused.Detail
		s.render(w, r, http.StatusBadRequest, "posts", "", d)
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	page, err := s.store.SearchPosts(r.Context(), search)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if d.Posts, err = s.postRows(r, page.Posts); err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if page.Next != nil {
		next := url.Values{"q": {d.Query}, "archive": {d.Archive}, "order": {d.Order},
			"after": {strconv.FormatInt(page.Next.Score, 10) + "." + strconv.FormatInt(page.Next.ID, 10)}}
		d.Next = "/console/posts?" + next.Encode()
	}
	s.render(w, r, http.StatusOK, "posts", "", d)
}

// postSearch builds the search d asks for, continuing after the cursor
// after ("<score>.<id>", the previous page's last post).
func (s *Server) postSearch(d postsData, after string, v viewer) (storage.PostSearch, error) {
	maxLen := searchquery.MaxRecentLength
	if d.Archive == "all" {
		maxLen = searchquery.MaxAllLength
	}
	parsed, err := searchquery.ParseSearch(d.Query, d.Archive, maxLen)
	if err != nil {
		return storage.PostSearch{}, err
	}
	search := storage.PostSearch{Query: parsed, Limit: postsPageSize, SortOrder: d.Order, ViewerID: v.User.ID}
	if d.Archive == "recent" {
		search.Start = s.cfg.Now().Add(-recentWindow)
	}
	if after != "" {
		score, id, ok := parseCursor(after)
		if !ok {
			return storage.PostSearch{}, &searchquery.Refusal{Detail: "The page link is not one this page gave out; search again."}
		}
		search.After = &storage.PostCursor{Score: score, ID: id}
	}
	return search, nil
}

func parseCursor(raw string) (int64, int64, bool) {
	a, b, ok := strings.Cut(raw, ".")
	score, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	return score, id, ok && err1 == nil && err2 == nil && id > 0
}

// postRows names each post's author.
func (s *Server) postRows(r *http.Request, posts []storage.Post) ([]postRow, error) {
	ids := make([]int64, 0, len(posts))
	for _, p := range posts {
		ids = append(ids, p.AuthorID)
	}
	users, err := s.store.UsersByIDs(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(users))
	for _, u := range users {
		names[u.ID] = u.Username
	}
	out := make([]postRow, len(posts))
	for i, p := range posts {
		out[i] = postRow{Post: p, Author: names[p.AuthorID]}
	}
	return out, nil
}
