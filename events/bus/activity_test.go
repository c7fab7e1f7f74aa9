package bus_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// TestActivityPublisherPutsBackWhatRedisLost: a publisher whose last entry
// is no longer the stream's newest (Redis restarted empty, or from an
// older snapshot) adds its kept entries again before the new ones; kept
// entries older than Keep, or beyond KeepMax, are not; nothing is added
// twice while Redis keeps its data; a batch larger than one script call's
// chunk goes in whole and in order.
func TestActivityPublisherPutsBackWhatRedisLost(t *testing.T) {
	ctx := context.Background()
	act := func(seqs ...int64) []events.Activity {
		var as []events.Activity
		for _, s := range seqs {
			as = append(as, events.Activity{Seq: s, AppID: 1, SubscriptionID: 7, Body: json.RawMessage(`{}`)})
		}
		return as
	}
	stream := func(t *testing.T, b *bus.Bus) []int64 { // the whole stream's seqs
		t.Helper()
		got, err := b.ReadActivity(ctx, bus.StartID, 0, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		seqs := make([]int64, len(got))
		for i, d := range got {
			seqs[i] = d.Activity.Seq
		}
		return seqs
	}
	seqRange := func(from, to int64) []int64 {
		var out []int64
		for s := from; s <= to; s++ {
			out = append(out, s)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		keep time.Duration
		max  int
		lose func(t *testing.T, rc *redis.Client, b *bus.Bus)
		want []int64 // after publishing 1, 2 (an hour apart for keep), losing, then 3
	}{
		{"kept", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {}, []int64{1, 2, 3}},
		{"restarted empty", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			if err := rc.Del(ctx, b.ActivityKey()).Err(); err != nil {
				t.Fatal(err)
			}
		}, []int64{1, 2, 3}},
		{"older snapshot", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			newest, _ := rc.XRevRangeN(ctx, b.ActivityKey(), "+", "-", 1).Result()
			if err := rc.XDel(ctx, b.ActivityKey(), newest[0].ID).Err(); err != nil {
				t.Fatal(err)
			}
		}, []int64{1, 1, 2, 3}}, // 1 survived in the snapshot and goes in again: readers skip it
		{"older than keep", 30 * time.Minute, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			rc.Del(ctx, b.ActivityKey())
		}, []int64{2, 3}},
		{"beyond keep max", time.Hour, 1, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			rc.Del(ctx, b.ActivityKey())
		}, []int64{2, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc, prefix := storagetest.RedisPrefix(t)
			b := bus.New(rc, prefix)
			now := time.Now()
			p := &bus.ActivityPublisher{Bus: b, Keep: tt.keep, KeepMax: tt.max, Clock: func() time.Time { return now },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if err := p.PublishActivity(ctx, act(1)); err != nil {
				t.Fatal(err)
			}
			now = now.Add(45 * time.Minute)
			if err := p.PublishActivity(ctx, act(2)); err != nil {
				t.Fatal(err)
			}
			tt.lose(t, rc, b)
			if err := p.PublishActivity(ctx, act(3)); err != nil {
				t.Fatal(err)
			}
			if got := stream(t, b); !slices.Equal(got, tt.want) {
				t.Errorf("stream after the loss = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("on Redis Cluster", func(t *testing.T) { // the script's one key
		rc := storagetest.RedisCluster(t).Client(t)
		b := bus.New(rc, "aviary:")
		p := &bus.ActivityPublisher{Bus: b, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		for _, seq := range []int64{1, 2} {
			if err := p.PublishActivity(ctx, act(seq)); err != nil {
				t.Fatal(err)
			}
		}
		if err := rc.Del(ctx, b.ActivityKey()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := p.PublishActivity(ctx, act(3)); err != nil {
			t.Fatal(err)
		}
		if got := stream(t, b); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Errorf("stream after the loss = %v, want [1 2 3]", got)
		}
	})
	t.Run("larger than a chunk", func(t *testing.T) {
		rc, prefix := storagetest.RedisPrefix(t)
		b := bus.New(rc, prefix)
		p := &bus.ActivityPublisher{Bus: b}
		if err := p.PublishActivity(ctx, act(seqRange(1, 1200)...)); err != nil {
			t.Fatal(err)
		}
		if err := rc.Del(ctx, b.ActivityKey()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := p.PublishActivity(ctx, act(seqRange(1201, 1700)...)); err != nil {
			t.Fatal(err)
		}
		if got := stream(t, b); !slices.Equal(got, seqRange(1, 1700)) {
			t.Errorf("stream: %d entries (first %v), want 1..1700 in order", len(got), got[:min(5, len(got))])
		}
	})
}
