package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/tasks"
)

// config is every setting of every subcommand. Each field comes from its
// AVIARY_* environment variable (default below) and can be overridden by the
// flag of the same name.
type config struct {
	DatabaseURL      string
	RedisURL         string
	HTTPAddr         string
	HTTPReadTimeout  time.Duration
	SandboxAddr      string
	SandboxPublicURL string
	PublicURL        string
	ProblemsBase     string
	BlobDriver       string
	BlobDir          string
	S3Endpoint       string
	S3PublicEndpoint string
	S3Bucket         string
	S3AccessKey      string
	S3SecretKey      string
	S3Region         string
	S3Watch          bool
	TLSCert          string
	TLSKey           string
	AdminUser        string
	AdminPassword    string
	// SeedDir holds the state files applied once at start-up (docs/state.md).
	SeedDir           string
	WorkerQueues      string
	WorkerConcurrency int
	WorkerMetricsAddr string
	ShutdownTimeout   time.Duration
	DrainDelay        time.Duration
	Reconcile         bool
	ReconcileInterval time.Duration
	TaskCheckInterval time.Duration
	RateLimitScale    float64
	// PostsAppPerDay and PostsUserPerDay are the 24-hour limits of
	// POST /2/tweets, per app and per user.
	PostsAppPerDay  int
	PostsUserPerDay int
	// Usage are the usage caps and credit prices (docs/usage-and-credits.md).
	Usage             usageConfig
	DependencyTimeout time.Duration
	AuthCacheTTL      time.Duration
	LogLevel          string
	LogFormat         string
	LogFlushInterval  time.Duration

	// ComplianceMaxUpload caps one compliance upload, in bytes.
	ComplianceMaxUpload int64
	// FetchAllowlist lists host:port entries worker fetches (product
	// images) may reach even when private or loopback (tests).
	FetchAllowlist string
	// OpenAPIFile is the platform's OpenAPI description whose schemas the
	// served description uses (docs/openapi.md); empty: Aviary's own.
	OpenAPIFile string
	// InsightsPairSample: one post in this many feeds the keyword
	// insights term pairs (docs/insights.md).
	InsightsPairSample int
	// NewsInterval is how often workers refresh the news stories.
	NewsInterval time.Duration
	// EventsRetention is how long the event log keeps events.
	EventsRetention time.Duration
	// StreamConnectionsRetention is how long closed stream connection
	// records are kept (the history GET /2/connections lists).
	StreamConnectionsRetention time.Duration
	// StreamRulesMax and StreamRuleMaxLength cap an app's filtered-stream
	// rules: how many, and how long each (docs/streams-rules.md).
	StreamRulesMax      int
	StreamRuleMaxLength int
	// Media processing budgets (docs/media-upload.md).
	MediaVideoMaxPixelRate int64
	MediaVideoMaxPixels    int64
	MediaVideoSlots        int
	MediaImageSlots        int
	MediaImageWait         time.Duration
	// StreamConnections is the open streams an app may hold; StreamKeepAlive
	// how often an idle stream sends "\r\n" (docs/streams.md).
	StreamConnections int
	StreamKeepAlive   time.Duration
	// WebhooksMax is how many webhooks an app may register; WebhookAllow
	// the development allow-list of webhook URLs; WebhookCRCInterval and
	// WebhookCRCRecheck the CRC sweeper's schedule (docs/webhooks.md).
	WebhooksMax        int
	WebhookAllow       string
	WebhookCRCInterval time.Duration
	WebhookCRCRecheck  time.Duration
	// ActivitySubscriptionCap is how many activity subscriptions an app
	// may hold (docs/activity.md).
	ActivitySubscriptionCap int
	// WebhookReplayMaxAge is how far back a replay may start, capped by
	// EventsRetention (replayHorizon).
	WebhookReplayMaxAge time.Duration
	// Webhook deliveries (docs/webhooks.md, "Deliveries"): attempts before
	// a delivery dies, the first retry's wait (doubling), the wait between
	// probes of a failing webhook, the time a POST may take and how many
	// webhooks a worker sends at once.
	WebhookDeliveryAttempts int
	WebhookRetryBackoff     time.Duration
	WebhookProbeInterval    time.Duration
	WebhookDeliveryTimeout  time.Duration
	WebhookDeliverers       int
	// WebSessionKey signs the web tier's session cookies (docs/oauth.md).
	WebSessionKey string
	// OAuthSignatureBases: other base URLs OAuth 1.0a signatures may be
	// computed over (docs/oauth.md); see signatureBases.
	OAuthSignatureBases string
	// OAuthTokenLimit, OAuthTokenFailureLimit and OAuthTokenWindow are the
	// token endpoints' rate limits (docs/oauth.md).
	OAuthTokenLimit        int
	OAuthTokenFailureLimit int
	OAuthTokenWindow       time.Duration
	// OAuthInsecureHTTP accepts OAuth 1.0a calls over plain HTTP
	// (development; always on in "aviary dev").
	OAuthInsecureHTTP bool

	// dev is set by "aviary dev" (the one-machine development mode, what
	// make run serves), not by a setting: OAuth 1.0a signatures over the
	// loopback spellings of a public URL on localhost are accepted too
	// (docs/auth-and-rate-limits.md).
	dev bool
}

