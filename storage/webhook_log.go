package storage

import "time"

// WebhookDeliveryQuery pages a webhook's delivery log, newest first
// (GET /2/webhooks/{id}/deliveries).
type WebhookDeliveryQuery struct {
	AppID     int64
	WebhookID int64
	// State keeps one state ("": every state).
	State string
	// BeforeID starts the page below that delivery id (0: the newest).
	BeforeID int64
	Limit    int
}

// NewWebhookReplay is a replay job to record: the webhook's deliveries of
// events in [From, To) go again.
type NewWebhookReplay struct {
	AppID     int64
	WebhookID int64
	From, To  time.Time
}
