// Package webhooks serves the webhook configs of an app (/2/webhooks:
// register, list, re-validate, delete; docs/webhooks.md), their stream
// links (/2/tweets/search/webhooks), their delivery log
// (/2/webhooks/{id}/deliveries, Aviary's own) and replay jobs
// (/2/webhooks/replay). Registration and PUT run the CRC check
// synchronously, as the platform does, through the guarded client
// (internal/outbound); the workers' sweeper re-checks webhooks
// periodically (workers/webhooks).
package webhooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// DefaultMax is how many webhooks an app may register: the platform's
// pay-per-use figure (enterprise: 5 or more).
const DefaultMax = 1

// Store is the record access of the webhook endpoints
// (storage/postgres.DB).
type Store interface {
	CreateWebhook(ctx context.Context, c storage.WebhookCreate) (storage.Webhook, error)
	Webhooks(ctx context.Context, appID int64) ([]storage.Webhook, error)
	WebhookOf(ctx context.Context, appID, id int64) (storage.Webhook, error)
	DeleteWebhook(ctx context.Context, appID, id int64) error
	RecordWebhookCRC(ctx context.Context, c storage.WebhookCRC) (storage.Webhook, error)
	LinkStore
	DeliveryLogStore
	ReplayStore
}

// LinkStore is the record access of the stream links.
type LinkStore interface {
	LinkWebhook(ctx context.Context, l storage.WebhookLink) (storage.WebhookLink, error)
	WebhookLinks(ctx context.Context, appID int64) ([]storage.WebhookLink, error)
	UnlinkWebhook(ctx context.Context, appID, id int64) (bool, error)
}

// DeliveryLogStore is the record access of the delivery log.
type DeliveryLogStore interface {
	WebhookDeliveryState(ctx context.Context, appID, id int64) (storage.WebhookDeliveryState, error)
	WebhookDeliveries(ctx context.Context, q storage.WebhookDeliveryQuery) ([]storage.WebhookDelivery, error)
	WebhookDeliveryOf(ctx context.Context, appID, webhookID, id int64) (storage.WebhookDelivery, []storage.DeliveryAttempt, error)
	RedeliverWebhookDelivery(ctx context.Context, appID, webhookID, id int64) (storage.WebhookDelivery, error)
}

// ReplayStore records replay jobs.
type ReplayStore interface {
	CreateWebhookReplay(ctx context.Context, r storage.NewWebhookReplay) (storage.WebhookReplayJob, error)
}

// Deps is what the webhook endpoints need.
type Deps struct {
	Store Store
	// Client sends the CRC checks (nil: NewClient(nil)).
	Client domain.Doer
	// Faults injects CRC failures and timeouts (docs/faults.md); nil: none.
	Faults domain.Faults
	// Allow is the development allow-list (AVIARY_WEBHOOK_ALLOW): its
	// host:port entries may be registered with http and a port, and are
	// reached although loopback or private. Give the same list to Client.
	Allow     outbound.AllowList
	Validator *validation.Validator
	Logger    *slog.Logger
	Clock     func() time.Time
	// Max is how many webhooks an app may hold (AVIARY_WEBHOOKS_MAX; 0:
	// DefaultMax).
	Max int
	// Queue receives the replay tasks after their job is recorded (nil:
	// the workers' sweeper enqueues them).
	Queue tasks.Enqueuer
	// ReplayHorizon is how far back a replay may start: the smaller of
	// AVIARY_WEBHOOK_REPLAY_MAX_AGE and AVIARY_EVENTS_RETENTION (0:
	// DefaultReplayHorizon).
	ReplayHorizon time.Duration
}

// DefaultReplayHorizon is the platform's replay window: the last 24 hours.
const DefaultReplayHorizon = 24 * time.Hour

// NewClient is the guarded client of CRC checks: no redirects followed,
// answers within domain.CRCTimeout, 64 KB at most; allow as in Deps.Allow.
func NewClient(allow outbound.AllowList) *outbound.Client {
	return outbound.New(outbound.Config{Allow: allow, NoRedirects: true, Timeout: domain.CRCTimeout,
		MaxBytes: 64 << 10, UserAgent: "Aviary-Webhooks/1.0"})
}

// Module is the webhooks feature.
type Module struct{ Deps }

// New builds the module.
func New(d Deps) *Module {
	if d.Client == nil {
		d.Client = NewClient(d.Allow)
	}
	if d.Validator == nil {
		d.Validator = validation.New()
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Max <= 0 {
		d.Max = DefaultMax
	}
	if d.ReplayHorizon <= 0 {
		d.ReplayHorizon = DefaultReplayHorizon
	}
	return &Module{Deps: d}
}

// path is where the webhook configs are served.
const path = "/2/webhooks"

// Routes lists the endpoints: app-only bearer tokens, as on the platform;
// every call sees and changes only its app's webhooks.
func (m *Module) Routes() []httpx.Endpoint {
	limit := func(name string) httpx.Limit {
		return httpx.Limit{Name: name, Requests: 50, Scope: httpx.PerApp}
	}
	return []httpx.Endpoint{
		{Pattern: "POST " + path, Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_create"),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.create},
		{Pattern: "GET " + path, Auth: auth.BearerOnly, Limit: limit("webhooks_list"),
			Query: []string{"webhook_config.fields"}, Handle: m.list},
		{Pattern: "PUT " + path + "/{webhook_id}", Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_validate"),
			Handle: m.validate},
		{Pattern: "DELETE " + path + "/{webhook_id}", Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_delete"),
			Handle: m.delete},
		// Stream links (links.go); the quickstart's GET path is an alias.
		{Pattern: "POST " + linksPath + "/{webhook_id}", Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_links_create"),
			Query: render.TweetParams, Handle: m.link},
		{Pattern: "GET " + linksPath, Auth: auth.BearerOnly, Limit: limit("webhooks_links_list"), Handle: m.links},
		{Pattern: "GET " + linksAliasPath, Auth: auth.BearerOnly, Limit: limit("webhooks_links_list"), Handle: m.links},
		{Pattern: "DELETE " + linksPath + "/{webhook_id}", Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_links_delete"),
			Handle: m.unlink},
		// The delivery log (deliveries.go), Aviary's own.
		{Pattern: "GET " + path + "/{webhook_id}", Auth: auth.BearerOnly, Limit: limit("webhooks_get"), Handle: m.get},
		{Pattern: "GET " + path + "/{webhook_id}/deliveries", Auth: auth.BearerOnly, Limit: limit("webhooks_deliveries"),
			Query: []string{"state", "max_results", "pagination_token"}, Handle: m.deliveries},
		{Pattern: "GET " + path + "/{webhook_id}/deliveries/{delivery_id}", Auth: auth.BearerOnly, Limit: limit("webhooks_deliveries"),
			Handle: m.delivery},
		{Pattern: "POST " + path + "/{webhook_id}/deliveries/{delivery_id}/redeliver", Auth: auth.BearerOnly.Writes(),
			Limit: limit("webhooks_redeliver"), Handle: m.redeliver},
		// Replay (replay.go) and the retired path.
		{Pattern: "POST " + path + "/replay", Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_replay"),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.replay},
		{Pattern: "POST " + retiredReplayPath, Auth: auth.BearerOnly.Writes(), Limit: limit("webhooks_replay"),
			Query: []string{"from_date", "to_date"}, Handle: m.retiredReplay},
	}
}
