package storage

import (
	"errors"
	"time"
)

// Webhook is one webhook config of an app (docs/webhooks.md).
type Webhook struct {
	ID    int64
	AppID int64
	URL   string
	// Valid is the stored state; domain/webhooks.EffectiveValid also
	// applies the 28 h rule at read time.
	Valid     bool
	CreatedAt time.Time
	// LastCRCAt is the last check's start, LastCRCOKAt the last pass.
	LastCRCAt   *time.Time
	LastCRCOKAt *time.Time
	// Failure is why the last check failed ("" after a pass).
	Failure   string
	DeletedAt *time.Time
}

// WebhookCreate registers a webhook whose first CRC check passed at
// CheckedAt.
type WebhookCreate struct {
	AppID     int64
	URL       string
	CheckedAt time.Time
	// Max is the app's webhook cap (0: none).
	Max int
}

// WebhookCRC is the outcome of one CRC check of a webhook.
type WebhookCRC struct {
	ID int64
	At time.Time
	OK bool
	// Failure is why it failed.
	Failure string
	// Invalidate marks the webhook invalid (a failure the rules make
	// final); a pass always marks it valid.
	Invalidate bool
}

// WebhookDue is a webhook the CRC sweeper checks, with its app's consumer
// secret.
type WebhookDue struct {
	Webhook
	ConsumerSecret string
}

// WebhookDueQuery selects the webhooks the sweeper claims: live, without a
// pass since PassedBefore, not checked since CheckedBefore; claiming sets
// their LastCRCAt to Now, so other sweepers skip them.
type WebhookDueQuery struct {
	Now           time.Time
	PassedBefore  time.Time
	CheckedBefore time.Time
	Limit         int
}

var (
	// ErrWebhookLimit: the app holds its cap of webhooks already.
	ErrWebhookLimit = errors.New("storage: webhook limit reached")
	// ErrDuplicateWebhookURL: the app has a live webhook with that URL.
	ErrDuplicateWebhookURL = errors.New("storage: webhook URL already registered")
)

// WebhookLink is a filtered-stream link (POST /2/tweets/search/webhooks/{id}):
// the app's matching posts go to the webhook rendered with Query.
type WebhookLink struct {
	WebhookID int64
	AppID     int64
	// Query is the link's fields and expansions as a canonical query
	// string ("expansions=author_id&tweet.fields=created_at"), "" for
	// the defaults.
	Query     string
	CreatedAt time.Time
}

// Delivery kinds.
const (
	// DeliveryPost is a filtered-stream post sent through a link.
	DeliveryPost = "post"
	// DeliveryReplayStatus ends a replay job (replay_job_status).
	DeliveryReplayStatus = "replay_status"
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryDead      = "dead"
)

// Why a dead delivery died.
const (
	// DeadUnreachable: no answer, a 5xx, 408 or 429 on the last attempt;
	// the webhook turned failing and the delivery goes again once the
	// webhook answers a probe.
	DeadUnreachable = "unreachable"
	// DeadRejected: another 4xx on the last attempt; parked until
	// redelivered by hand.
	DeadRejected = "rejected"
)

// WebhookDelivery is one message to one webhook (webhook_deliveries).
type WebhookDelivery struct {
	ID        int64
	WebhookID int64
	AppID     int64
	Kind      string
	// EventSeq is the event delivered (0 for a replay status).
	EventSeq      int64
	EventAt       time.Time
	ReplayJobID   int64 // 0: not a replay copy
	RedeliveryOf  int64 // 0: not a redelivery
	Body          []byte
	State         string
	DeadReason    string
	Attempts      int
	NextAttemptAt time.Time
	LastAttemptAt *time.Time
	LastStatus    int
	LastLatencyMS int
	LastError     string
	DeliveredAt   *time.Time
	CreatedAt     time.Time
}

// DeliveryAttempt is one attempt at a delivery.
type DeliveryAttempt struct {
	DeliveryID int64
	Attempt    int
	StartedAt  time.Time
	Status     int // 0: no answer
	LatencyMS  int
	Error      string
}

// NewDelivery is a delivery the webhook sink records (kind post).
type NewDelivery struct {
	WebhookID int64
	AppID     int64
	EventSeq  int64
	EventAt   time.Time
	Body      []byte
}

// Replay job states.
const (
	ReplayQueued     = "queued"
	ReplayRunning    = "running"
	ReplayComplete   = "complete"
	ReplayIncomplete = "incomplete"
)

// WebhookReplayJob is a replay of a webhook's deliveries of [From, To).
type WebhookReplayJob struct {
	ID         int64
	AppID      int64
	WebhookID  int64
	From, To   time.Time
	State      string
	Events     int
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// WebhookDeliveryState is a webhook's delivery health, as
// GET /2/webhooks/{id} shows it.
type WebhookDeliveryState struct {
	// FailingSince is set while the webhook is failing.
	FailingSince    *time.Time
	NextProbeAt     *time.Time
	LastDeliveredAt *time.Time
	Pending         int
	Dead            int
	// Last is the newest delivery attempted (nil: none yet).
	Last *WebhookDelivery
}

var (
	// ErrReplayConflict: the webhook has a replay job queued or running.
	ErrReplayConflict = errors.New("storage: a replay job is in progress for the webhook")
)
