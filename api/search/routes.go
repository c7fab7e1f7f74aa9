// Package search serves post search and counts (/2/tweets/search/recent,
// /search/all, /counts/recent, /counts/all) over the query language of
// domain/searchquery (docs/search.md).
package search

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access search needs (storage/postgres.DB).
type Store interface {
	render.Store
	SearchPosts(ctx context.Context, s storage.PostSearch) (storage.PostPage, error)
	CountPosts(ctx context.Context, c storage.PostCount) ([]storage.CountBucket, error)
}

// Deps is what the search endpoints need.
type Deps struct {
	Store Store
	Clock func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the search feature.
type Module struct {
	Deps
	hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	return &Module{Deps: d, hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// archive describes one of the two indexes: the last 7 days (recent) and
// the full archive (all).
type archive struct {
	name string
	// maxQuery is the longest query, in characters.
	maxQuery int
	// maxResults bounds max_results (at least 10).
	maxResults int
	// window is how far back the index reaches (0: since the platform's
	// first post); defaultWindow is what a request without start_time
	// covers.
	window, defaultWindow time.Duration
	// countPage is the span one counts response covers at most; older
	// buckets come with next_token (0: no paging).
	countPage time.Duration
}

var (
	recent = archive{name: "recent", maxQuery: searchquery.MaxRecentLength, maxResults: 100, window: 7 * 24 * time.Hour, defaultWindow: 7 * 24 * time.Hour}
	all    = archive{name: "all", maxQuery: searchquery.MaxAllLength, maxResults: 500, defaultWindow: 30 * 24 * time.Hour, countPage: 31 * 24 * time.Hour}
)

// searchParams and countParams are the endpoints' query parameters.
var (
	searchParams = append([]string{"query", "start_time", "end_time", "since_id", "until_id", "max_results",
		"next_token", "pagination_token", "sort_order"}, render.TweetParams...)
	countParams = []string{"query", "start_time", "end_time", "since_id", "until_id", "granularity",
		"next_token", "pagination_token", "search_count.fields"}
)

// Routes lists the search endpoints. Recent search takes app-only or user
// context; the full archive and counts are app-only, as on the platform.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /2/tweets/search/recent", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Query: searchParams,
			Limit: httpx.Limit{Name: "search_recent", Requests: 450, Scope: httpx.PerUser}, Handle: m.searchHandler(recent)},
		{Pattern: "GET /2/tweets/search/all", Auth: auth.BearerOnly, Query: searchParams,
			Limit: httpx.Limit{Name: "search_all", Requests: 300, Scope: httpx.PerApp}, Handle: m.searchHandler(all)},
		{Pattern: "GET /2/tweets/counts/recent", Auth: auth.BearerOnly, Query: countParams,
			Limit: httpx.Limit{Name: "counts_recent", Requests: 300, Scope: httpx.PerApp}, Handle: m.countHandler(recent)},
		{Pattern: "GET /2/tweets/counts/all", Auth: auth.BearerOnly, Query: countParams,
			Limit: httpx.Limit{Name: "counts_all", Requests: 300, Scope: httpx.PerApp}, Handle: m.countHandler(all)},
	}
}
