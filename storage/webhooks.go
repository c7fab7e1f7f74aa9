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
