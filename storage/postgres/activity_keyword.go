package postgres

import (
	"context"

	"github.com/aviary-dev/aviary/storage"
)

// ActivityKeywordSubscriptions returns the subscriptions to eventType
// filtering by a keyword that occurs in one of texts (news stories'
// headlines and summaries), ordered by id, in one query for a batch. The
// test here is a substring test, compared lower-cased with white space
// collapsed: a superset of domain/activity.KeywordMatches (whole words),
// which the sink applies per event. Keyword types are public, so there is
// no grant condition. A subscription whose webhook was deleted comes with
// WebhookID 0, as in ActivitySubscriptionsMatching.
func (db *DB) ActivityKeywordSubscriptions(ctx context.Context, eventType string, texts []string) ([]storage.ActivitySubscription, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out, err := scanActivitySubscriptions(db.pool.Query(ctx, `SELECT `+activitySubscriptionColumns+`
		FROM activity_subscriptions s LEFT JOIN webhooks w ON w.id = s.webhook_id
		WHERE s.event_type = $1 AND s.filter_keyword IS NOT NULL
		  AND EXISTS (SELECT 1 FROM unnest($2::text[]) x
			WHERE strpos(lower(regexp_replace(x, '\s+', ' ', 'g')),
				lower(btrim(regexp_replace(s.filter_keyword, '\s+', ' ', 'g')))) > 0)
		ORDER BY s.id`, eventType, texts))
	return out, wrap("match activity keyword subscriptions", err)
}