// setting describes one configuration variable (README lists them all).
type setting struct {
	env, flag, def, help string
	// bind registers the flag with its zero value; bindConfig applies def.
	bind func(fs *flag.FlagSet, name, help string)
}

func (c *config) settings() []setting {
	str := func(p *string) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.StringVar(p, n, "", h) }
	}
	boolean := func(p *bool) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.BoolVar(p, n, false, h) }
	}
	integer := func(p *int) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.IntVar(p, n, 0, h) }
	}
	duration := func(p *time.Duration) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.DurationVar(p, n, 0, h) }
	}
	float := func(p *float64) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.Float64Var(p, n, 0, h) }
	}
	integer64 := func(p *int64) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.Int64Var(p, n, 0, h) }
	}
	size := func(p *int64) func(*flag.FlagSet, string, string) {
		return func(fs *flag.FlagSet, n, h string) { fs.Var((*byteSize)(p), n, h) }
	}
	return []setting{
		{"AVIARY_DATABASE_URL", "database-url", "postgres://postgres@127.0.0.1:5432/aviary?sslmode=disable", "PostgreSQL connection URL", str(&c.DatabaseURL)},
		{"AVIARY_REDIS_URL", "redis-url", "redis://127.0.0.1:6379/0", "Redis URL (queues, rate limits, nonces)", str(&c.RedisURL)},
		{"AVIARY_HTTP_ADDR", "http-addr", ":8080", "listen address of the API (core and ads paths)", str(&c.HTTPAddr)},
		{"AVIARY_HTTP_READ_TIMEOUT", "http-read-timeout", "30m", "longest time to read one request, body included (bounds slow uploads; 0 means no limit)", duration(&c.HTTPReadTimeout)},
		{"AVIARY_SANDBOX_ADDR", "sandbox-addr", ":8081", "listen address of the ads sandbox (same ads API, sandbox accounts only; off: none)", str(&c.SandboxAddr)},
		{"AVIARY_SANDBOX_PUBLIC_URL", "sandbox-public-url", "http://localhost:8081", "externally visible base URL of the ads sandbox (OAuth signatures)", str(&c.SandboxPublicURL)},
		{"AVIARY_PUBLIC_URL", "public-url", "http://localhost:8080", "externally visible base URL (generated URLs, OAuth signatures)", str(&c.PublicURL)},
		{"AVIARY_PROBLEMS_BASE", "problems-base", "https://api.x.com/2/problems", "base URI of Problem JSON types", str(&c.ProblemsBase)},
		{"AVIARY_BLOB_DRIVER", "blob-driver", "", "blob storage driver: local or s3 (default: s3 when AVIARY_S3_ENDPOINT is set, else local)", str(&c.BlobDriver)},
		{"AVIARY_BLOB_DIR", "blob-dir", "./var/blobs", "directory of the local blob driver", str(&c.BlobDir)},
		{"AVIARY_S3_ENDPOINT", "s3-endpoint", "", "S3 endpoint URL, e.g. http://127.0.0.1:9000", str(&c.S3Endpoint)},
		{"AVIARY_S3_PUBLIC_ENDPOINT", "s3-public-endpoint", "", "S3 endpoint used in presigned URLs handed to clients (default AVIARY_S3_ENDPOINT)", str(&c.S3PublicEndpoint)},
		{"AVIARY_S3_BUCKET", "s3-bucket", "aviary", "S3 bucket", str(&c.S3Bucket)},
		{"AVIARY_S3_ACCESS_KEY", "s3-access-key", "", "S3 access key", str(&c.S3AccessKey)},
		{"AVIARY_S3_SECRET_KEY", "s3-secret-key", "", "S3 secret key", str(&c.S3SecretKey)},
		{"AVIARY_S3_REGION", "s3-region", "us-east-1", "S3 region", str(&c.S3Region)},
		{"AVIARY_S3_WATCH", "s3-watch", "true", "listen for MinIO bucket notifications to notice uploads at once (polling stays on)", boolean(&c.S3Watch)},
		{"AVIARY_COMPLIANCE_MAX_UPLOAD", "compliance-max-upload", "4GiB", "largest compliance upload the API accepts (413 beyond it); bytes, or with a KiB, MiB, GiB or TiB suffix", size(&c.ComplianceMaxUpload)},
		{"AVIARY_TLS_CERT", "tls-cert", "", "TLS certificate file; with AVIARY_TLS_KEY the API serves HTTPS", str(&c.TLSCert)},
		{"AVIARY_TLS_KEY", "tls-key", "", "TLS private key file", str(&c.TLSKey)},
		{"AVIARY_ADMIN_USER", "admin-user", "admin", "user name for /admin/queues", str(&c.AdminUser)},
		{"AVIARY_ADMIN_PASSWORD", "admin-password", "", "password for /admin/queues (dashboard disabled when empty)", str(&c.AdminPassword)},
		{"AVIARY_SEED_DIR", "seed-dir", "", "directory of state snapshots and seed specs applied once, in name order, at start-up", str(&c.SeedDir)},
		{"AVIARY_WORKER_QUEUES", "queues", defaultQueues(), "queues a worker serves with their priority weights", str(&c.WorkerQueues)},
		{"AVIARY_WORKER_CONCURRENCY", "concurrency", "8", "tasks a worker process runs at once", integer(&c.WorkerConcurrency)},
		{"AVIARY_WORKER_METRICS_ADDR", "metrics-addr", "", "aviary worker: serve /metrics (task runs, Go runtime) on this address; empty: off", str(&c.WorkerMetricsAddr)},
		{"AVIARY_SHUTDOWN_TIMEOUT", "shutdown-timeout", "30s", "grace period for in-flight requests and tasks on shutdown", duration(&c.ShutdownTimeout)},
		{"AVIARY_DRAIN_DELAY", "drain-delay", "0s", "on shutdown, how long /readyz reports draining before the listener closes (let load balancers notice)", duration(&c.DrainDelay)},
		{"AVIARY_RECONCILE", "reconcile", "true", "run the sweepers (compliance upload detection, recovery of lost tasks) in this worker", boolean(&c.Reconcile)},
		{"AVIARY_RECONCILE_INTERVAL", "reconcile-interval", "2s", "how often the sweepers look for uploads and lost tasks", duration(&c.ReconcileInterval)},
		{"AVIARY_TASK_CHECK_INTERVAL", "task-check-interval", "20ms", "aviary worker: how often an idle worker looks for new tasks (it sleeps half to one and a half of this): the delay before an enqueued task starts, for about one cheap Redis script call per interval per idle worker process", duration(&c.TaskCheckInterval)},
		{"AVIARY_RATE_LIMIT_SCALE", "rate-limit-scale", "1", "multiplier applied to every endpoint's rate limit", float(&c.RateLimitScale)},
		{"AVIARY_POSTS_APP_24H_LIMIT", "posts-app-24h-limit", "10000", "posts an app may create in 24 hours (POST /2/tweets, x-app-limit-24hour-*; scaled by AVIARY_RATE_LIMIT_SCALE)", integer(&c.PostsAppPerDay)},
		{"AVIARY_POSTS_USER_24H_LIMIT", "posts-user-24h-limit", "2400", "posts a user may create through one app in 24 hours (POST /2/tweets, x-user-limit-24hour-*; scaled by AVIARY_RATE_LIMIT_SCALE)", integer(&c.PostsUserPerDay)},
		{"AVIARY_USAGE_READ_CAP", "usage-read-cap", "0", "posts an app may read per usage period unless it has its own cap (aviary admin app usage); 0: unlimited (docs/usage-and-credits.md)", integer(&c.Usage.ReadCap)},
		{"AVIARY_USAGE_WRITE_CAP", "usage-write-cap", "0", "posts an app may create per usage period unless it has its own cap; 0: unlimited", integer(&c.Usage.WriteCap)},
		{"AVIARY_USAGE_CAP_RESET_DAY", "usage-cap-reset-day", "1", "day of the month (1 to 28) a usage period starts", integer(&c.Usage.ResetDay)},
		{"AVIARY_USAGE_PRICES", "usage-prices", "", "credits each resource costs, e.g. post_read=5,post_write=10,user_read=1; empty: credits off", str(&c.Usage.Prices)},
		{"AVIARY_USAGE_FLUSH_INTERVAL", "usage-flush-interval", "2s", "how often an API process records the usage it counted in PostgreSQL", duration(&c.Usage.FlushInterval)},
		{"AVIARY_AUTH_CACHE_TTL", "auth-cache-ttl", "2s", "how long the API keeps looked-up credentials in memory; revocations reach every replica at once over Redis pub/sub; 0 turns the cache off (docs/auth-cache.md)", duration(&c.AuthCacheTTL)},
		{"AVIARY_DEPENDENCY_TIMEOUT", "dependency-timeout", "500ms", "bound on each PostgreSQL statement and Redis command of the API tier; a dependency slower than this answers 503 (docs/outages.md)", duration(&c.DependencyTimeout)},
		{"AVIARY_FETCH_ALLOWLIST", "fetch-allowlist", "", "comma-separated host:port entries that product image fetches may reach even though they are loopback or private (a local image server in tests); empty: none", str(&c.FetchAllowlist)},
		{"AVIARY_OPENAPI_FILE", "openapi-file", "", "aviary api: the platform's OpenAPI description (JSON, 2.167) whose response schemas GET /2/openapi.json uses for the operations it shares with it; empty: Aviary's own schemas (docs/openapi.md)", str(&c.OpenAPIFile)},
		{"AVIARY_INSIGHTS_PAIR_SAMPLE", "insights-pair-sample", "16", "aviary worker: one post in this many (chosen by a hash of its id) feeds the co-occurrence pairs behind related keywords; 1: every post (docs/insights.md)", integer(&c.InsightsPairSample)},
		{"AVIARY_NEWS_INTERVAL", "news-interval", "1m", "aviary worker: how often the news stories are rebuilt from spiking terms (docs/news.md)", duration(&c.NewsInterval)},
		{"AVIARY_EVENTS_RETENTION", "events-retention", "168h", "aviary worker: how long the event log keeps events (stream backfill and replay read them; a dispatcher stopped longer loses what it had not dispatched; docs/events.md)", duration(&c.EventsRetention)},
		{"AVIARY_STREAM_CONNECTIONS_RETENTION", "stream-connections-retention", "720h", "aviary worker: how long closed filtered-stream connection records are kept (the history GET /2/connections lists; docs/streams.md)", duration(&c.StreamConnectionsRetention)},
		{"AVIARY_MEDIA_VIDEO_MAX_PIXEL_RATE", "media-video-max-pixel-rate", strconv.FormatInt(tasks.MediaVideoMaxPixelRate, 10), "aviary worker: largest width x height x frames per second of a video processed; more fails at once with LimitExceeded (docs/media-upload.md)", integer64(&c.MediaVideoMaxPixelRate)},
		{"AVIARY_MEDIA_VIDEO_MAX_PIXELS", "media-video-max-pixels", strconv.FormatInt(tasks.MediaVideoMaxPixels, 10), "aviary worker: largest width x height x frames (all frames) of a video processed; more fails at once with LimitExceeded", integer64(&c.MediaVideoMaxPixels)},
		{"AVIARY_MEDIA_VIDEO_SLOTS", "media-video-slots", "0", "aviary worker: task slots videos and animated GIFs may hold at once; 0: a quarter of AVIARY_WORKER_CONCURRENCY (at least 1)", integer(&c.MediaVideoSlots)},
		{"AVIARY_MEDIA_IMAGE_SLOTS", "media-image-slots", "0", "aviary worker: task slots images and subtitles may hold at once; 0: a quarter of AVIARY_WORKER_CONCURRENCY (at least 1)", integer(&c.MediaImageSlots)},
		{"AVIARY_MEDIA_IMAGE_WAIT", "media-image-wait", "10s", "aviary api: how long an image's finalize (or one-shot upload) waits for the worker's result before answering pending; 0: never waits", duration(&c.MediaImageWait)},
		{"AVIARY_STREAM_RULES_MAX", "stream-rules-max", "1000", "aviary api: filtered-stream rules one app may hold (rule-cap beyond; docs/streams-rules.md)", integer(&c.StreamRulesMax)},
		{"AVIARY_STREAM_RULE_MAX_LENGTH", "stream-rule-max-length", "1024", "aviary api: longest filtered-stream rule, in characters (noncompliant-rules beyond; docs/streams-rules.md)", integer(&c.StreamRuleMaxLength)},
		{"AVIARY_STREAM_CONNECTIONS", "stream-connections", "1", "aviary api: open filtered-stream connections an app may hold; the next one is refused with 429 TooManyConnections (docs/streams.md)", integer(&c.StreamConnections)},
		{"AVIARY_STREAM_KEEPALIVE", "stream-keepalive", "20s", "aviary api: how often an idle stream sends the \\r\\n keep-alive (docs/streams.md)", duration(&c.StreamKeepAlive)},
		{"AVIARY_WEBHOOKS_MAX", "webhooks-max", "1", "aviary api: webhooks one app may register (WebhookLimitExceeded beyond); the platform's pay-per-use figure is 1, enterprise 5 or more (docs/webhooks.md)", integer(&c.WebhooksMax)},
		{"AVIARY_ACTIVITY_SUBSCRIPTION_CAP", "activity-subscription-cap", "1500", "aviary api: activity subscriptions one app may hold (SubscriptionLimitExceeded beyond); the platform's self-serve figure is 1500, enterprise 75000, partner 150000 (docs/activity.md)", integer(&c.ActivitySubscriptionCap)},
		{"AVIARY_WEBHOOK_ALLOW", "webhook-allow", "", "aviary api and worker: development only: comma-separated host:port entries (host:* for any port, e.g. localhost:*) whose webhook URLs may use http and a port and are reached although loopback or private; empty: https without a port, public addresses only (docs/webhooks.md)", str(&c.WebhookAllow)},
		{"AVIARY_WEBHOOK_CRC_INTERVAL", "webhook-crc-interval", "30m", "aviary worker: how often the CRC sweeper checks due webhooks (the platform: every 30 minutes; docs/webhooks.md)", duration(&c.WebhookCRCInterval)},
		{"AVIARY_WEBHOOK_CRC_RECHECK", "webhook-crc-recheck", "24h", "aviary worker: a webhook that passed a CRC check within this long is not checked again by the sweeper (the platform: 24h; 0 with a 1h interval is its hourly schedule)", duration(&c.WebhookCRCRecheck)},
		{"AVIARY_WEBHOOK_REPLAY_MAX_AGE", "webhook-replay-max-age", "24h", "aviary api: how far back POST /2/webhooks/replay may start (QueryParamInvalid beyond; the platform: 24h); capped by AVIARY_EVENTS_RETENTION, which the api reads for this (docs/webhooks.md)", duration(&c.WebhookReplayMaxAge)},
		{"AVIARY_WEBHOOK_DELIVERY_ATTEMPTS", "webhook-delivery-attempts", "5", "aviary worker: attempts at a webhook delivery before it dies (unreachable: the webhook turns failing; another 4xx: parked; docs/webhooks.md)", integer(&c.WebhookDeliveryAttempts)},
		{"AVIARY_WEBHOOK_RETRY_BACKOFF", "webhook-retry-backoff", "10s", "aviary worker: wait before a failed webhook delivery's first retry, doubling at each retry up to 1h (5 attempts: about 2.5 minutes)", duration(&c.WebhookRetryBackoff)},
		{"AVIARY_WEBHOOK_PROBE_INTERVAL", "webhook-probe-interval", "1m", "aviary worker: wait between probes of a failing webhook (its oldest undelivered delivery sent again)", duration(&c.WebhookProbeInterval)},
		{"AVIARY_WEBHOOK_DELIVERY_TIMEOUT", "webhook-delivery-timeout", "10s", "aviary worker: how long one webhook delivery POST may take (no answer in time: a failed attempt)", duration(&c.WebhookDeliveryTimeout)},
		{"AVIARY_WEBHOOK_DELIVERERS", "webhook-deliverers", "16", "aviary worker: webhooks one worker sends at once (each webhook's deliveries go one at a time, in order)", integer(&c.WebhookDeliverers)},
		{"AVIARY_WEB_SESSION_KEY", "web-session-key", "", "aviary api: key (at least 32 bytes) signing the login and consent pages' session cookies; empty: a random key generated once and kept in PostgreSQL, shared by every replica (docs/oauth.md)", str(&c.WebSessionKey)},
		{"AVIARY_OAUTH_SIGNATURE_BASES", "oauth-signature-bases", "", "aviary api: development only: comma-separated base URLs (e.g. " + auth.DevSignatureBases + ") over which an OAuth 1.0a signature with the request's path and parameters is also accepted, for clients that sign for the platform's hosts behind a redirected transport; a signature captured against the platform could be replayed here within the timestamp window. Empty: off (aviary dev: those three hosts); none: off in dev mode too (docs/oauth.md)", str(&c.OAuthSignatureBases)},
		{"AVIARY_OAUTH_TOKEN_LIMIT", "oauth-token-limit", "10000", "aviary api: requests one client may make to /2/oauth2/token, /2/oauth2/revoke, /oauth2/token and /oauth2/invalidate_token per AVIARY_OAUTH_TOKEN_WINDOW (the platform's token exchange figure); beyond, 429 with Retry-After; 0: off; scaled by AVIARY_RATE_LIMIT_SCALE (docs/oauth.md)", integer(&c.OAuthTokenLimit)},
		{"AVIARY_OAUTH_TOKEN_FAILURE_LIMIT", "oauth-token-failure-limit", "50", "aviary api: failed client authentications one address may make at the token endpoints per AVIARY_OAUTH_TOKEN_WINDOW; beyond, its requests are refused with 429 until the window ends; 0: off; scaled by AVIARY_RATE_LIMIT_SCALE", integer(&c.OAuthTokenFailureLimit)},
		{"AVIARY_OAUTH_TOKEN_WINDOW", "oauth-token-window", "15m", "aviary api: the fixed window of the token endpoints' rate limits", duration(&c.OAuthTokenWindow)},
		{"AVIARY_OAUTH_INSECURE_HTTP", "oauth-insecure-http", "false", "aviary api: development only: serve the OAuth 1.0a flow (/oauth/request_token, authorize, authenticate, access_token, invalidate_token) over plain HTTP, which the platform refuses; judged by AVIARY_PUBLIC_URL's scheme; always on in aviary dev (docs/oauth.md)", boolean(&c.OAuthInsecureHTTP)},
		{"AVIARY_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", str(&c.LogLevel)},
		{"AVIARY_LOG_FORMAT", "log-format", "json", "json or text", str(&c.LogFormat)},
		{"AVIARY_LOG_FLUSH_INTERVAL", "log-flush-interval", "100ms", "aviary api, worker and dev: log lines are written in batches, at most this late (and on shutdown); 0 writes each line at once", duration(&c.LogFlushInterval)},
	}
}

