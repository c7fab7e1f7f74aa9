// Package news serves the news stories the news:refresh worker builds
// from spiking terms (GET /2/news/search, GET /2/news/{id};
// docs/news.md).
package news

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access of the news endpoints (storage/postgres.DB).
// The render store checks that cluster posts can still be shown.
type Store interface {
	render.Store
	NewsStoryByID(ctx context.Context, id int64) (storage.NewsStory, error)
	SearchNewsStories(ctx context.Context, q storage.NewsSearch) ([]storage.NewsStory, error)
}

// Deps is what the news endpoints need.
type Deps struct {
	Store    Store
	Problems objects.ProblemRenderer
	Clock    func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the news feature.
type Module struct {
	Deps
	hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	return &Module{Deps: d, hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// Query parameters.
const (
	fieldsParam     = "news.fields"
	queryParam      = "query"
	maxResultsParam = "max_results"
	maxAgeParam     = "max_age_hours"
)

// Routes lists the news endpoints: app-only or user context, as the
// platform takes them. Limits per 15 minutes, per user (per app for
// app-only callers): search 300, lookup 900 (like the user lookups).
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /2/news/search", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Query: []string{queryParam, maxResultsParam, maxAgeParam, fieldsParam},
			Limit: httpx.Limit{Name: "news_search", Requests: 300, Scope: httpx.PerUser}, Handle: m.search},
		{Pattern: "GET /2/news/{id}", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Query: []string{fieldsParam},
			Limit: httpx.Limit{Name: "news_lookup", Requests: 900, Scope: httpx.PerUser}, Handle: m.byID},
	}
}
