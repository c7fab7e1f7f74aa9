package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestHeartbeatOfManyStreams: a replica holding 20,000 streams renews them
// every 2 seconds (its poll, bounded at 5 s). The renewal must reach the
// rows through the primary key also once PostgreSQL switches the prepared
// statement to its generic plan (after five runs): matching c.id::text
// against a text array parameter scanned every open row for every id
// (quadratic; about 7 s per poll at 20,000), so heartbeats failed and
// every stream lapsed. The plan is checked, not the time: eight renewals
// answer right, and the generic plan of the statement is an index scan.
func TestHeartbeatOfManyStreams(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	pool := storagetest.BarePool(t, dbURL)
	rows, err := pool.Query(ctx, `INSERT INTO stream_connections (app_id, endpoint)
		SELECT $1, 'filtered_stream' FROM generate_series(1, 20000) RETURNING id::text`, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s)
	}
	rows.Close()
	ids = append(ids, "nope") // not a connection: ends
	for i := range 8 {
		start := time.Now()
		end, err := db.HeartbeatStreamConnections(ctx, ids)
		if err != nil || len(end) != 1 || end["nope"] != storage.DisconnectHeartbeat {
			t.Fatalf("heartbeat %d: end %v, %v", i, end, err)
		}
		t.Logf("heartbeat %d: %v", i, time.Since(start))
	}
	if _, err := pool.Exec(ctx, `ANALYZE stream_connections`); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, stmt := range []string{`SET plan_cache_mode = force_generic_plan`,
		`PREPARE renew(uuid[]) AS ` + postgres.RenewStreamConnectionsSQL} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var plan []string
	explain, err := conn.Query(ctx, `EXPLAIN EXECUTE renew('{}')`)
	if err != nil {
		t.Fatal(err)
	}
	for explain.Next() {
		var line string
		if err := explain.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	explain.Close()
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "stream_connections_pkey") || strings.Contains(text, "Seq Scan") {
		t.Errorf("the generic plan of the renewal does not use the primary key:\n%s", text)
	}
}