// queueNames lists tasks.Queues' names in order.
func queueNames() []string {
	var names []string
	for _, q := range tasks.Queues() {
		names = append(names, q.Name)
	}
	return names
}

// defaultQueues is every queue with its default weight, "name=weight,...".
func defaultQueues() string {
	var parts []string
	for _, q := range tasks.Queues() {
		parts = append(parts, fmt.Sprintf("%s=%d", q.Name, q.Weight))
	}
	return strings.Join(parts, ",")
}

// bindConfig registers every setting on fs with its static default, then
// applies each AVIARY_* variable that is set (an empty one counts as unset)
// through the flag's own parser, so a value the flag would refuse fails
// start-up naming the variable instead of silently becoming zero. Flags
// parsed afterwards override the environment; call validate after parsing.
func bindConfig(fs *flag.FlagSet) (*config, error) {
	c := &config{}
	settings := c.settings()
	for _, s := range settings {
		s.bind(fs, s.flag, fmt.Sprintf("%s (env %s)", s.help, s.env))
		f := fs.Lookup(s.flag)
		if err := f.Value.Set(s.def); err != nil {
			return nil, fmt.Errorf("default of %s %q: %w", s.env, s.def, err) // a wiring bug
		}
		f.DefValue = s.def
	}
	for _, s := range settings {
		v := os.Getenv(s.env)
		if v == "" {
			continue
		}
		if err := fs.Set(s.flag, v); err != nil {
			return nil, fmt.Errorf("%s=%q: want %s", s.env, v, expected(fs.Lookup(s.flag).Value))
		}
	}
	return c, nil
}

