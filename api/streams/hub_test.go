package streams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

// TestCatchUpAfterRedisError: while the hub cannot reach Redis (and the
// matches stream is even deleted), a matching post is made; once Redis
// answers, the hub catches up from the log and delivers it, and the match
// the dispatcher publishes for it later is skipped by Seq.
func TestCatchUpAfterRedisError(t *testing.T) {
	b := setupStreams(t, options{})
	wet := b.rule(t, b.App.ID, "otters", "wet")
	b.rule(t, b.Other.ID, "otters", "")
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	b.Proxy.SetDown(true)
	time.Sleep(300 * time.Millisecond) // the hub's read fails
	_, n := b.post(t, "Otters hold hands")
	if err := b.RC.Del(context.Background(), b.Bus.MatchesKey()).Err(); err != nil {
		t.Fatal(err)
	}
	b.Proxy.SetDown(false)
	line, ok := s.next(t, 10*time.Second)
	if !ok {
		t.Fatal("the post made while Redis was away never came")
	}
	got := decode(t, line)
	if apitest.Obj(got, "data", "id") != itoa(n) || apitest.CanonicalJSON(t, mustJSON(got["matching_rules"])) != fmt.Sprintf(`[{"id":"%d","tag":"wet"}]`, wet.ID) {
		t.Fatalf("caught up %s", line)
	}
	// The dispatcher's match for the same event, then a newer one.
	_, n2 := b.post(t, "otters again")
	b.dispatch(t, n, n2)
	line, ok = s.next(t, 5*time.Second)
	if !ok || apitest.Obj(decode(t, line), "data", "id") != itoa(n2) {
		t.Fatalf("after the catch-up: %q (a duplicate of %d, or nothing)", line, n)
	}
}

// TestStopEndsStreams: stopping the hub (shutdown) ends every stream with
// the platform's operational-disconnect and closes the records; new
// streams are refused until the process is gone.
func TestStopEndsStreams(t *testing.T) {
	b := setupStreams(t, options{})
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	other := open(t, b.Srv.URL, streamPath, b.OtherBearer)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	b.Hub.Stop(ctx)
	if time.Since(start) > 2*time.Second {
		t.Errorf("stop took %v", time.Since(start))
	}
	want := `{"errors":[{"detail":"This stream has been disconnected upstream for operational reasons.","disconnect_type":"UpstreamOperationalDisconnect",` +
		`"title":"operational-disconnect","type":"https://api.x.com/2/problems/operational-disconnect"}]}`
	for _, c := range []*streamClient{s, other} {
		line, ok := c.next(t, time.Second)
		if !ok || apitest.CanonicalJSON(t, line) != want {
			t.Fatalf("stream end %q", line)
		}
		if !c.ended(time.Second) {
			t.Fatal("stream stayed open")
		}
	}
	r := b.Get(t, "/2/connections?status=inactive", b.Bearer)
	if apitest.Obj(r.Body, "data", "0", "disconnect_reason") != storage.DisconnectOperational {
		t.Errorf("record: %s", r.Raw)
	}
	if r := b.Call(t, "GET", streamPath, b.Bearer, "", nil); r.Status != 503 || apitest.Obj(r.Body, "type") != apitest.Problems+"operational-disconnect" {
		t.Errorf("stream after stop: %d %s", r.Status, r.Raw)
	}
}

// TestBackfill: backfill_minutes replays the matching posts of the last
// minutes from the log, oldest first, before the live stream.
func TestBackfill(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "herons", "birds")
	_, n1 := b.post(t, "herons at dawn")
	b.post(t, "nothing to see")
	_, n2 := b.post(t, "more herons")
	none := open(t, b.Srv.URL, streamPath, b.Bearer)
	if line, ok := none.next(t, 300*time.Millisecond); ok {
		t.Fatalf("without backfill_minutes: %s", line)
	}
	none.Close()
	time.Sleep(100 * time.Millisecond)
	s := open(t, b.Srv.URL, streamPath+"?backfill_minutes=2", b.Bearer)
	for _, want := range []int64{n1, n2} {
		line, ok := s.next(t, 3*time.Second)
		if !ok {
			t.Fatalf("backfill of %d missing", want)
		}
		got := decode(t, line)
		if apitest.Obj(got, "data", "id") != itoa(want) || apitest.Obj(got, "matching_rules", "0", "tag") != "birds" {
			t.Fatalf("backfill: %s, want post %d", line, want)
		}
	}
}

// TestBackfillIncludesPostsMatchedLate: a post created before the
// backfill's minutes whose match the dispatcher published within them
// (late: its cursor changed hands) went out live to the clients connected
// then, so a client that was away gets it from the backfill too; a post
// created as long ago and published then does not come.
func TestBackfillIncludesPostsMatchedLate(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "herons", "birds")
	_, early := b.post(t, "herons long ago, published then")
	_, late := b.post(t, "herons long ago, published late")
	conn, err := pgx.Connect(context.Background(), b.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE events SET created_at = created_at - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}
	// The early post's match went out before the backfill's minutes: its
	// stream entry's id is of 10 minutes ago.
	m := b.dispatchMatches(t, early)[0]
	body, _ := json.Marshal(m)
	old := fmt.Sprintf("%d-0", time.Now().Add(-10*time.Minute).UnixMilli())
	if err := b.RC.XAdd(context.Background(), &redis.XAddArgs{Stream: b.Bus.MatchesKey(), ID: old, Values: []any{"m", body}}).Err(); err != nil {
		t.Fatal(err)
	}
	b.dispatch(t, late)
	time.Sleep(100 * time.Millisecond)
	s := open(t, b.Srv.URL, streamPath+"?backfill_minutes=1", b.Bearer)
	line, ok := s.next(t, 3*time.Second)
	if !ok || apitest.Obj(decode(t, line), "data", "id") != itoa(late) {
		t.Fatalf("backfill: %q, want post %d (matched late)", line, late)
	}
	// A hub slower than the connection may route the late match live too
	// (a copy, as the platform allows); the early post never comes.
	for {
		line, ok := s.next(t, 500*time.Millisecond)
		if !ok {
			break
		}
		if id := apitest.Obj(decode(t, line), "data", "id"); id != itoa(late) {
			t.Fatalf("backfill: post %s, want only post %d (not the one published 10 minutes ago)", id, late)
		}
	}
}

func itoa(n int64) string {
	return strconv.FormatInt(n, 10)
}

// TestCatchUpAfterRedisLostItsData: Redis restarted empty between two
// reads of the hub, so quickly that no call of the hub failed (go-redis
// retries on a new connection), taking with it the match of a post the hub
// had not read yet. The bus's epoch changed with the data, so the hub
// catches up from the log and the post still arrives.
func TestCatchUpAfterRedisLostItsData(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "otters", "wet")
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	time.Sleep(300 * time.Millisecond) // the hub has read the epoch
	_, n := b.post(t, "Otters float")  // its match was published to the Redis that was lost
	ctx := context.Background()
	if err := b.RC.Del(ctx, b.Bus.MatchesKey(), b.Bus.EpochKey()).Err(); err != nil {
		t.Fatal(err)
	}
	line, ok := s.next(t, 10*time.Second)
	if !ok {
		t.Fatal("the post whose match Redis lost never came")
	}
	if got := apitest.Obj(decode(t, line), "data", "id"); got != itoa(n) {
		t.Fatalf("caught up %s, want post %d", line, n)
	}
}
