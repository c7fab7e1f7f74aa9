package streams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
)

const activityPath = "/2/activity/stream"

// TestActivityStreamRouting: the activity sink's entries reach the
// activity streams of their app only, once (a re-offered batch's repeats
// are skipped), and filtered-stream matches never reach an activity
// stream (nor activity entries a filtered stream); an app holds one
// stream of each endpoint, a second activity stream is TooManyConnections;
// backfill_minutes replays the app's entries; end_time is refused.
func TestActivityStreamRouting(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "herons", "")
	filtered := open(t, b.Srv.URL, streamPath, b.Bearer)
	act := open(t, b.Srv.URL, activityPath, b.Bearer)
	other := open(t, b.Srv.URL, activityPath, b.OtherBearer)
	if r := b.Call(t, "GET", activityPath, b.Bearer, "", nil); r.Status != 429 || apitest.Obj(r.Body, "connection_issue") != "TooManyConnections" {
		t.Errorf("a second activity stream: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "GET", activityPath+"?end_time=2026-01-01T00:00:00Z", b.Bearer, "", nil); r.Status != 400 {
		t.Errorf("end_time: %d %s, want 400", r.Status, r.Raw)
	}
	// The backfill reaches at most 5 minutes back, by either parameter.
	stamp := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }
	for _, tt := range []struct{ query, param string }{
		{"start_time=" + stamp(-6*time.Minute), "start_time"},
		{"start_time=2020-01-01T00:00:00Z", "start_time"},
		{"backfill_minutes=6", "backfill_minutes"},
		{"backfill_minutes=-1", "backfill_minutes"},
	} {
		r := b.Call(t, "GET", activityPath+"?"+tt.query, b.Bearer, "", nil)
		if r.Status != 400 || !strings.Contains(string(r.Raw), tt.param) || !strings.Contains(string(r.Raw), "invalid-request") {
			t.Errorf("%s: %d %s, want 400 invalid-request naming %s", tt.query, r.Status, r.Raw, tt.param)
		}
	}
	body := func(n int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"data":{"event_uuid":"%d"}}`, n)) }
	ctx := context.Background()
	batch := []events.Activity{{Seq: 5, AppID: b.App.ID, SubscriptionID: 1, Body: body(5)},
		{Seq: 5, AppID: b.App.ID, SubscriptionID: 2, Body: body(50)}, {Seq: 6, AppID: b.Other.ID, SubscriptionID: 3, Body: body(6)}}
	// The hubs' activity reads are under way; the batch is offered twice.
	time.Sleep(200 * time.Millisecond)
	for range 2 {
		if err := b.Bus.PublishActivity(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Bus.PublishActivity(ctx, []events.Activity{{Seq: 7, AppID: b.App.ID, SubscriptionID: 1, Body: body(7)}}); err != nil {
		t.Fatal(err)
	}
	_, n := b.post(t, "herons again")
	b.dispatch(t, n)
	for _, want := range []string{`{"data":{"event_uuid":"5"}}`, `{"data":{"event_uuid":"50"}}`, `{"data":{"event_uuid":"7"}}`} {
		line, ok := act.next(t, 5*time.Second)
		if !ok || line != want {
			t.Fatalf("activity stream: %q, want %s", line, want)
		}
	}
	if line, ok := act.next(t, 500*time.Millisecond); ok {
		t.Errorf("activity stream: an extra line %q (a repeat, or the filtered stream's post)", line)
	}
	if line, ok := other.next(t, 3*time.Second); !ok || line != `{"data":{"event_uuid":"6"}}` {
		t.Errorf("the other app's activity stream: %q", line)
	}
	line, ok := filtered.next(t, 5*time.Second)
	if !ok || apitest.Obj(decode(t, line), "data", "id") != itoa(n) {
		t.Fatalf("filtered stream: %q, want post %d", line, n)
	}
	if line, ok := filtered.next(t, 300*time.Millisecond); ok {
		t.Errorf("filtered stream: an extra line %q", line)
	}
	act.Close()
	time.Sleep(200 * time.Millisecond)
	back := open(t, b.Srv.URL, activityPath+"?backfill_minutes=1", b.Bearer)
	for _, want := range []string{"5", "50", "7"} {
		line, ok := back.next(t, 3*time.Second)
		if !ok || apitest.Obj(decode(t, line), "data", "event_uuid") != want {
			t.Fatalf("backfill: %q, want event %s", line, want)
		}
	}
	back.Close()
	time.Sleep(200 * time.Millisecond)
	since := open(t, b.Srv.URL, activityPath+"?start_time="+stamp(-4*time.Minute), b.Bearer)
	if line, ok := since.next(t, 3*time.Second); !ok || apitest.Obj(decode(t, line), "data", "event_uuid") != "5" {
		t.Fatalf("backfill from a start_time 4 minutes ago: %q, want event 5 first", line)
	}
}

// TestActivityStreamAfterRedisLostItsData: an activity published while the
// hub could not read Redis, then lost with Redis's data, still reaches the
// activity stream: the publisher (the activity sink's) puts its recent
// entries back before the next one, and the hub routes those it never
// read, skipping the one it had (no repeat). With the bus's plain append
// the lost activity would never come.
func TestActivityStreamAfterRedisLostItsData(t *testing.T) {
	b := setupStreams(t, options{})
	act := open(t, b.Srv.URL, activityPath, b.Bearer)
	ctx := context.Background()
	pub := &bus.ActivityPublisher{Bus: b.Bus, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	publish := func(seq int64) {
		t.Helper()
		body := json.RawMessage(fmt.Sprintf(`{"data":{"event_uuid":"%d"}}`, seq))
		if err := pub.PublishActivity(ctx, []events.Activity{{Seq: seq, AppID: b.App.ID, SubscriptionID: 1, Body: body}}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(seqs ...string) {
		t.Helper()
		for _, want := range seqs {
			line, ok := act.next(t, 10*time.Second)
			if !ok || apitest.Obj(decode(t, line), "data", "event_uuid") != want {
				t.Fatalf("activity stream: %q, want event %s", line, want)
			}
		}
		if line, ok := act.next(t, 500*time.Millisecond); ok {
			t.Fatalf("activity stream: an extra line %q", line)
		}
	}
	// Until the hub reads the stream, what is published before its start
	// is not for it: publish until one line arrives.
	uuid := func(line string) string {
		id, _ := apitest.Obj(decode(t, line), "data", "event_uuid").(string)
		return id
	}
	seq := int64(0)
	line, arrived := "", false
	for !arrived {
		if seq++; seq > 20 {
			t.Fatal("the activity stream shows nothing published")
		}
		publish(seq)
		line, arrived = act.next(t, 500*time.Millisecond)
	}
	for uuid(line) != strconv.FormatInt(seq, 10) { // the hub reads now: wait for the newest
		if line, arrived = act.next(t, 10*time.Second); !arrived {
			t.Fatalf("activity %d never came", seq)
		}
	}
	b.Proxy.SetDown(true)
	time.Sleep(300 * time.Millisecond) // the hub's read fails
	publish(seq + 1)                   // published, never read
	if err := b.RC.Del(ctx, b.Bus.ActivityKey()).Err(); err != nil {
		t.Fatal(err) // Redis restarted empty
	}
	publish(seq + 2)
	b.Proxy.SetDown(false)
	expect(strconv.FormatInt(seq+1, 10), strconv.FormatInt(seq+2, 10))
}
