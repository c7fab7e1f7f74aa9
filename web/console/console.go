// Package console is the developer console (docs/console.md): pages at
// /console on the API listener, behind the same login as the consent
// pages, where a user manages their apps and tokens, sees their compliance
// jobs progress and their webhooks' deliveries, and where an administrator
// (users.is_admin) sees every app and manages users. Pages are
// server-rendered html/templates; htmx (vendored, web/static) only polls
// fragments, so every page works without JavaScript too.
package console

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// Store is what the console reads and writes (storage/postgres.DB): the
// same functions `aviary admin` and the API use, and the console's lists.
type Store interface {
	UserByID(ctx context.Context, id int64) (storage.User, error)
	UserPassword(ctx context.Context, username string) (storage.User, string, error)
	IsUserAdmin(ctx context.Context, userID int64) (bool, error)

	ConsoleApps(ctx context.Context, ownerID int64, all bool) ([]storage.ConsoleApp, error)
	AppByID(ctx context.Context, id int64) (storage.App, error)
	AppOwner(ctx context.Context, appID int64) (int64, error)
	CreateApp(ctx context.Context, name, callbackURL string) (storage.App, error)
	SetAppOwner(ctx context.Context, appID, userID int64) error
	CreateBearerToken(ctx context.Context, appID int64) (storage.BearerToken, error)
	RevokeBearerToken(ctx context.Context, token string) error
	AppBearerTokens(ctx context.Context, appID int64) ([]storage.ConsoleToken, error)
	AppAccessTokens(ctx context.Context, appID int64) ([]storage.ConsoleToken, error)
	AppTokenByRef(ctx context.Context, appID int64, bearer bool, ref storage.TokenRef) (string, error)
	EnsureAccessToken(ctx context.Context, appID, userID int64, level string) (storage.AccessToken, error)
	RevokeAccessToken(ctx context.Context, token string) error
	AppOAuth2Grants(ctx context.Context, appID int64) ([]storage.ConsoleGrant, error)
	RevokeOAuth2Grant(ctx context.Context, appID, familyID int64, now time.Time) error
	CallbackURLs(ctx context.Context, appID int64) ([]string, error)
	AddCallbackURL(ctx context.Context, appID int64, url string) error
	RemoveCallbackURL(ctx context.Context, appID int64, url string) error

	ConsoleUsers(ctx context.Context, limit int) ([]storage.User, error)
	CreateUser(ctx context.Context, username, name string) (storage.User, error)
	SetUserPassword(ctx context.Context, userID int64, hash string) error
	SetUserState(ctx context.Context, id int64, state string, at time.Time) (storage.User, error)
	SetUserFlag(ctx context.Context, id int64, flag string, on bool) error

	ConsoleComplianceJobs(ctx context.Context, apps []int64, limit int) ([]storage.ComplianceJob, error)

	Webhooks(ctx context.Context, appID int64) ([]storage.Webhook, error)
	WebhookOf(ctx context.Context, appID, id int64) (storage.Webhook, error)
	WebhookDeliveries(ctx context.Context, q storage.WebhookDeliveryQuery) ([]storage.WebhookDelivery, error)
	RedeliverWebhookDelivery(ctx context.Context, appID, webhookID, id int64) (storage.WebhookDelivery, error)

	AdsStore
	// Posts, media, streams and activity (posts.go, media.go, streams.go,
	// activity.go).
	SearchPosts(ctx context.Context, s storage.PostSearch) (storage.PostPage, error)
	UsersByIDs(ctx context.Context, userIDs []int64) ([]storage.User, error)
	ConsoleMedia(ctx context.Context, apps []int64, all bool, limit int) ([]storage.Media, error)
	Media(ctx context.Context, id int64) (storage.Media, error)
	ConsoleStreamConnections(ctx context.Context, apps []int64, all bool, limit int) ([]storage.StreamConnection, error)
	RequestStreamTermination(ctx context.Context, t storage.ConnectionTermination) ([]string, error)
	ConsoleActivitySubscriptions(ctx context.Context, apps []int64, all bool, limit int) ([]storage.ActivitySubscription, error)
	DeleteActivitySubscriptions(ctx context.Context, appID int64, ids []int64) ([]int64, error)
}

// Notify tells the API replicas' credential caches about a change
// (cmd/aviary wires auth.Publisher). Any func may be nil.
type Notify struct {
	BearerRevoked      func(ctx context.Context, token string) error
	AccessTokenRevoked func(ctx context.Context, token string) error
	OAuth2Revoked      func(ctx context.Context) error
	UserChanged        func(ctx context.Context, userID int64) error
}

// Queue is one work queue's depth, from the same source as
// /_aviary/health.
type Queue struct {
	Name                                              string
	Size, Pending, Active, Scheduled, Retry, Archived int
	LatencyMS                                         int64
	Paused                                            bool
}

