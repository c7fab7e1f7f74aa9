package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynq/x/metrics"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/activity"
	"github.com/aviary-dev/aviary/api/admin"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/compliance"
	"github.com/aviary-dev/aviary/api/dms"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/inspect"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/api/posts"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/api/selfdoc"
	"github.com/aviary-dev/aviary/api/social"
	"github.com/aviary-dev/aviary/api/spaces"
	"github.com/aviary-dev/aviary/api/state"
	"github.com/aviary-dev/aviary/api/users"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// newModules builds every API feature module from the backends.
func newModules(cfg *config, b *backends, errs apierr.Writer, log *slog.Logger) (api.Modules, error) {
	val := validation.New()
	uploads, err := uploadSigner(b)
	if err != nil {
		return api.Modules{}, err
	}
	// The compliance upload gateway enqueues a job as soon as its upload is
	// recorded, media finalize enqueues the processing of the media; the
	// workers' sweepers stay the fallback.
	queue := asynq.NewClient(b.asynqRC)
	b.closers = append(b.closers, func() { queue.Close() })
	kit, err := adsKit(b, queue, log)
	if err != nil {
		return api.Modules{}, err
	}
	str, err := newStreams(cfg, b, errs, val, log)
	if err != nil {
		return api.Modules{}, err
	}
	hooks, err := newWebhooks(cfg, b, queue, val, log)
	if err != nil {
		return api.Modules{}, err
	}
	urls := render.NewMediaURLs(cfg.PublicURL)
	return api.Modules{
		Compliance: compliance.New(compliance.Deps{Store: b.apiDB, Blobs: b.blobs, Uploads: uploads, PublicURL: cfg.PublicURL, Queue: queue,
			MaxUpload: cfg.ComplianceMaxUpload, Validator: val, Problems: errs, Logger: log}),
		Media:    media.New(media.Deps{Store: b.apiDB, Blobs: b.blobs, Queue: queue, ImageWait: cfg.MediaImageWait, Validator: val, Logger: log}),
		Posts:    posts.New(posts.Deps{Store: b.apiDB, MediaURLs: urls, Validator: val, Problems: errs, CreatesPerDay: postsPerDay(cfg)}),
		Users:    users.New(users.Deps{Store: b.apiDB, MediaURLs: urls, Problems: errs}),
		Social:   social.New(social.Deps{Store: b.apiDB, MediaURLs: urls, Validator: val, Problems: errs}),
		Search:   search.New(search.Deps{Store: b.apiDB, MediaURLs: urls}),
		News:     news.New(news.Deps{Store: b.apiDB, MediaURLs: urls, Problems: errs}),
		Spaces:   spaces.New(spaces.Deps{Store: b.apiDB, MediaURLs: urls, Problems: errs}),
		Streams:  str,
		Webhooks: hooks,
		ActivitySubscriptions: activity.NewSubscriptions(activity.SubscriptionDeps{Store: b.apiDB, Validator: val, Logger: log,
			Cap: cfg.ActivitySubscriptionCap}),
		Inspect: inspect.New(b.apiDB),
		Usage:   startUsageMeter(cfg, b, errs, log),
		DMs:     dms.New(dms.Deps{Store: b.apiDB, MediaURLs: urls, Validator: val}),
		Ads:     api.NewAdsModules(kit, b.apiDB, urls),
	}, nil
}

// postsPerDay is the 24-hour limits of post creation as configured.
func postsPerDay(cfg *config) posts.DayLimits {
	return posts.DayLimits{App: cfg.PostsAppPerDay, User: cfg.PostsUserPerDay}
}

// adsCursorKey names the key of the ads list cursors in url_signing_keys.
const adsCursorKey = "ads-cursor"