// expected describes the values a flag takes, for configuration errors.
func expected(v flag.Value) string {
	getter, _ := v.(flag.Getter)
	if getter == nil {
		return "a valid value"
	}
	switch getter.Get().(type) {
	case bool:
		return "true or false"
	case int:
		return "an integer"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration with a unit, such as 30s, 2m or 1h"
	case byteSize:
		return "a positive size in bytes, such as 1048576, 512MiB or 4GiB"
	}
	return "a valid value"
}

// validate rejects parsed values no subcommand can work with, naming each
// setting by its variable and flag.
func (c *config) validate() error {
	checks := []struct {
		ok         bool
		name, want string
		got        any
	}{
		{c.ShutdownTimeout > 0, "AVIARY_SHUTDOWN_TIMEOUT (-shutdown-timeout)", "a positive duration", c.ShutdownTimeout},
		{c.ReconcileInterval > 0, "AVIARY_RECONCILE_INTERVAL (-reconcile-interval)", "a positive duration", c.ReconcileInterval},
		{c.HTTPReadTimeout >= 0, "AVIARY_HTTP_READ_TIMEOUT (-http-read-timeout)", "0 (no limit) or a positive duration", c.HTTPReadTimeout},
		{c.DrainDelay >= 0, "AVIARY_DRAIN_DELAY (-drain-delay)", "0 or a positive duration", c.DrainDelay},
		{c.DependencyTimeout > 0, "AVIARY_DEPENDENCY_TIMEOUT (-dependency-timeout)", "a positive duration", c.DependencyTimeout},
		{c.AuthCacheTTL >= 0, "AVIARY_AUTH_CACHE_TTL (-auth-cache-ttl)", "a duration of 0 or more", c.AuthCacheTTL},
		{c.NewsInterval > 0, "AVIARY_NEWS_INTERVAL (-news-interval)", "a positive duration", c.NewsInterval},
		{c.EventsRetention > 0, "AVIARY_EVENTS_RETENTION (-events-retention)", "a positive duration", c.EventsRetention},
		{c.StreamConnectionsRetention > 0, "AVIARY_STREAM_CONNECTIONS_RETENTION (-stream-connections-retention)", "a positive duration", c.StreamConnectionsRetention},
		{c.StreamRulesMax >= 1, "AVIARY_STREAM_RULES_MAX (-stream-rules-max)", "at least 1", c.StreamRulesMax},
		{c.StreamRuleMaxLength >= 1, "AVIARY_STREAM_RULE_MAX_LENGTH (-stream-rule-max-length)", "at least 1", c.StreamRuleMaxLength},
		{c.InsightsPairSample >= 1, "AVIARY_INSIGHTS_PAIR_SAMPLE (-insights-pair-sample)", "at least 1", c.InsightsPairSample},
		{c.WorkerConcurrency >= 1, "AVIARY_WORKER_CONCURRENCY (-concurrency)", "at least 1", c.WorkerConcurrency},
		{c.MediaVideoMaxPixelRate >= 1, "AVIARY_MEDIA_VIDEO_MAX_PIXEL_RATE (-media-video-max-pixel-rate)", "at least 1", c.MediaVideoMaxPixelRate},
		{c.MediaVideoMaxPixels >= 1, "AVIARY_MEDIA_VIDEO_MAX_PIXELS (-media-video-max-pixels)", "at least 1", c.MediaVideoMaxPixels},
		{c.MediaVideoSlots >= 0, "AVIARY_MEDIA_VIDEO_SLOTS (-media-video-slots)", "0 (a quarter of the concurrency) or more", c.MediaVideoSlots},
		{c.MediaImageSlots >= 0, "AVIARY_MEDIA_IMAGE_SLOTS (-media-image-slots)", "0 (a quarter of the concurrency) or more", c.MediaImageSlots},
		{c.MediaImageWait >= 0, "AVIARY_MEDIA_IMAGE_WAIT (-media-image-wait)", "0 or a positive duration", c.MediaImageWait},
		{c.RateLimitScale > 0 && !math.IsInf(c.RateLimitScale, 1), "AVIARY_RATE_LIMIT_SCALE (-rate-limit-scale)", "a positive number", c.RateLimitScale},
		{c.PostsAppPerDay >= 1, "AVIARY_POSTS_APP_24H_LIMIT (-posts-app-24h-limit)", "at least 1", c.PostsAppPerDay},
		{c.StreamConnections >= 1, "AVIARY_STREAM_CONNECTIONS (-stream-connections)", "at least 1", c.StreamConnections},
		{c.StreamKeepAlive > 0, "AVIARY_STREAM_KEEPALIVE (-stream-keepalive)", "a positive duration", c.StreamKeepAlive},
		{c.WebhooksMax >= 1, "AVIARY_WEBHOOKS_MAX (-webhooks-max)", "at least 1", c.WebhooksMax},
		{c.ActivitySubscriptionCap >= 1, "AVIARY_ACTIVITY_SUBSCRIPTION_CAP (-activity-subscription-cap)", "at least 1", c.ActivitySubscriptionCap},
		{c.WebhookCRCInterval > 0, "AVIARY_WEBHOOK_CRC_INTERVAL (-webhook-crc-interval)", "a positive duration", c.WebhookCRCInterval},
		{c.WebhookCRCRecheck >= 0, "AVIARY_WEBHOOK_CRC_RECHECK (-webhook-crc-recheck)", "0 or a positive duration", c.WebhookCRCRecheck},
		{c.WebhookReplayMaxAge > 0, "AVIARY_WEBHOOK_REPLAY_MAX_AGE (-webhook-replay-max-age)", "a positive duration", c.WebhookReplayMaxAge},
		{c.WebhookDeliveryAttempts >= 1, "AVIARY_WEBHOOK_DELIVERY_ATTEMPTS (-webhook-delivery-attempts)", "at least 1", c.WebhookDeliveryAttempts},
		{c.WebhookRetryBackoff > 0, "AVIARY_WEBHOOK_RETRY_BACKOFF (-webhook-retry-backoff)", "a positive duration", c.WebhookRetryBackoff},
		{c.WebhookProbeInterval > 0, "AVIARY_WEBHOOK_PROBE_INTERVAL (-webhook-probe-interval)", "a positive duration", c.WebhookProbeInterval},
		{c.WebhookDeliveryTimeout > 0, "AVIARY_WEBHOOK_DELIVERY_TIMEOUT (-webhook-delivery-timeout)", "a positive duration", c.WebhookDeliveryTimeout},
		{c.WebhookDeliverers >= 1, "AVIARY_WEBHOOK_DELIVERERS (-webhook-deliverers)", "at least 1", c.WebhookDeliverers},
		{c.Usage.ReadCap >= 0, "AVIARY_USAGE_READ_CAP (-usage-read-cap)", "0 (unlimited) or more", c.Usage.ReadCap},
		{c.Usage.WriteCap >= 0, "AVIARY_USAGE_WRITE_CAP (-usage-write-cap)", "0 (unlimited) or more", c.Usage.WriteCap},
		{c.Usage.ResetDay >= 1 && c.Usage.ResetDay <= 28, "AVIARY_USAGE_CAP_RESET_DAY (-usage-cap-reset-day)", "1 to 28", c.Usage.ResetDay},
		{c.Usage.FlushInterval > 0, "AVIARY_USAGE_FLUSH_INTERVAL (-usage-flush-interval)", "a positive duration", c.Usage.FlushInterval},
		{c.Usage.pricesValid(), "AVIARY_USAGE_PRICES (-usage-prices)", "resource=credits pairs (post_read, post_write, user_read; 0 or more)", c.Usage.Prices},
		{c.PostsUserPerDay >= 1, "AVIARY_POSTS_USER_24H_LIMIT (-posts-user-24h-limit)", "at least 1", c.PostsUserPerDay},
		{c.OAuthTokenLimit >= 0, "AVIARY_OAUTH_TOKEN_LIMIT (-oauth-token-limit)", "0 (off) or more", c.OAuthTokenLimit},
		{c.OAuthTokenFailureLimit >= 0, "AVIARY_OAUTH_TOKEN_FAILURE_LIMIT (-oauth-token-failure-limit)", "0 (off) or more", c.OAuthTokenFailureLimit},
		{c.OAuthTokenWindow >= time.Second, "AVIARY_OAUTH_TOKEN_WINDOW (-oauth-token-window)", "a duration of at least 1s", c.OAuthTokenWindow},
	}
	var errs []error
	for _, ch := range checks {
		if !ch.ok {
			errs = append(errs, fmt.Errorf("%s must be %s, not %v", ch.name, ch.want, ch.got))
		}
	}
	if _, err := c.signatureBases(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// signatureBases parses AVIARY_OAUTH_SIGNATURE_BASES: empty is off, but
// the platform's three API hosts in dev mode; "none" is off everywhere.
func (c *config) signatureBases() ([]*url.URL, error) {
	raw := strings.TrimSpace(c.OAuthSignatureBases)
	switch {
	case strings.EqualFold(raw, "none"):
		return nil, nil
	case raw == "" && c.dev:
		raw = auth.DevSignatureBases
	}
	bases, err := auth.ParseSignatureBases(raw)
	if err != nil {
		return nil, fmt.Errorf("AVIARY_OAUTH_SIGNATURE_BASES (-oauth-signature-bases): %w", err)
	}
	return bases, nil
}

// mediaSlots is the worker's media.Slots: each class gets its setting, or
// a quarter of the concurrency (at least 1) when it is 0.
func (c *config) mediaSlots() (video, image int) {
	auto := max(1, c.WorkerConcurrency/4)
	video, image = c.MediaVideoSlots, c.MediaImageSlots
	if video == 0 {
		video = auto
	}
	if image == 0 {
		image = auto
	}
	return video, image
}

// blobDriver resolves the effective blob driver.
func (c *config) blobDriver() string {
	if c.BlobDriver != "" {
		return c.BlobDriver
	}
	if c.S3Endpoint != "" {
		return "s3"
	}
	return "local"
}

// queues parses "name=weight,..." (a weight defaults to 1) into asynq's
// queue map; any subset of tasks.Queues, e.g. "media=1" for a
// media-only worker.
func (c *config) queues() (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(c.WorkerQueues, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, weight, found := strings.Cut(part, "=")
		if !found {
			weight = "1"
		}
		name = strings.TrimSpace(name)
		if !tasks.IsQueue(name) {
			return nil, fmt.Errorf("queue %q: unknown queue (known: %s)", name, strings.Join(queueNames(), ", "))
		}
		w, err := strconv.Atoi(strings.TrimSpace(weight))
		if err != nil || w < 1 {
			return nil, fmt.Errorf("queue %q: weight must be a positive integer", part)
		}
		out[name] = w
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no queues configured")
	}
	return out, nil
}

// byteSize is a flag.Value for a size in bytes: a positive integer, or one
// followed by KiB, MiB, GiB or TiB (powers of 1024).
type byteSize int64

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

// Set parses s.
func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	shift := uint(0)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = strings.TrimSpace(num), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return fmt.Errorf("invalid size %q", s)
	}
	*b = byteSize(n << shift)
	return nil
}

// String formats the size in bytes.
func (b *byteSize) String() string {
	if b == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*b), 10)
}

// Get implements flag.Getter.
func (b *byteSize) Get() any { return *b }
