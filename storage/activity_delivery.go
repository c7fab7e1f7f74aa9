package storage

import "time"

// ActivityKey selects the subscriptions of one user-filtered event type:
// the activity sink's lookup (docs/activity.md, "Events and delivery").
type ActivityKey struct {
	UserID    int64
	EventType string
}

// NewActivityDelivery is one activity event for one subscription's
// webhook: a webhook delivery of kind DeliveryActivity.
type NewActivityDelivery struct {
	WebhookID      int64
	AppID          int64
	SubscriptionID int64
	EventSeq       int64
	EventAt        time.Time
	Body           []byte
}
