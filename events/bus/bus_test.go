package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestControlsStayInTheirDatabase: pub/sub channels are server-wide in
// Redis, so two deployments on one server with the same prefix but other
// database numbers must not receive each other's controls; a bus on the
// same database does.
func TestControlsStayInTheirDatabase(t *testing.T) {
	prefix := "aviary-test:" + storagetest.RandomSuffix(8) + ":"
	client := func(db int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: storagetest.RedisAddr(), DB: db})
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := bus.New(client(3), prefix)
	same := bus.New(client(3), prefix).Controls(ctx)
	other := bus.New(client(4), prefix).Controls(ctx)
	time.Sleep(300 * time.Millisecond) // subscribed
	if err := pub.PublishControl(ctx, bus.Control{Kind: bus.Terminate, AppID: 7}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	select {
	case c := <-same:
		if c.AppID != 7 {
			t.Errorf("same database: %+v", c)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("same database: no control")
	}
	select {
	case c := <-other:
		t.Fatalf("another database received %+v", c)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestReadAfterLastMatchID: a reader that takes LastMatchID when it starts
// (and then the id of what it read) sees a match published while no read
// was in progress; reading with LatestID ("$") at that moment does not,
// which is why the stream hub never reads with LatestID after its start.
func TestReadAfterLastMatchID(t *testing.T) {
	rc, prefix := storagetest.RedisPrefix(t)
	b := bus.New(rc, prefix)
	ctx := context.Background()
	start, err := b.LastMatchID(ctx)
	if err != nil || start != bus.StartID {
		t.Fatalf("empty stream: %q, %v; want %q", start, err, bus.StartID)
	}
	if err := b.PublishMatches(ctx, []events.Match{{Seq: 1, PostID: 11, Rules: []events.RuleHit{{AppID: 1, RuleID: 2}}}}); err != nil {
		t.Fatal(err)
	}
	first, err := b.LastMatchID(ctx)
	if err != nil || first == bus.StartID {
		t.Fatalf("after one match: %q, %v", first, err)
	}
	// A match published between two reads (no read in progress).
	if err := b.PublishMatches(ctx, []events.Match{{Seq: 2, PostID: 12, Rules: []events.RuleHit{{AppID: 1, RuleID: 2}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.ReadMatches(ctx, first, 10*time.Millisecond, 10)
	if err != nil || len(got) != 1 || got[0].Match.Seq != 2 {
		t.Fatalf("read after the start id: %+v, %v; want the match of seq 2", got, err)
	}
	if got, err := b.ReadMatches(ctx, bus.LatestID, 10*time.Millisecond, 10); err != nil || len(got) != 0 {
		t.Fatalf("read with LatestID: %+v, %v; want nothing (what it would have missed)", got, err)
	}
}
