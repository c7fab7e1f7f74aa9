package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// The console's lists of media, streaming connections and activity
// subscriptions (docs/console.md): those of the apps given, or of every
// app when all is set (an administrator's view), newest first.

// ConsoleMedia lists the newest limit media uploads of apps (every
// upload when all, also those whose app is gone).
func (db *DB) ConsoleMedia(ctx context.Context, apps []int64, all bool, limit int) ([]storage.Media, error) {
	out, err := collectMedia(db.pool.Query(ctx, `SELECT `+mediaColumns+` FROM media
		WHERE $2 OR app_id = ANY($1) ORDER BY id DESC LIMIT $3`, nonNil(apps), all, max(limit, 1)))
	return out, wrap("list console media", err)
}

// ConsoleStreamConnections lists the open streaming connections of apps
// (of every app when all), on whichever replica holds them, newest first:
// the records GET /2/connections reads.
func (db *DB) ConsoleStreamConnections(ctx context.Context, apps []int64, all bool, limit int) ([]storage.StreamConnection, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+streamConnectionColumns+` FROM stream_connections c
		WHERE ($2 OR c.app_id = ANY($1)) AND `+streamOpen+` ORDER BY c.connected_at DESC, c.id DESC LIMIT $3`,
		nonNil(apps), all, max(limit, 1))
	if err != nil {
		return nil, wrap("list console stream connections", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.StreamConnection, error) { return scanStreamConnection(r) })
	return out, wrap("list console stream connections", err)
}

// ConsoleActivitySubscriptions lists the activity subscriptions of apps
// (of every app when all), newest first.
func (db *DB) ConsoleActivitySubscriptions(ctx context.Context, apps []int64, all bool, limit int) ([]storage.ActivitySubscription, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+activityColumns+` FROM activity_subscriptions
		WHERE $2 OR app_id = ANY($1) ORDER BY id DESC LIMIT $3`, nonNil(apps), all, max(limit, 1))
	if err != nil {
		return nil, wrap("list console activity subscriptions", err)
	}
	out, err := collectActivitySubscriptions(rows)
	return out, wrap("list console activity subscriptions", err)
}
