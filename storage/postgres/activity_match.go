package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/storage"
)

// privateActivityTypes are the private event types bound to the grant
// (domain/activity.GrantBoundNames; not oauth.revoke): a subscription to
// one delivers only while liveGrant holds.
var privateActivityTypes = activity.GrantBoundNames()

// liveGrant is the condition, on subscription s, that its app still holds
// a grant of the user who created it (docs/activity.md, "Private
// subscriptions"): a live OAuth 1.0a access token, or a live OAuth 2.0
// family (not revoked) with a token the app can still use (not revoked,
// not rotated, not expired; a live refresh token keeps the grant after its
// access token expired or was revoked alone). Revoking the OAuth 1.0a
// token, the family, or the family's last usable token ends it.
const liveGrant = `(EXISTS (SELECT 1 FROM access_tokens k
		WHERE k.app_id = s.app_id AND k.user_id = s.created_by AND k.revoked_at IS NULL)
	OR EXISTS (SELECT 1 FROM oauth2_families f JOIN oauth2_tokens t ON t.family_id = f.id
		WHERE f.app_id = s.app_id AND f.user_id = s.created_by AND f.revoked_at IS NULL
		  AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > now()))`

// grantedPrivate is the WHERE clause part keeping a private subscription
// only while liveGrant holds; its parameter is privateActivityTypes.
func grantedPrivate(param string) string {
	return `(NOT s.event_type = ANY(` + param + `::text[]) OR ` + liveGrant + `)`
}

// The activity sink's queries (docs/activity.md, "Events and delivery"):
// matching subscriptions, recording their webhook deliveries.

const activitySubscriptionColumns = `s.id, s.app_id, s.event_type, COALESCE(s.filter_user_id, 0), COALESCE(s.filter_keyword, ''),
	COALESCE(s.direction, ''), s.tag, CASE WHEN w.deleted_at IS NULL THEN COALESCE(s.webhook_id, 0) ELSE 0 END,
	s.created_by, s.created_at, s.updated_at`

func scanActivitySubscriptions(rows pgx.Rows, err error) ([]storage.ActivitySubscription, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ActivitySubscription, error) {
		var s storage.ActivitySubscription
		err := row.Scan(&s.ID, &s.AppID, &s.EventType, &s.FilterUserID, &s.FilterKeyword, &s.Direction, &s.Tag,
			&s.WebhookID, &s.CreatedBy, &s.CreatedAt, &s.UpdatedAt)
		return s, err
	})
}

// ActivitySubscriptionsMatching returns the subscriptions filtering by the
// user and naming the event type of any of keys, ordered by id; a private
// type's subscription only while its creator's grant to the app is live
// (liveGrant), so revoking the app stops its deliveries. A
// subscription whose webhook was deleted comes with WebhookID 0 (its
// events still reach the stream).
func (db *DB) ActivitySubscriptionsMatching(ctx context.Context, keys []storage.ActivityKey) ([]storage.ActivitySubscription, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	users, types := make([]int64, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		users[i], types[i] = k.UserID, k.EventType
	}
	out, err := scanActivitySubscriptions(db.pool.Query(ctx, `SELECT `+activitySubscriptionColumns+`
		FROM activity_subscriptions s LEFT JOIN webhooks w ON w.id = s.webhook_id
		WHERE (s.filter_user_id, s.event_type) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))
		  AND `+grantedPrivate("$3")+`
		ORDER BY s.id`, users, types, privateActivityTypes))
	return out, wrap("match activity subscriptions", err)
}

// AddActivityDeliveries records ds (kind activity) in one statement, in
// order, and notifies DeliveriesChannel in the same transaction, as
// AddWebhookDeliveries does. A delivery of a (webhook, event,
// subscription) recorded already is skipped (the live unique index of
// migration 0035), so a re-offered batch adds nothing. It returns how many
// were new.
func (db *DB) AddActivityDeliveries(ctx context.Context, ds []storage.NewActivityDelivery) (int64, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	hooks, apps, subs, seqs := make([]int64, len(ds)), make([]int64, len(ds)), make([]int64, len(ds)), make([]int64, len(ds))
	ats, bodies := make([]time.Time, len(ds)), make([][]byte, len(ds))
	for i, d := range ds {
		hooks[i], apps[i], subs[i], seqs[i], ats[i], bodies[i] = d.WebhookID, d.AppID, d.SubscriptionID, d.EventSeq, d.EventAt, d.Body
	}
	var n int64
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, subscription_id, event_seq, event_at, body)
			SELECT w, a, 'activity', sub, s, t, b
			FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::timestamptz[], $6::bytea[])
			  WITH ORDINALITY AS x(w, a, sub, s, t, b, n)
			WHERE EXISTS (SELECT 1 FROM webhooks h WHERE h.id = x.w AND h.deleted_at IS NULL)
			ORDER BY n
			ON CONFLICT DO NOTHING`, hooks, apps, subs, seqs, ats, bodies)
		if err != nil {
			return err
		}
		if n = tag.RowsAffected(); n > 0 {
			_, err = tx.Exec(ctx, `SELECT pg_notify('`+DeliveriesChannel+`', '')`)
		}
		return err
	})
	return n, wrap("record activity deliveries", err)
}
