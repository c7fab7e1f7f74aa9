package factory

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// ActivitySubscriptionRow inserts an activity subscription as it is
// stored (no validation: the subscriptions API does that) and returns its
// id. Zero FilterUserID with an empty FilterKeyword is refused by the
// table; zero WebhookID delivers to the stream only. A private type's
// subscription with zero CreatedBy is made as the API makes it: by the
// filtered user, whose live OAuth 1.0a token of the app it ensures (a
// private subscription delivers only while that grant lives); give
// CreatedBy to control the grant yourself.
func ActivitySubscriptionRow(t testing.TB, db *postgres.DB, s storage.ActivitySubscription) int64 {
	t.Helper()
	if s.CreatedBy == 0 && s.FilterUserID != 0 && slices.Contains(activity.GrantBoundNames(), s.EventType) {
		if _, err := db.EnsureAccessToken(t.Context(), s.AppID, s.FilterUserID, storage.AccessReadWrite); err != nil {
			t.Fatalf("factory: grant for a private activity subscription: %v", err)
		}
		s.CreatedBy = s.FilterUserID
	}
	var user, keyword, direction, hook any
	if s.FilterUserID != 0 {
		user = s.FilterUserID
	}
	if s.FilterKeyword != "" {
		keyword = s.FilterKeyword
	}
	if s.Direction != "" {
		direction = s.Direction
	}
	if s.WebhookID != 0 {
		hook = s.WebhookID
	}
	var id int64
	queryRow(t, db, "activity subscription", &id, `INSERT INTO activity_subscriptions
			(app_id, event_type, filter_user_id, filter_keyword, direction, tag, webhook_id, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		s.AppID, s.EventType, user, keyword, direction, s.Tag, hook, s.CreatedBy)
	return id
}
