package postgres_test

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestStreamConnectionLimit: opens racing for an app's last slot admit
// exactly the limit (the per-app lock); a closed one frees its slot; a row
// whose heartbeat lapsed stops counting and is closed as heartbeat_lost.
func TestStreamConnectionLimit(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	conn := storage.StreamConnection{AppID: app.ID, Endpoint: storage.EndpointFilteredStream, ClientIP: "10.0.0.1", Replica: "r1"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var opened []string
	var refused int
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.OpenStreamConnection(ctx, conn, 2)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, storage.ErrTooManyConnections):
				refused++
			case err != nil:
				t.Errorf("open: %v", err)
			default:
				opened = append(opened, c.ID)
			}
		}()
	}
	wg.Wait()
	if len(opened) != 2 || refused != 6 {
		t.Fatalf("opened %d, refused %d; want 2 and 6", len(opened), refused)
	}
	if err := db.CloseStreamConnection(ctx, opened[0], storage.DisconnectClient); err != nil {
		t.Fatal(err)
	}
	third, err := db.OpenStreamConnection(ctx, conn, 2)
	if err != nil {
		t.Fatalf("open after a close: %v", err)
	}
	// The replica holding opened[1] died: its heartbeat lapses.
	pool := storagetest.BarePool(t, dbURL)
	if _, err := pool.Exec(ctx, `UPDATE stream_connections SET heartbeat_at = now() - interval '31 seconds' WHERE id = $1`, opened[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenStreamConnection(ctx, conn, 2); err != nil {
		t.Fatalf("open beside a stale row: %v", err)
	}
	list, err := db.StreamConnections(ctx, storage.ConnectionQuery{AppID: app.ID, Status: storage.ConnectionsInactive, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, c := range list {
		reasons[c.ID] = c.DisconnectReason
	}
	if reasons[opened[0]] != storage.DisconnectClient || reasons[opened[1]] != storage.DisconnectHeartbeat || len(list) != 2 {
		t.Errorf("closed rows %v", reasons)
	}
	// Heartbeats: the open one is kept; the closed and unknown ones end as
	// lapsed records (not terminations).
	end, err := db.HeartbeatStreamConnections(ctx, []string{third.ID, opened[0], "nope"})
	want := map[string]string{opened[0]: storage.DisconnectHeartbeat, "nope": storage.DisconnectHeartbeat}
	if err != nil || !maps.Equal(end, want) {
		t.Errorf("heartbeat ends %v (%v), want %v", end, err, want)
	}
}

// TestStreamTermination: a request marks only the app's open rows it
// selects; the holder's heartbeat then returns them.
func TestStreamTermination(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app, other := factory.App(t, db, nil), factory.App(t, db, nil)
	open := func(appID int64) string {
		c, err := db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: appID, Endpoint: storage.EndpointFilteredStream}, 5)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	a1, a2, o1 := open(app.ID), open(app.ID), open(other.ID)
	for _, tt := range []struct {
		name string
		req  storage.ConnectionTermination
		want []string
	}{
		{"other endpoint", storage.ConnectionTermination{AppID: app.ID, Endpoint: "sample_stream"}, nil},
		{"another app's id", storage.ConnectionTermination{AppID: app.ID, IDs: []string{o1, "junk"}}, nil},
		{"by id", storage.ConnectionTermination{AppID: app.ID, IDs: []string{a1}}, []string{a1}},
		{"all (again a1)", storage.ConnectionTermination{AppID: app.ID}, sortedIDs(a1, a2)},
	} {
		got, err := db.RequestStreamTermination(ctx, tt.req)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v (%v), want %v", tt.name, got, err, tt.want)
		}
	}
	end, err := db.HeartbeatStreamConnections(ctx, []string{a1, a2, o1})
	want := map[string]string{a1: storage.DisconnectTerminated, a2: storage.DisconnectTerminated}
	if err != nil || !maps.Equal(end, want) {
		t.Errorf("heartbeat ends %v (%v), want %v", end, err, want)
	}
}

func sortedIDs(s ...string) []string {
	slices.Sort(s)
	return s
}
