package api

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aviary-dev/aviary/api/activity"
	"github.com/aviary-dev/aviary/api/ads/accounts"
	"github.com/aviary-dev/aviary/api/ads/adsposts"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/ads/audiences"
	"github.com/aviary-dev/aviary/api/ads/campaigns"
	"github.com/aviary-dev/aviary/api/ads/cards"
	"github.com/aviary-dev/aviary/api/ads/catalogs"
	"github.com/aviary-dev/aviary/api/ads/categories"
	"github.com/aviary-dev/aviary/api/ads/creatives"
	"github.com/aviary-dev/aviary/api/ads/donotreach"
	"github.com/aviary-dev/aviary/api/ads/insights"
	"github.com/aviary-dev/aviary/api/ads/lineitems"
	"github.com/aviary-dev/aviary/api/ads/medialibrary"
	"github.com/aviary-dev/aviary/api/ads/permissions"
	"github.com/aviary-dev/aviary/api/ads/promoted"
	"github.com/aviary-dev/aviary/api/ads/targeting"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/compliance"
	"github.com/aviary-dev/aviary/api/dms"
	"github.com/aviary-dev/aviary/api/faults"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/inspect"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/api/posts"
	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/api/social"
	"github.com/aviary-dev/aviary/api/spaces"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/api/usage"
	"github.com/aviary-dev/aviary/api/users"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/render"
)

// Modules are the API's features; cmd builds each from the backends. A nil
// module is not served.
type Modules struct {
	Compliance *compliance.Module
	Media      *media.Module
	Posts      *posts.Module
	Users      *users.Module
	// Social serves follows, mutes and blocks (docs/social-graph.md).
	Social   *social.Module
	Search   *search.Module
	News     *news.Module
	Streams  *streams.Module
	Webhooks *webhooks.Module
	Spaces   *spaces.Module
	// ActivitySubscriptions serves /2/activity/subscriptions.
	ActivitySubscriptions *activity.Subscriptions
	// Inspect serves the side-effect-free /_aviary/ inspection endpoints.
	Inspect *inspect.Module
	// DMs serves the direct message endpoints (/2/dm_conversations, /2/dm_events).
	DMs *dms.Module
	// Usage meters the core endpoints (caps, credits) and serves
	// GET /2/usage/tweets (docs/usage-and-credits.md); nil meters nothing.
	Usage *usage.Meter
	Ads   AdsModules
}

// AdsModules are the advertising API's features (paths /12/..., /5/...),
// the only ones the sandbox listener serves.
type AdsModules struct {
	Accounts     *accounts.Module
	Campaigns    *campaigns.Module
	LineItems    *lineitems.Module
	Promoted     *promoted.Module
	Targeting    *targeting.Module
	Categories   *categories.Module
	Creatives    *creatives.Module
	MediaLibrary *medialibrary.Module
	Audiences    *audiences.Module
	DoNotReach   *donotreach.Module
	Permissions  *permissions.Module
	Catalogs     *catalogs.Module
	Insights     *insights.Module
	AdsPosts     *adsposts.Module
	Cards        *cards.Module
}

// AdsStore is what the ads features need of storage (*postgres.DB).
type AdsStore interface {
	accounts.Store
	campaigns.Store
	lineitems.Store
	promoted.Store
	targeting.Store
	categories.Store
	creatives.Store
	medialibrary.Store
	audiences.Store
	donotreach.Store
	permissions.Store
	catalogs.Store
	insights.Store
	adsposts.Store
	cards.Store
}

// NewAdsModules builds every ads feature on the kit and the store; urls
// builds the media URLs the media library and cards show (nil: none).
func NewAdsModules(kit adsx.Kit, st AdsStore, urls *render.MediaURLs) AdsModules {
	return AdsModules{
		Accounts:     accounts.New(accounts.Deps{Kit: kit, Store: st}),
		Campaigns:    campaigns.New(campaigns.Deps{Kit: kit, Store: st}),
		LineItems:    lineitems.New(lineitems.Deps{Kit: kit, Store: st}),
		Promoted:     promoted.New(promoted.Deps{Kit: kit, Store: st}),
		Targeting:    targeting.New(targeting.Deps{Kit: kit, Store: st}),
		Categories:   categories.New(categories.Deps{Kit: kit, Store: st}),
		Creatives:    creatives.New(creatives.Deps{Kit: kit, Store: st}),
		MediaLibrary: medialibrary.New(medialibrary.Deps{Kit: kit, Store: st, MediaURLs: urls}),
		Audiences:    audiences.New(audiences.Deps{Kit: kit, Store: st}),
		DoNotReach:   donotreach.New(donotreach.Deps{Kit: kit, Store: st}),
		Permissions:  permissions.New(permissions.Deps{Kit: kit, Store: st}),
		Catalogs:     catalogs.New(catalogs.Deps{Kit: kit, Store: st}),
		Insights:     insights.New(insights.Deps{Kit: kit, Store: st}),
		AdsPosts:     adsposts.New(adsposts.Deps{Kit: kit, Store: st}),
		Cards:        cards.New(cards.Deps{Kit: kit, Store: st, MediaURLs: urls}),
	}
}

