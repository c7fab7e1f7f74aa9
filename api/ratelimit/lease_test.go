package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replicas returns n Limiters sharing one Redis and prefix (API replicas),
// each with its own command counter, on clk.
func replicas(t *testing.T, n int, clk func() time.Time) ([]*Limiter, []*commandCounter, string) {
	t.Helper()
	client, prefix := testRedis(t)
	var out []*Limiter
	var counters []*commandCounter
	for range n {
		rc := client
		if n > 1 { // a client per replica, as separate processes have
			rc = redis.NewClient(client.Options())
			t.Cleanup(func() { rc.Close() })
		}
		counter := &commandCounter{}
		rc.AddHook(counter)
		out = append(out, NewLimiter(rc, prefix, clk, quietWriter))
		counters = append(counters, counter)
	}
	return out, counters, prefix
}

// TestLeasesAdmitExactlyTheLimit: three replicas, 24 goroutines, 30,000
// requests against a limit of 10,000 in one window. Exactly 10,000 are
// admitted (leases are taken atomically and never past the limit), with
// far fewer Redis round trips than requests.
func TestLeasesAdmitExactlyTheLimit(t *testing.T) {
	t.Parallel()
	ls, counters, _ := replicas(t, 3, time.Now)
	rule := Rule{Name: "lease.exact", Limit: 10_000, Window: time.Hour, Scope: PerApp}
	subject := Subject{Kind: "app", ID: 1}
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Go(func() {
			for range 1250 {
				d, err := ls[g%3].Allow(context.Background(), rule, subject)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				} else {
					refused.Add(1)
				}
				if d.Remaining < 0 || d.Remaining > rule.Limit {
					t.Errorf("remaining %d", d.Remaining)
				}
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 10_000 || refused.Load() != 20_000 {
		t.Errorf("admitted %d, refused %d; want 10000 and 20000", admitted.Load(), refused.Load())
	}
	var trips int64
	for _, c := range counters {
		trips += c.trips.Load()
	}
	// Refused requests each ask Redis (a refusal is never cached), so
	// compare the admitted ones: they took leases of many requests.
	if trips-refused.Load() > admitted.Load()/4 {
		t.Errorf("%d Redis round trips for %d admitted and %d refused requests: leases are not being used", trips, admitted.Load(), refused.Load())
	}
	t.Logf("%d Redis round trips for 30,000 requests", trips)
}

// TestLeaseGivesBackUnused: a replica that took a lease of many requests
// and stops gives back what it did not use once it has been idle for
// leaseIdle, so the counter (and another replica's remaining) is exact.
func TestLeaseGivesBackUnused(t *testing.T) {
	t.Parallel()
	clk := &clock{now: t0}
	ls, _, prefix := replicas(t, 2, clk.Now)
	rule := Rule{Name: "lease.back", Limit: 100_000, Window: 15 * time.Minute, Scope: PerApp}
	subject := Subject{Kind: "app", ID: 2}
	ctx := context.Background()
	served := 0
	for range 5000 { // 10 µs apart: 100,000 requests a second
		d, err := ls[0].Allow(ctx, rule, subject)
		if err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v %v", served, d, err)
		}
		served++
		if d.Remaining != rule.Limit-served {
			t.Fatalf("request %d: remaining %d, want %d (one replica knows its own count)", served, d.Remaining, rule.Limit-served)
		}
		clk.Advance(10 * time.Microsecond)
	}
	key := fmt.Sprintf("%srl:lease.back:app:2:%d", prefix, t0Reset15m-900)
	held, err := ls[0].client.Get(ctx, key).Int()
	if err != nil || held <= served {
		t.Fatalf("counter %d (%v): want more than the %d served (a lease held)", held, err, served)
	}
	ls[0].giveBack(ctx, clk.Now().Add(-leaseIdle)) // not idle yet: nothing given back
	if n, _ := ls[0].client.Get(ctx, key).Int(); n != held {
		t.Fatalf("counter %d after a give-back of a busy lease, want %d", n, held)
	}
	clk.Advance(leaseIdle)
	ls[0].giveBack(ctx, clk.Now().Add(-leaseIdle))
	if n, _ := ls[0].client.Get(ctx, key).Int(); n != served {
		t.Fatalf("counter %d after giving back, want %d", n, served)
	}
	d, err := ls[1].Allow(ctx, rule, subject)
	if err != nil || !d.Allowed || d.Remaining != rule.Limit-served-1 {
		t.Fatalf("other replica: %+v %v, want remaining %d", d, err, rule.Limit-served-1)
	}
	// The first replica goes on from Redis again, counting the other's request.
	d, err = ls[0].Allow(ctx, rule, subject)
	if err != nil || !d.Allowed || d.Remaining != rule.Limit-served-2 {
		t.Fatalf("first replica again: %+v %v, want remaining %d", d, err, rule.Limit-served-2)
	}
}

// TestLeaseForgotten: a lease unused for leaseForget is dropped from
// memory (after giving back its requests), and the counter goes on.
func TestLeaseForgotten(t *testing.T) {
	t.Parallel()
	clk := &clock{now: t0}
	ls, _, _ := replicas(t, 1, clk.Now)
	rule := Rule{Name: "lease.forget", Limit: 1000, Window: time.Hour, Scope: PerApp}
	ctx := context.Background()
	for i := range 3 {
		if _, err := ls[0].Allow(ctx, rule, Subject{Kind: "app", ID: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(leaseForget + time.Second)
	ls[0].giveBack(ctx, clk.Now().Add(-leaseIdle))
	n := 0
	ls[0].leases.each(func(leaseKey, *lease) { n++ })
	if n != 0 {
		t.Fatalf("%d leases kept after %v unused", n, leaseForget)
	}
	d, err := ls[0].Allow(ctx, rule, Subject{Kind: "app", ID: 0})
	if err != nil || d.Remaining != rule.Limit-2 {
		t.Fatalf("after forgetting: %+v %v, want remaining %d", d, err, rule.Limit-2)
	}
}

// TestLeaseNewWindow: requests left in a lease at the end of a window are
// not used in the next one, which starts from its own counter.
func TestLeaseNewWindow(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_700_000_100-1, 0)} // the last second of a 15-minute window
	ls, _, _ := replicas(t, 1, clk.Now)
	rule := Rule{Name: "lease.window", Limit: 100_000, Window: 15 * time.Minute, Scope: PerApp}
	ctx := context.Background()
	for range 2000 {
		if _, err := ls[0].Allow(ctx, rule, Subject{Kind: "app", ID: 3}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Microsecond)
	}
	clk.Advance(time.Second)
	d, err := ls[0].Allow(ctx, rule, Subject{Kind: "app", ID: 3})
	if err != nil || !d.Allowed || d.Remaining != rule.Limit-1 || d.Reset.Unix() != 1_700_000_100+900 {
		t.Fatalf("first request of the next window: %+v %v", d, err)
	}
}

// TestLeaseWaitersFailOpen: while Redis does not answer, the requests
// waiting on one take all get its error (the middleware serves them
// unlimited).
func TestLeaseWaitersFailOpen(t *testing.T) {
	t.Parallel()
	l := NewLimiter(deadRedis(t), "x:", time.Now, quietWriter)
	rule := Rule{Name: "lease.dead", Limit: 100, Window: time.Minute, Scope: PerApp}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := l.Allow(context.Background(), rule, Subject{Kind: "app", ID: 4}); err == nil {
				t.Error("Allow without Redis: no error")
			}
		})
	}
	wg.Wait()
}
