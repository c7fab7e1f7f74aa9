package bus_test

import (
	"context"
	"encoding/json"
	"errors"
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
		name  string
		keep  time.Duration
		max   int
		lose  func(t *testing.T, rc *redis.Client, b *bus.Bus)
		later time.Duration // between the loss and publishing 3
		want  []int64       // after publishing 1, 2 (45 minutes apart), losing, then 3
	}{
		{"kept", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {}, 0, []int64{1, 2, 3}},
		{"restarted empty", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			if err := rc.Del(ctx, b.ActivityKey()).Err(); err != nil {
				t.Fatal(err)
			}
		}, 0, []int64{1, 2, 3}},
		{"older snapshot", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			newest, _ := rc.XRevRangeN(ctx, b.ActivityKey(), "+", "-", 1).Result()
			if err := rc.XDel(ctx, b.ActivityKey(), newest[0].ID).Err(); err != nil {
				t.Fatal(err)
			}
		}, 0, []int64{1, 1, 2, 3}}, // 1 survived in the snapshot and goes in again: readers skip it
		{"older than keep", 30 * time.Minute, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			rc.Del(ctx, b.ActivityKey())
		}, 0, []int64{2, 3}},
		{"beyond keep max", time.Hour, 1, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			rc.Del(ctx, b.ActivityKey())
		}, 0, []int64{2, 3}},
		{"after a quiet spell", 30 * time.Minute, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			rc.Del(ctx, b.ActivityKey())
		}, 31 * time.Minute, []int64{3}}, // 2 is older than keep when the loss is found
		{"another writer after ours", time.Hour, 0, func(t *testing.T, rc *redis.Client, b *bus.Bus) {
			// as after a reply of ours lost once the script ran, or another holder's append
			if err := b.PublishActivity(ctx, act(99)); err != nil {
				t.Fatal(err)
			}
		}, 0, []int64{1, 2, 99, 3}},
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
			now = now.Add(tt.later)
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

// failScripts fails the script calls (EVALSHA, EVAL) whose number, counted
// from when it is armed, is in fail.
type failScripts struct {
	armed bool
	calls int
	fail  map[int]bool
}

func (h *failScripts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); h.armed && (name == "evalsha" || name == "eval") {
			h.calls++
			if h.fail[h.calls] {
				err := errors.New("injected: connection reset")
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}

func (h *failScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestActivityPublisherReAddCutShort: the re-add after a loss fails after
// its first chunk went in; the batch, offered again, puts back every kept
// entry, not only the new ones (the publisher forgets its newest id, so
// the chunk that did go in is no proof).
func TestActivityPublisherReAddCutShort(t *testing.T) {
	ctx := context.Background()
	rc, prefix := storagetest.RedisPrefix(t)
	hook := &failScripts{fail: map[int]bool{3: true}} // the check, chunk 1, then chunk 2 fails
	pc := redis.NewClient(&redis.Options{Addr: storagetest.RedisAddr(), DB: rc.Options().DB})
	t.Cleanup(func() { pc.Close() })
	pc.AddHook(hook)
	b := bus.New(pc, prefix)
	p := &bus.ActivityPublisher{Bus: b, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	batch := func(from, to int64) []events.Activity {
		var as []events.Activity
		for s := from; s <= to; s++ {
			as = append(as, events.Activity{Seq: s, AppID: 1, SubscriptionID: 7, Body: json.RawMessage(`{}`)})
		}
		return as
	}
	if err := p.PublishActivity(ctx, batch(1, 600)); err != nil {
		t.Fatal(err)
	}
	if err := rc.Del(ctx, b.ActivityKey()).Err(); err != nil {
		t.Fatal(err)
	}
	hook.armed = true
	if err := p.PublishActivity(ctx, batch(601, 601)); err == nil {
		t.Fatal("the re-add cut short reported no error")
	}
	hook.armed = false
	if err := p.PublishActivity(ctx, batch(601, 601)); err != nil {
		t.Fatal(err)
	}
	got, err := b.ReadActivity(ctx, bus.StartID, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, d := range got {
		seen[d.Activity.Seq] = true
	}
	for s := int64(1); s <= 601; s++ {
		if !seen[s] {
			t.Fatalf("entry %d missing after the re-add was offered again (%d entries in the stream)", s, len(got))
		}
	}
}
