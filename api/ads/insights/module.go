// Package insights serves the advertising API's keyword insights
// (GET /12/insights/keywords/search): the volume of posts holding a group
// of keywords per hour or day, and 30 related keywords, answered from the
// aggregates workers/insights keeps (never from the posts), each answered
// query logged for operators. See docs/insights-api.md.
package insights

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the keyword insights endpoint needs of storage
// (*postgres.DB).
type Store interface {
	// KeywordVolumes is the volume of the query's keywords per bucket.
	KeywordVolumes(ctx context.Context, q storage.InsightQuery) ([]int64, error)
	// RelatedKeywords are up to limit terms related to the keywords.
	RelatedKeywords(ctx context.Context, q storage.InsightQuery, limit int) ([]string, error)
	// RecordInsightQuery logs an answered query.
	RecordInsightQuery(ctx context.Context, l storage.InsightQueryLog) error
	// LowestAdAccountFor is the lowest-id live account the user may use on
	// the side (sandbox or production), "" when none.
	LowestAdAccountFor(ctx context.Context, userID int64, sandbox bool) (string, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves keyword insights.
type Module struct {
	deps Deps
	// now is the clock end_time defaults to.
	now func() time.Time
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d, now: time.Now} }

const searchPath = "/12/insights/keywords/search"

// searchParams are the parameters GET insights/keywords/search takes.
var searchParams = []string{"granularity", "keywords", "negative_keywords", "start_time", "end_time", "location"}

// searchLimit: 1000 requests per 15 minutes per user, as the catalog
// reads (the platform publishes no figure for this endpoint).
var searchLimit = httpx.Limit{Name: "ads_keyword_insights", Requests: 1000, Scope: httpx.PerUser}

// Routes lists the module's endpoints: served on both listeners (the
// aggregates are not an account's data).
func (m *Module) Routes() []httpx.Endpoint {
	return m.deps.Kit.Endpoints([]adsx.Route{
		{Pattern: "GET " + searchPath, Params: searchParams, Limit: searchLimit, Handle: m.search},
	})
}