// Config is what the console is built from.
type Config struct {
	Store  Store
	Kit    *web.Kit
	Notify Notify
	// Queues lists the work queues' depths (nil: the page says it cannot).
	Queues func(ctx context.Context) ([]Queue, error)
	// QueueDashboard: /admin/queues/ is mounted (AVIARY_ADMIN_PASSWORD).
	QueueDashboard bool
	// Faults is the faults on demand store (nil: the page says it cannot).
	Faults Faults
	// Usage reads the apps' usage and credits (nil: the page says it cannot).
	Usage UsageStore
	// Ops reads the API's recent errors and the requests and task runs
	// per minute (nil: those pages say they cannot).
	Ops Ops
	// RateLimits reads the API rate limiter's counters (nil: the page
	// says it cannot).
	RateLimits RateLimits
	// ResetState resets the sandbox (nil: no reset button).
	ResetState ResetState
	// OpenBlob reads a media object from the blob store (nil: no
	// previews); a missing object is storage.ErrNotFound.
	OpenBlob OpenBlob
	// EndStreams tells every API replica to end the connections just
	// marked for termination (nil: each replica's poll finds the marks
	// within seconds).
	EndStreams EndStreams
	Now        func() time.Time
}

// Server serves the console.
type Server struct {
	cfg   Config
	store Store
	kit   *web.Kit
	log   *slog.Logger
	pages *pages
}

// New returns the console.
func New(cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, store: cfg.Store, kit: cfg.Kit, log: cfg.Kit.Log, pages: p}, nil
}

// Paths are the paths cmd/aviary mounts the Handler on.
var Paths = []string{"/console", "/console/"}

// ContentSecurityPolicy is the console's: the web tier's, plus scripts
// (htmx) and its requests, and the media page's videos, from the page's
// own origin only.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; media-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves every console page behind the web tier's security headers.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/apps", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/apps", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /console/login", s.loginPage)
	mux.HandleFunc("POST /console/login", s.loginPost)
	mux.HandleFunc("POST /console/logout", s.form(s.logout))

	mux.HandleFunc("GET /console/apps", s.page(s.apps))
	mux.HandleFunc("POST /console/apps", s.form(s.createApp))
	mux.HandleFunc("GET /console/apps/{app}", s.page(s.app))
	mux.HandleFunc("POST /console/apps/{app}/bearer-tokens", s.form(s.createBearer))
	mux.HandleFunc("POST /console/apps/{app}/bearer-tokens/revoke", s.form(s.revokeBearer))
	mux.HandleFunc("POST /console/apps/{app}/access-tokens", s.form(s.createAccessToken))
	mux.HandleFunc("POST /console/apps/{app}/access-tokens/revoke", s.form(s.revokeAccessToken))
	mux.HandleFunc("POST /console/apps/{app}/grants/revoke", s.form(s.revokeGrant))
	mux.HandleFunc("POST /console/apps/{app}/callbacks", s.form(s.addCallback))
	mux.HandleFunc("POST /console/apps/{app}/callbacks/remove", s.form(s.removeCallback))

	mux.HandleFunc("GET /console/users", s.page(s.users))
	mux.HandleFunc("POST /console/users", s.form(s.createUser))
	mux.HandleFunc("POST /console/users/{user}/state", s.form(s.setUserState))
	mux.HandleFunc("POST /console/users/{user}/verified", s.form(s.setVerified))

	mux.HandleFunc("GET /console/compliance", s.page(s.compliance))
	mux.HandleFunc("GET /console/compliance/jobs", s.page(s.complianceJobs))

	mux.HandleFunc("GET /console/webhooks", s.page(s.webhooks))
	mux.HandleFunc("GET /console/apps/{app}/webhooks/{webhook}", s.page(s.webhook))
	mux.HandleFunc("POST /console/apps/{app}/webhooks/{webhook}/deliveries/{delivery}/redeliver", s.form(s.redeliver))

	mux.HandleFunc("GET /console/queues", s.page(s.queues))

	mux.HandleFunc("GET /console/faults", s.page(s.faultsPage))
	mux.HandleFunc("POST /console/faults", s.form(s.createFault))
	mux.HandleFunc("POST /console/faults/clear", s.form(s.clearFaults))
	mux.HandleFunc("POST /console/faults/{fault}/delete", s.form(s.deleteFault))
	mux.HandleFunc("GET /console/usage", s.page(s.usage))
	mux.HandleFunc("GET /console/apps/{app}/usage", s.page(s.appUsagePage))
	mux.HandleFunc("GET /console/ratelimits", s.page(s.rateLimitsPage))
	mux.HandleFunc("GET /console/errors", s.page(s.errorsPage))
	mux.HandleFunc("GET /console/charts", s.page(s.chartsPage))
	mux.HandleFunc("GET /console/state", s.page(s.statePage))
	mux.HandleFunc("POST /console/state/reset", s.form(s.resetState))
	s.adsRoutes(mux)

	mux.HandleFunc("GET /console/posts", s.page(s.posts))
	mux.HandleFunc("GET /console/media", s.page(s.mediaPage))
	mux.HandleFunc("GET /console/media/uploads", s.page(s.mediaUploads))
	mux.HandleFunc("GET /console/media/{media}/preview", s.page(s.mediaPreview))
	mux.HandleFunc("GET /console/media/{media}/video", s.page(s.mediaVideo))
	mux.HandleFunc("GET /console/streams", s.page(s.streamsPage))
	mux.HandleFunc("POST /console/apps/{app}/streams/{conn}/kill", s.form(s.killStream))
	mux.HandleFunc("GET /console/activity", s.page(s.activityPage))
	mux.HandleFunc("POST /console/apps/{app}/activity/{sub}/delete", s.form(s.deleteActivity))
	return web.SecureHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
		mux.ServeHTTP(w, r)
	}))
}