// adsKit builds the ads kit: the account check on the API's store, the
// cursor signer with the key every replica shares through PostgreSQL, and
// the queue.
func adsKit(b *backends, queue tasks.Enqueuer, log *slog.Logger) (adsx.Kit, error) {
	candidate, err := blob.NewSigningKey()
	if err != nil {
		return adsx.Kit{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key, err := b.db.URLSigningKey(ctx, adsCursorKey, candidate)
	if err != nil {
		return adsx.Kit{}, fmt.Errorf("load the ads cursor key: %w", err)
	}
	cursors, err := adsx.NewCursors(key)
	if err != nil {
		return adsx.Kit{}, err
	}
	return adsx.Kit{Accounts: b.apiDB, Cursors: cursors, Queue: queue, Logger: log}, nil
}

// uploadSigningKey names the key of the compliance upload URLs in
// PostgreSQL's url_signing_keys.
const uploadSigningKey = "compliance-upload"

// uploadSigner signs the compliance upload URLs with the key every API
// replica shares through PostgreSQL (the first replica to start stores it).
func uploadSigner(b *backends) (*blob.URLSigner, error) {
	candidate, err := blob.NewSigningKey()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key, err := b.db.URLSigningKey(ctx, uploadSigningKey, candidate)
	if err != nil {
		return nil, fmt.Errorf("load the upload URL signing key: %w", err)
	}
	return blob.NewURLSigner(key)
}

// listener is one HTTP listener of the API process and what it serves.
type listener struct {
	name    string
	addr    string
	handler *api.Server
	// beforeShutdown runs after draining, before the server's Shutdown
	// waits for requests: it ends the streams (the hub's Stop), which
	// would otherwise hold Shutdown for its whole grace period.
	beforeShutdown func(context.Context)
	// connState, when set, also sees every connection state change (tests
	// wait on it for a request to be running).
	connState func(net.Conn, http.ConnState)
}

// newAPIListeners assembles the API handler with its middleware and mounts,
// and, when AVIARY_SANDBOX_ADDR is set, the ads sandbox beside it; reg
// receives the API's metrics (and, in dev mode, the workers').
func newAPIListeners(cfg *config, b *backends, log *slog.Logger, reg *prometheus.Registry) ([]listener, error) {
	errWriter := apierr.Writer{ProblemsBase: cfg.ProblemsBase, Logger: log}
	modules, err := newModules(cfg, b, errWriter, log)
	if err != nil {
		return nil, err
	}
	platform, err := platformDescription(cfg)
	if err != nil {
		return nil, err
	}
	main, err := newAPIHandler(cfg, b, modules, errWriter, log, reg, platform)
	if err != nil {
		return nil, err
	}
	out := []listener{{name: "api", addr: cfg.HTTPAddr, handler: main, beforeShutdown: modules.Streams.Hub.Stop}}
	if cfg.SandboxAddr == "" || cfg.SandboxAddr == "off" {
		return out, nil
	}
	authn, err := newAuthenticator(cfg, b, cfg.SandboxPublicURL, errWriter)
	if err != nil {
		return nil, err
	}
	sreg := prometheus.NewRegistry() // its own: the same metric names, counted apart
	sandbox := api.New(api.Deps{
		Modules: modules, Auth: authn, Sandbox: true,
		Limiter: startLimiter(b, "aviary:sandbox:", errWriter),
		Errors:  errWriter, Logger: log.With("listener", "sandbox"), Registerer: sreg, Gatherer: sreg,
		RateLimitScale: cfg.RateLimitScale,
		Ready:          main.Ready,
		Version:        main.Version,
		Queues:         main.Queues,
		Platform:       platform, PublicURL: cfg.SandboxPublicURL,
		Faults: main.Faults,
	})
	return append(out, listener{name: "ads sandbox", addr: cfg.SandboxAddr, handler: sandbox}), nil
}

// platformDescription reads the platform's OpenAPI description
// (AVIARY_OPENAPI_FILE); nil when none is configured.
func platformDescription(cfg *config) (*selfdoc.Platform, error) {
	if cfg.OpenAPIFile == "" {
		return nil, nil
	}
	p, err := selfdoc.LoadPlatform(cfg.OpenAPIFile)
	if err != nil {
		return nil, fmt.Errorf("AVIARY_OPENAPI_FILE: %w", err)
	}
	return p, nil
}

// startLimiter returns a rate limiter on the backends' Redis whose unused
// leases are given back while the process runs and when it stops
// (ratelimit.Limiter.Run).
func startLimiter(b *backends, prefix string, errWriter apierr.Writer) *ratelimit.Limiter {
	l := ratelimit.NewLimiter(b.redis, prefix, time.Now, errWriter)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(ctx)
	}()
	b.closers = append(b.closers, func() { cancel(); <-done })
	return l
}

// newAuthenticator verifies credentials for requests signed for publicURL
// (in dev mode, for its loopback spellings too) and for the signature
// bases (AVIARY_OAUTH_SIGNATURE_BASES).
func newAuthenticator(cfg *config, b *backends, publicURL string, errWriter apierr.Writer) (*auth.Authenticator, error) {
	authn, err := auth.New(principalStore(b, cfg.AuthCacheTTL), auth.NewRedisNonceStore(b.redis, "aviary:nonce:").WithTimeout(cfg.DependencyTimeout), publicURL, time.Now, errWriter)
	if err != nil {
		return nil, fmt.Errorf("configure authentication: %w", err)
	}
	if cfg.dev {
		authn.AcceptLoopbackSpellings()
	}
	bases, err := cfg.signatureBases()
	if err != nil {
		return nil, err
	}
	if len(bases) > 0 {
		authn.AcceptSignatureBases(bases)
	}
	return authn, nil
}

// newAPIHandler assembles the main API handler with its middleware and
// mounts.
func newAPIHandler(cfg *config, b *backends, modules api.Modules, errWriter apierr.Writer, log *slog.Logger, reg *prometheus.Registry, platform *selfdoc.Platform) (*api.Server, error) {
	authn, err := newAuthenticator(cfg, b, cfg.PublicURL, errWriter)
	if err != nil {
		return nil, err
	}
	if bases, _ := cfg.signatureBases(); len(bases) > 0 {
		names := make([]string, len(bases))
		for i, u := range bases {
			names[i] = u.String()
		}
		log.Warn("OAuth 1.0a signatures over other base URLs are accepted (AVIARY_OAUTH_SIGNATURE_BASES; development only: a signature made for those hosts could be replayed here)", "bases", strings.Join(names, ","))
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	inspector := asynq.NewInspector(b.asynqRC)
	reg.MustRegister(metrics.NewQueueMetricsCollector(inspector))
	b.closers = append(b.closers, func() { inspector.Close() })
	mounts, err := newMounts(cfg, b, errWriter, log)
	if err != nil {
		return nil, err
	}
	injector, err := newFaults(cfg, b, authn, errWriter, log)
	if err != nil {
		return nil, err
	}
	limiter := startLimiter(b, "aviary:", errWriter)
	opsStore, opsRec := startOpsRecorder(b, log)
	var srv *api.Server // its rules are known once it is built
	sandbox := consoleSandbox(b, injector)
	sandbox.ops = opsStore
	sandbox.rateLimits = consoleRateLimits(limiter, func() []ratelimit.Rule { return srv.RateLimits() })
	sandbox.openBlob, sandbox.endStreams = consoleOpenBlob(b.blobs), consoleEndStreams(modules.Streams.Hub)
	if err := addWebMounts(cfg, b, authn, queueDepths(inspector), sandbox, log, mounts); err != nil {
		return nil, err
	}
	if h, ok := mounts["/blobs/"]; ok {
		mounts["/blobs/"] = limitBlobsPerJob(limiter, cfg.RateLimitScale, b.local.VerifyRequest, h)
	}
	srv = api.New(api.Deps{
		Modules: modules,
		Auth:    authn,
		Limiter: limiter,
		Faults:  injector,
		Ops:     opsRec,
		Errors:  errWriter, Logger: log, Registerer: reg, Gatherer: reg, Mounts: mounts,
		RateLimitScale: cfg.RateLimitScale,
		Version:        buildVersion(),
		Queues:         queueDepths(inspector),
		Platform:       platform, PublicURL: cfg.PublicURL,
		Ready: []api.Check{
			{Name: "database", Check: b.apiDB.Ping},
			{Name: "redis", Check: func(ctx context.Context) error { return b.redis.Ping(ctx).Err() }},
			{Name: "blobs", Check: b.blobs.Ping},
		},
	})
	return srv, nil
}

// newMounts builds the non-API handlers the listener serves: the local blob
// driver's presigned URLs and the queue dashboard behind the admin guard
// (api/admin: basic auth, a login throttle shared through Redis, a
// same-origin check on writes).
func newMounts(cfg *config, b *backends, errs apierr.Writer, log *slog.Logger) (map[string]http.Handler, error) {
	m := map[string]http.Handler{}
	if b.local != nil {
		m["/blobs/"] = b.local.Handler()
	}
	if cfg.AdminPassword != "" {
		guard, err := admin.New(admin.Options{User: cfg.AdminUser, Password: cfg.AdminPassword, PublicURL: cfg.PublicURL,
			Throttle: admin.NewRedisThrottle(b.redis, "aviary:admin-login:", admin.DefaultLimits), Errors: errs, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("configure /admin/queues: %w", err)
		}
		mon := asynqmon.New(asynqmon.Options{RootPath: "/admin/queues", RedisConnOpt: b.asynqRC, ReadOnly: false})
		m["/admin/queues/"] = guard.Wrap(mon)
		// The sandbox reset (docs/state.md), behind the same guard.
		reset := &stateService{db: b.db, rdb: b.redis, clearers: stateClearers(b.redis)}
		m["POST /_aviary/state/reset"] = guard.Wrap(state.Handler(reset, errs, log))
		b.closers = append(b.closers, func() { mon.Close() })
	}
	return m, nil
}

// blobRequestsPerJob is the limit on /blobs/ requests (the local driver's
// download URLs) per compliance job and 15-minute window: room for a
// download manager's range requests, not for a flood.
const blobRequestsPerJob = 150

// limitBlobsPerJob rate limits the local driver's /blobs/ handler per
// compliance job (the job of the object key), scaled like every endpoint's
// limit. Keys of no compliance job are not limited.
func limitBlobsPerJob(l *ratelimit.Limiter, scale float64, verify func(*http.Request) error, next http.Handler) http.Handler {
	if scale <= 0 {
		scale = 1
	}
	rule := ratelimit.Rule{Name: "blobs_per_job", Limit: max(int(float64(blobRequestsPerJob)*scale), 1), Window: httpx.Window,
		Scope: ratelimit.PerResource, Resource: "job"}
	limited := l.Middleware(rule)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only signed requests count: forged ones (the handler answers 403)
		// must not use up the job owner's quota.
		if id, ok := storage.ComplianceJobOfKey(strings.TrimPrefix(r.URL.Path, "/blobs/")); ok && verify(r) == nil {
			r.SetPathValue(rule.Resource, strconv.FormatInt(id, 10))
			limited.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// principalStore is the credential store of authentication: the API's pool
// behind an in-process cache (auth.Cache) that drops entries when a change
// is announced on Redis pub/sub (aviary admin announces revocations and user
// state changes) and after ttl (AVIARY_AUTH_CACHE_TTL) otherwise; ttl 0 means
// no cache.
func principalStore(b *backends, ttl time.Duration) auth.Store {
	if ttl == 0 {
		return b.apiDB
	}
	cache := auth.NewCache(ttl, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	cache.Start(ctx, b.redis, auth.InvalidationChannel)
	b.closers = append(b.closers, cancel)
	return auth.CachedStore(b.apiDB, cache)
}
