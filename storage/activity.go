package storage

import "time"

// DeliveryActivity is an activity event sent for a subscription
// (docs/activity.md); its delivery names the subscription.
const DeliveryActivity = "activity"

// ActivitySubscription is an app's subscription to one activity event type
// (activity_subscriptions). Exactly one of FilterUserID (non-zero) and
// FilterKeyword (non-empty) is set.
type ActivitySubscription struct {
	ID    int64
	AppID int64
	// EventType is the canonical name (domain/activity).
	EventType     string
	FilterUserID  int64
	FilterKeyword string
	// Direction is "inbound", "outbound" or "" (both).
	Direction string
	Tag       string
	// WebhookID is the webhook the events also go to (0: the stream only).
	WebhookID int64
	// CreatedBy is the user whose token made it (0: app-only).
	CreatedBy int64
	CreatedAt time.Time
	UpdatedAt time.Time
}
