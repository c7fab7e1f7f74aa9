package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestActivityStream: published activities are read after the last id,
// and by time with paging (the activity stream's backfill).
func TestActivityStream(t *testing.T) {
	rc, prefix := storagetest.RedisPrefix(t)
	b := bus.New(rc, prefix)
	ctx := context.Background()
	start, err := b.LastActivityID(ctx)
	if err != nil || start != bus.StartID {
		t.Fatalf("empty stream: %q, %v", start, err)
	}
	before := time.Now().Add(-time.Second)
	var as []events.Activity
	for i := range 5 {
		as = append(as, events.Activity{Seq: int64(10 + i), AppID: 1, SubscriptionID: 7, Body: json.RawMessage(`{"data":{}}`)})
	}
	if err := b.PublishActivity(ctx, as); err != nil {
		t.Fatal(err)
	}
	got, err := b.ReadActivity(ctx, start, 10*time.Millisecond, 10)
	if err != nil || len(got) != 5 || got[0].Activity.Seq != 10 || string(got[4].Activity.Body) != `{"data":{}}` {
		t.Fatalf("ReadActivity = %+v, %v", got, err)
	}
	var seqs []int64
	after := ""
	for range 5 {
		page, err := b.ActivitySince(ctx, before, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, d := range page {
			seqs = append(seqs, d.Activity.Seq)
			after = d.StreamID
		}
	}
	if len(seqs) != 5 || seqs[0] != 10 || seqs[4] != 14 {
		t.Errorf("ActivitySince in pages of 2 = %v, want 10..14", seqs)
	}
	if late, err := b.ActivitySince(ctx, time.Now().Add(time.Minute), "", 10); err != nil || len(late) != 0 {
		t.Errorf("ActivitySince a future time = %+v, %v; want nothing", late, err)
	}
}