// served names the feature modules set, as /_aviary/health lists them
// (core features by path, ads features under "ads/").
func (m Modules) served(sandbox bool) []string {
	var names []string
	add := func(name string, mod routable) {
		if mod != nil && !reflect.ValueOf(mod).IsNil() {
			names = append(names, name)
		}
	}
	if !sandbox {
		add("compliance", m.Compliance)
		add("media", m.Media)
		add("posts", m.Posts)
		add("users", m.Users)
		add("social", m.Social)
		add("dms", m.DMs)
		add("search", m.Search)
		add("news", m.News)
		add("spaces", m.Spaces)
		add("streams", m.Streams)
		add("webhooks", m.Webhooks)
		add("activity", m.ActivitySubscriptions)
		add("inspect", m.Inspect)
		add("usage", m.Usage)
	}
	a := m.Ads
	for name, mod := range map[string]routable{"accounts": a.Accounts, "campaigns": a.Campaigns, "line_items": a.LineItems,
		"promoted": a.Promoted, "targeting": a.Targeting, "categories": a.Categories, "creatives": a.Creatives,
		"media_library": a.MediaLibrary, "audiences": a.Audiences, "do_not_reach": a.DoNotReach,
		"permissions": a.Permissions, "catalogs": a.Catalogs, "insights": a.Insights, "posts": a.AdsPosts, "cards": a.Cards} {
		add("ads/"+name, mod)
	}
	return names
}

// routable is a feature module.
type routable interface{ Routes() []httpx.Endpoint }

// endpoints is every feature's endpoints, in the order they are listed
// here; the sandbox listener serves the ads features only.
func (m Modules) endpoints(sandbox bool) []httpx.Endpoint {
	var all []httpx.Endpoint
	if !sandbox {
		all = collect(m.Compliance, m.Media, m.Posts, m.Users, m.Social, m.DMs, m.Search, m.News, m.Spaces, m.Streams, m.Webhooks, m.ActivitySubscriptions, m.Inspect, m.Usage)
	}
	return append(all, m.Ads.Endpoints()...)
}

// Endpoints lists every endpoint the modules serve on a listener (the
// sandbox one serves the ads features only).
func (m Modules) Endpoints(sandbox bool) []httpx.Endpoint { return m.endpoints(sandbox) }

// Endpoints lists every ads feature's endpoints.
func (a AdsModules) Endpoints() []httpx.Endpoint {
	return collect(a.Accounts, a.Campaigns, a.LineItems, a.Promoted, a.Targeting, a.Categories, a.Creatives, a.MediaLibrary,
		a.Audiences, a.DoNotReach, a.Permissions, a.Catalogs, a.Insights, a.AdsPosts, a.Cards)
}

// collect lists the endpoints of the modules that are set.
func collect(mods ...routable) []httpx.Endpoint {
	var all []httpx.Endpoint
	for _, mod := range mods {
		if mod != nil && !reflect.ValueOf(mod).IsNil() {
			all = append(all, mod.Routes()...)
		}
	}
	return all
}

func (s *Server) routes() {
	stack := &httpx.Stack{Errors: s.Errors, Logger: s.Logger, Auth: s.Auth, Limiter: s.Limiter,
		RateLimitScale: s.RateLimitScale, Rules: s.limits}
	if s.Modules.Usage != nil && !s.Sandbox {
		stack.Meter = s.Modules.Usage
	}
	if s.Faults != nil {
		stack.Faults = s.Faults
		h := s.Faults.Handler()
		s.mux.Handle(faults.Path, h)
		s.mux.Handle(faults.Path+"/", h)
	}
	for _, e := range s.Modules.endpoints(s.Sandbox) {
		s.mux.Handle(e.Pattern, stack.Handler(e))
	}
	if s.Modules.Media != nil && !s.Sandbox {
		// Public and unauthenticated, like the platform's media host.
		s.mux.Handle(media.PublicPattern, httpx.Adapt(s.Errors, s.Logger, s.Modules.Media.ServePublic))
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /_aviary/health", s.aviaryHealth)
	s.describe()
	if s.Gatherer != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{
			ErrorLog: slog.NewLogLogger(s.Logger.Handler(), slog.LevelError), // its request line is only Debug
		}))
	}
	for prefix, h := range s.Mounts {
		s.mux.Handle(prefix, h)
	}
	s.mux.Handle("/", httpx.Adapt(s.Errors, s.Logger, s.unrouted))
}

// unrouted answers requests no endpoint matched: 405 when the path exists
// with other methods, else 404, both in the request's error envelope.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		return apierr.MethodNotAllowed(r.Method, allowed)
	}
	return apierr.RouteNotFound(r.URL.Path)
}
