package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// streamConnectionsLock is the class of the per-app advisory lock that
// serialises opening connections, so two opens never both see room.
const streamConnectionsLock = 0x61767363 // "avsc"

// streamOpen is the condition of an open connection (table c).
const streamOpen = `c.disconnected_at IS NULL AND c.heartbeat_at > clock_timestamp() - interval '30 seconds'`

// streamConnectionColumns are what scanStreamConnection reads (table c).
const streamConnectionColumns = `c.id::text, c.app_id, c.endpoint, c.client_ip, c.replica, c.connected_at, c.disconnected_at, c.disconnect_reason`

func scanStreamConnection(row pgx.Row) (storage.StreamConnection, error) {
	var c storage.StreamConnection
	err := row.Scan(&c.ID, &c.AppID, &c.Endpoint, &c.ClientIP, &c.Replica, &c.ConnectedAt, &c.DisconnectedAt, &c.DisconnectReason)
	return c, err
}

// OpenStreamConnection records c as open unless its app already holds
// limit open connections to c.Endpoint (storage.ErrTooManyConnections;
// the limit is per endpoint, so the filtered stream and the activity
// stream do not take each other's place). The app's stale
// rows (a replica stopped renewing them) are closed first.
func (db *DB) OpenStreamConnection(ctx context.Context, c storage.StreamConnection, limit int) (storage.StreamConnection, error) {
	var out storage.StreamConnection
	err := db.inTx(ctx, fmt.Sprintf("open a stream connection of app %d", c.AppID), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2::bigint::text))`, streamConnectionsLock, c.AppID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE stream_connections c SET disconnected_at = c.heartbeat_at, disconnect_reason = $2
			WHERE c.app_id = $1 AND c.disconnected_at IS NULL AND c.heartbeat_at <= clock_timestamp() - interval '30 seconds'`,
			c.AppID, storage.DisconnectHeartbeat); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM stream_connections c WHERE c.app_id = $1 AND c.endpoint = $2 AND `+streamOpen,
			c.AppID, c.Endpoint).Scan(&open); err != nil {
			return err
		}
		if open >= limit {
			return storage.ErrTooManyConnections
		}
		var err error
		out, err = scanStreamConnection(tx.QueryRow(ctx, `INSERT INTO stream_connections AS c (app_id, endpoint, client_ip, replica)
			VALUES ($1, $2, $3, $4) RETURNING `+streamConnectionColumns, c.AppID, c.Endpoint, c.ClientIP, c.Replica))
		return err
	})
	if errors.Is(err, storage.ErrTooManyConnections) {
		return storage.StreamConnection{}, storage.ErrTooManyConnections
	}
	return out, err
}

// CloseStreamConnection marks connection id closed now for reason (nothing
// when it was closed already).
func (db *DB) CloseStreamConnection(ctx context.Context, id, reason string) error {
	_, err := db.pool.Exec(ctx, `UPDATE stream_connections SET disconnected_at = clock_timestamp(), disconnect_reason = $2
		WHERE id = $1::uuid AND disconnected_at IS NULL`, id, reason)
	return wrap("close stream connection "+id, err)
}

// renewStreamConnectionsSQL renews the heartbeat of open connections by
// id, through the primary key also under the generic plan (the ids as
// uuids; TestHeartbeatOfManyStreams checks the plan).
const renewStreamConnectionsSQL = `UPDATE stream_connections c SET heartbeat_at = clock_timestamp()
	WHERE c.id = ANY($1::uuid[]) AND c.disconnected_at IS NULL
	RETURNING c.id::text, c.terminate_requested_at IS NOT NULL`

// HeartbeatStreamConnections renews the heartbeat of the open connections
// among ids (a replica's) and returns those of ids that must end, each with
// why: storage.DisconnectTerminated when a termination was requested,
// storage.DisconnectHeartbeat when the row is no longer open (its
// heartbeats lapsed and another replica closed it, or it is unknown). It
// also closes every stale row (heartbeat_lost), whichever replica held it.
func (db *DB) HeartbeatStreamConnections(ctx context.Context, connIDs []string) (map[string]string, error) {
	if _, err := db.pool.Exec(ctx, `UPDATE stream_connections c SET disconnected_at = c.heartbeat_at, disconnect_reason = $1
		WHERE c.disconnected_at IS NULL AND c.heartbeat_at <= clock_timestamp() - interval '30 seconds'`, storage.DisconnectHeartbeat); err != nil {
		return nil, wrap("close stale stream connections", err)
	}
	if len(connIDs) == 0 {
		return nil, nil
	}
	// The ids are matched as uuids, by the primary key: a text comparison
	// (c.id::text) scans every open row per id under the generic plan.
	valid := make([]string, 0, len(connIDs))
	for _, id := range connIDs {
		if ids.IsUUID(id) {
			valid = append(valid, id)
		}
	}
	rows, err := db.pool.Query(ctx, renewStreamConnectionsSQL, valid)
	if err != nil {
		return nil, wrap("renew stream connections", err)
	}
	renewed := map[string]bool{} // id -> termination requested
	var id string
	var terminate bool
	_, err = pgx.ForEachRow(rows, []any{&id, &terminate}, func() error {
		renewed[id] = terminate
		return nil
	})
	if err != nil {
		return nil, wrap("renew stream connections", err)
	}
	end := map[string]string{}
	for _, id := range connIDs {
		switch terminate, ok := renewed[strings.ToLower(id)]; {
		case !ok:
			end[id] = storage.DisconnectHeartbeat
		case terminate:
			end[id] = storage.DisconnectTerminated
		}
	}
	return end, nil
}

// RequestStreamTermination marks the open connections t selects for
// termination and returns their ids.
func (db *DB) RequestStreamTermination(ctx context.Context, t storage.ConnectionTermination) ([]string, error) {
	where := []string{"c.app_id = $1", streamOpen}
	args := []any{t.AppID}
	if t.Endpoint != "" {
		args = append(args, t.Endpoint)
		where = append(where, fmt.Sprintf("c.endpoint = $%d", len(args)))
	}
	if t.IDs != nil {
		args = append(args, t.IDs)
		where = append(where, fmt.Sprintf("c.id::text = ANY($%d)", len(args)))
	}
	rows, err := db.pool.Query(ctx, `UPDATE stream_connections c SET terminate_requested_at = coalesce(c.terminate_requested_at, clock_timestamp())
		WHERE `+strings.Join(where, " AND ")+` RETURNING c.id::text`, args...)
	if err != nil {
		return nil, wrap(fmt.Sprintf("terminate stream connections of app %d", t.AppID), err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap(fmt.Sprintf("terminate stream connections of app %d", t.AppID), err)
}

// StreamConnections lists an app's connections as q selects them, newest
// first (connected_at, then id, descending).
func (db *DB) StreamConnections(ctx context.Context, q storage.ConnectionQuery) ([]storage.StreamConnection, error) {
	where := []string{"c.app_id = $1"}
	args := []any{q.AppID}
	switch q.Status {
	case storage.ConnectionsActive:
		where = append(where, streamOpen)
	case storage.ConnectionsInactive:
		where = append(where, "NOT ("+streamOpen+")")
	}
	if len(q.Endpoints) > 0 {
		args = append(args, q.Endpoints)
		where = append(where, fmt.Sprintf("c.endpoint = ANY($%d)", len(args)))
	}
	if q.After != "" {
		args = append(args, q.After)
		where = append(where, fmt.Sprintf(`(c.connected_at, c.id) < (SELECT a.connected_at, a.id FROM stream_connections a
			WHERE a.id::text = $%d AND a.app_id = $1)`, len(args)))
	}
	args = append(args, max(q.Limit, 1))
	rows, err := db.pool.Query(ctx, `SELECT `+streamConnectionColumns+` FROM stream_connections c WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY c.connected_at DESC, c.id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, wrap(fmt.Sprintf("list stream connections of app %d", q.AppID), err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.StreamConnection, error) { return scanStreamConnection(r) })
	return out, wrap(fmt.Sprintf("list stream connections of app %d", q.AppID), err)
}

// DeleteStreamConnectionsClosedBefore deletes the connection records
// closed more than age ago (open ones are kept however old), batch rows
// per statement (10,000 when 0); it returns how many it deleted.
func (db *DB) DeleteStreamConnectionsClosedBefore(ctx context.Context, age time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = 10_000
	}
	var total int64
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM stream_connections WHERE id IN (
			SELECT id FROM stream_connections WHERE disconnected_at < now() - $1::interval LIMIT $2)`, age, batch)
		if err != nil {
			return total, wrap("delete old stream connections", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}
