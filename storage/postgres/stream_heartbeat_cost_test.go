package postgres_test

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestHeartbeatOfManyStreams: a replica holding 20,000 streams renews them
// every 2 seconds (its poll, bounded at 5 s). The renewal must stay far
// below that once PostgreSQL switches the prepared statement to its
// generic plan (after five runs): matching c.id::text against a text
// array parameter scanned every open row for every id (quadratic; about
// 7 s per poll at 20,000), so heartbeats failed and every stream lapsed.
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
		took := time.Since(start)
		if err != nil || len(end) != 1 || end["nope"] != storage.DisconnectHeartbeat {
			t.Fatalf("heartbeat %d: end %v, %v", i, end, err)
		}
		t.Logf("heartbeat %d: %v", i, took)
		if took > 2*time.Second {
			t.Fatalf("heartbeat %d of %d streams took %v", i, len(ids)-1, took)
		}
	}
}