// viewer is the logged-in user of a request and what they may see.
type viewer struct {
	User  storage.User
	Admin bool
	sess  web.Session
	csrf  string
}

// handler is a console handler for a logged-in viewer.
type handler func(w http.ResponseWriter, r *http.Request, v viewer)

// page wraps a GET handler: no session sends the browser to the login page.
func (s *Server) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok, err := s.viewer(r)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		if !ok {
			if r.Header.Get("HX-Request") == "true" { // a poll after the session ended: reload into the login page
				w.Header().Set("HX-Redirect", "/console/login")
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/console/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(w, r, v)
	}
}

// form wraps a POST handler: the form must carry the session's CSRF token
// (403 otherwise) and a logged-in session (else the login page).
func (s *Server) form(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		sess := s.kit.Sessions.Load(r)
		if err := r.ParseForm(); err != nil || !s.kit.Sessions.CheckCSRF(r, sess) {
			s.problem(w, r, nil, http.StatusForbidden, "This form has expired",
				"The form was sent without a valid security token (it may be too old, or sent from another site). Go back, reload the page and try again.")
			return
		}
		v, ok, err := s.viewer(r)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		if !ok {
			http.Redirect(w, r, "/console/login", http.StatusSeeOther)
			return
		}
		h(w, r, v)
	}
}

// viewer loads the session's user if it may log in, and whether they are
// an administrator.
func (s *Server) viewer(r *http.Request) (viewer, bool, error) {
	sess := s.kit.Sessions.Load(r)
	if !sess.LoggedIn() {
		return viewer{}, false, nil
	}
	u, err := s.store.UserByID(r.Context(), sess.UserID)
	if errors.Is(err, storage.ErrNotFound) {
		return viewer{}, false, nil
	}
	if err != nil {
		return viewer{}, false, err
	}
	if !mayLogIn(u) {
		return viewer{}, false, nil
	}
	admin, err := s.store.IsUserAdmin(r.Context(), u.ID)
	if err != nil {
		return viewer{}, false, err
	}
	return viewer{User: u, Admin: admin, sess: sess, csrf: s.kit.Sessions.CSRFToken(sess)}, true, nil
}

// mayLogIn reports whether an account may log in (as the consent pages).
func mayLogIn(u storage.User) bool {
	return u.DeletedAt == nil && u.DeactivatedAt == nil && u.SuspendedAt == nil
}

// visibleApp loads the app of the path's {app} if the viewer may see it:
// theirs, or any for an administrator. Another user's app is not found
// (404), as an unknown one.
func (s *Server) visibleApp(w http.ResponseWriter, r *http.Request, v viewer) (storage.App, bool) {
	id, err := strconv.ParseInt(r.PathValue("app"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return storage.App{}, false
	}
	app, err := s.store.AppByID(r.Context(), id)
	if !s.found(w, r, v, err) {
		return storage.App{}, false
	}
	if !v.Admin {
		owner, err := s.store.AppOwner(r.Context(), app.ID)
		if err != nil {
			s.kit.Fail(w, r, err)
			return storage.App{}, false
		}
		if owner != v.User.ID {
			s.notFound(w, r, v)
			return storage.App{}, false
		}
	}
	return app, true
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, v viewer) {
	s.problem(w, r, &v, http.StatusNotFound, "Not found", "There is nothing here, or it is not yours to see.")
}

// visibleApps are the viewer's apps (every app for an administrator).
func (s *Server) visibleApps(ctx context.Context, v viewer) ([]storage.ConsoleApp, error) {
	return s.store.ConsoleApps(ctx, v.User.ID, v.Admin)
}

// notify runs f if set; a failure is logged (the change is committed; the
// caches expire within their TTL).
func (s *Server) notify(ctx context.Context, what string, f func(context.Context) error) {
	if f == nil {
		return
	}
	if err := f(ctx); err != nil {
		s.log.WarnContext(ctx, "console: announce change", "what", what, "error", err)
	}
}

// found reports whether err is nil; otherwise it answers: 404 (the
// console's page) for storage.ErrNotFound, the failure page for the rest.
func (s *Server) found(w http.ResponseWriter, r *http.Request, v viewer, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, storage.ErrNotFound):
		s.notFound(w, r, v)
	default:
		s.kit.Fail(w, r, err)
	}
	return false
}
