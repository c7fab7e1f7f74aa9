// Package apitest runs the core API (every feature of api.Modules) on real
// PostgreSQL, Redis and a local blob store for the tests of the api root
// and of the feature packages, and calls it as the platform's clients do:
// a bearer token, or OAuth 1.0a user context signed for a named user.
//
//	b := apitest.Setup(t, 100)
//	r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "hi"}))
//	if r.Status != 201 { t.Fatalf("%d %s", r.Status, r.Raw) }
//
// Only _test.go files import it (internal/archtest): it builds the whole
// server, so it imports every feature.
package apitest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/activity"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/compliance"
	"github.com/aviary-dev/aviary/api/dms"
	"github.com/aviary-dev/aviary/api/inspect"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/api/posts"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/api/social"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/api/users"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/validation"
)

// Problems is the prefix of the core API's Problem types.
const Problems = "https://api.x.com/2/problems/"

// Bundle is one API server on real PostgreSQL, Redis and local blobs, with
// two apps and users holding access tokens for the first.
type Bundle struct {
	Srv          *httptest.Server
	API          *api.Server
	DB           *postgres.DB
	DBURL        string
	App, Other   storage.App
	Bearer       string
	OtherBearer  string
	User, Author storage.User
	Token        storage.AccessToken
	AuthorToken  storage.AccessToken
	// Tokens holds further access tokens of the first app by the name
	// Call's "oauth:<name>" uses (see AddUser).
	Tokens map[string]storage.AccessToken
	// BlobDir is the local blob store's directory.
	BlobDir string
}

// PublicURL is the public base URL the test modules build media URLs on.
const PublicURL = "http://aviary.test"

// Modules builds the compliance, media, posts, users, search, news and streams
// modules on db with a local blob store in a temporary directory, as every
// API test server serves them.
func Modules(t testing.TB, db *postgres.DB, w apierr.Writer, log *slog.Logger) api.Modules {
	t.Helper()
	return ModulesIn(t, db, w, log, t.TempDir())
}

// ModulesIn is Modules with the blob store in dir.
func ModulesIn(t testing.TB, db *postgres.DB, w apierr.Writer, log *slog.Logger, dir string) api.Modules {
	t.Helper()
	blobs, err := local.New(local.Options{Dir: dir, BaseURL: "http://blobs.invalid"})
	if err != nil {
		t.Fatalf("local blobs: %v", err)
	}
	val := validation.New()
	urls := render.NewMediaURLs(PublicURL)
	return api.Modules{
		Compliance: compliance.New(compliance.Deps{Store: db, Blobs: blobs, Validator: val, Problems: w, Logger: log}),
		Media:      media.New(media.Deps{Store: db, Blobs: blobs, Validator: val, Logger: log}),
		Posts:      posts.New(posts.Deps{Store: db, MediaURLs: urls, Validator: val, Problems: w}),
		Users:      users.New(users.Deps{Store: db, MediaURLs: urls, Problems: w}),
		Social:     social.New(social.Deps{Store: db, MediaURLs: urls, Validator: val, Problems: w}),
		Search:     search.New(search.Deps{Store: db, MediaURLs: urls}),
		News:       news.New(news.Deps{Store: db, MediaURLs: urls, Problems: w}),
		// Without a hub the stream answers operational-disconnect; SetupOn
		// gives it one.
		Streams: streams.New(streams.Deps{Store: db, MediaURLs: urls, Validator: val, Problems: w, Errors: w, Logger: log}),
		// No allow-list: the CRC of a test's local receiver needs one
		// (api/webhooks' tests build their own module).
		Webhooks:              webhooks.New(webhooks.Deps{Store: db, Validator: val, Logger: log}),
		ActivitySubscriptions: activity.NewSubscriptions(activity.SubscriptionDeps{Store: db, Validator: val, Logger: log}),
		Inspect:               inspect.New(db),
		DMs:                   dms.New(dms.Deps{Store: db, MediaURLs: urls, Validator: val}),
	}
}

// Setup starts a bundle whose rate limits are scaled by rateScale; opts
// adjust the API dependencies before New.
func Setup(t testing.TB, rateScale float64, opts ...func(*api.Deps)) *Bundle {
	t.Helper()
	return SetupOn(t, rateScale, func(_ *postgres.DB, d *api.Deps) {
		for _, opt := range opts {
			opt(d)
		}
	})
}

// SetupOn starts a bundle; opt adjusts the API dependencies, on the
// bundle's database, before New.
func SetupOn(t testing.TB, rateScale float64, opt func(*postgres.DB, *api.Deps)) *Bundle {
	t.Helper()
	db, dbURL := storagetest.NewDB(t)
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	w := apierr.Writer{}
	authn, err := auth.New(db, auth.NewRedisNonceStore(rc, "t:nonce:"), "", time.Now, w)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	blobDir := t.TempDir()
	deps := api.Deps{
		Modules: ModulesIn(t, db, w, log, blobDir),
		Auth:    authn, Errors: w, RateLimitScale: rateScale,
		Logger:  log,
		Limiter: ratelimit.NewLimiter(rc, "t:", time.Now, w),
		Ready:   []api.Check{{Name: "database", Check: db.Ping}},
	}
	// The streams feature on an unstarted hub: streams open, keep alive
	// and end, but receive no matches (api/streams' tests start their own).
	deps.Modules.Streams.Hub = streams.NewHub(streams.HubDeps{Bus: bus.New(rc, "t:"), Conns: db, Replica: "apitest", Logger: log})
	opt(db, &deps)
	handler := api.New(deps)
	b := &Bundle{Srv: httptest.NewServer(handler), API: handler, DB: db, DBURL: dbURL, Tokens: map[string]storage.AccessToken{}, BlobDir: blobDir}
	t.Cleanup(b.Srv.Close)
	if s := deps.Modules.Streams; s != nil && s.Hub != nil {
		// Before Close, which waits for every request: the hub ends the
		// streams (operational-disconnect), as on a replica's shutdown.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Hub.Stop(ctx)
		})
	}
	b.App, b.Bearer = NewApp(t, db, "first")
	b.Other, b.OtherBearer = NewApp(t, db, "second")
	b.User, b.Token = NewUser(t, db, b.App, "reader")
	b.Author, b.AuthorToken = NewUser(t, db, b.App, "author")
	return b
}

// NewApp creates an app and returns it with the Authorization header of a
// bearer token of it.
func NewApp(t testing.TB, db *postgres.DB, name string) (storage.App, string) {
	t.Helper()
	app, err := db.CreateApp(context.Background(), name, "")
	if err != nil {
		t.Fatalf("create app: %v", err)
	}
	tok, err := db.CreateBearerToken(context.Background(), app.ID)
	if err != nil {
		t.Fatalf("create bearer: %v", err)
	}
	return app, "Bearer " + tok.Token
}

// NewUser creates a user with a read-write access token of app.
func NewUser(t testing.TB, db *postgres.DB, app storage.App, name string) (storage.User, storage.AccessToken) {
	t.Helper()
	u, err := db.CreateUser(context.Background(), name, name)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	tok, err := db.EnsureAccessToken(context.Background(), app.ID, u.ID, "read-write")
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return u, tok
}

// AddUser creates a user with an access token of the first app at level;
// Call signs as them with "oauth:"+name.
func (b *Bundle) AddUser(t testing.TB, name, level string) storage.User {
	t.Helper()
	u, err := b.DB.CreateUser(context.Background(), name, name)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	tok, err := b.DB.EnsureAccessToken(context.Background(), b.App.ID, u.ID, level)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	b.Tokens[name] = tok
	return u
}
