package ratelimit

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestCounters: the console's reader lists the current windows' app and
// user counters of the registered rules, for some apps or all, with limit,
// remaining and reset; per-resource counters, unknown rules and old windows
// are left out.
func TestCounters(t *testing.T) {
	client, prefix := testRedis(t)
	ctx := context.Background()
	now := time.Unix(1_700_000_100, 0)
	l := NewLimiter(client, prefix, func() time.Time { return now }, quietWriter)
	lookup := Rule{Name: "lookup", Limit: 5, Window: 15 * time.Minute, Scope: PerApp}
	tweet := Rule{Name: "tweet", Limit: 3, Window: time.Hour, Scope: PerUser}
	blob := Rule{Name: "blob", Limit: 9, Window: time.Minute, Scope: PerResource, Resource: "job"}
	unknown := Rule{Name: "unknown", Limit: 2, Window: time.Minute, Scope: PerApp}
	charge := func(rule Rule, s Subject, n int) {
		for range n {
			if _, err := l.Allow(ctx, rule, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	charge(lookup, Subject{Kind: "app", ID: 7}, 2)
	charge(lookup, Subject{Kind: "app", ID: 8}, 1)
	charge(tweet, Subject{Kind: "user", ID: 42, AppID: 7}, 1)
	charge(blob, Subject{Kind: "job", ID: 7}, 1)
	charge(unknown, Subject{Kind: "app", ID: 7}, 1)
	l.giveBack(ctx, time.Time{}) // no lease left: the counters are exact
	// an old window of app 7
	client.Set(ctx, l.key("lookup", Subject{Kind: "app", ID: 7}, now.Add(-time.Hour).Truncate(15*time.Minute)), 4, time.Minute)

	rules := []Rule{lookup, tweet, blob}
	lookupReset := windowStart(now, lookup.Window).Add(lookup.Window)
	tests := []struct {
		name string
		apps []int64
		want []Counter
	}{
		{"app 7", []int64{7}, []Counter{
			{Rule: "lookup", Scope: "app", AppID: 7, Limit: 5, Used: 2, Remaining: 3, Reset: lookupReset},
			{Rule: "tweet", Scope: "user", AppID: 7, UserID: 42, Limit: 3, Used: 1, Remaining: 2, Reset: windowStart(now, time.Hour).Add(time.Hour)},
		}},
		{"every app", nil, []Counter{
			{Rule: "lookup", Scope: "app", AppID: 7, Limit: 5, Used: 2, Remaining: 3, Reset: lookupReset},
			{Rule: "tweet", Scope: "user", AppID: 7, UserID: 42, Limit: 3, Used: 1, Remaining: 2, Reset: windowStart(now, time.Hour).Add(time.Hour)},
			{Rule: "lookup", Scope: "app", AppID: 8, Limit: 5, Used: 1, Remaining: 4, Reset: lookupReset},
		}},
		{"no counter", []int64{9}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Counters(ctx, rules, tt.apps)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("[%d] %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestPeekAndHeaders: Peek reads a counter without charging it; Headers
// sets the rule's headers from it.
func TestPeekAndHeaders(t *testing.T) {
	client, prefix := testRedis(t)
	ctx := context.Background()
	now := time.Unix(1_700_000_100, 0)
	l := NewLimiter(client, prefix, func() time.Time { return now }, quietWriter)
	rule := Rule{Name: "lookup", Limit: 5, Window: 15 * time.Minute, Scope: PerApp}
	s := Subject{Kind: "app", ID: 7}
	for _, tt := range []struct {
		charged, remaining int
	}{{0, 5}, {1, 4}, {2, 2}} { // charged: more requests, cumulative
		for range tt.charged {
			if _, err := l.Allow(ctx, rule, s); err != nil {
				t.Fatal(err)
			}
		}
		l.giveBack(ctx, time.Time{})
		for range 2 { // peeking twice charges nothing
			d, err := l.Peek(ctx, rule, s)
			if err != nil {
				t.Fatal(err)
			}
			if d.Remaining != tt.remaining || d.Limit != 5 || !d.Reset.Equal(windowStart(now, rule.Window).Add(rule.Window)) {
				t.Errorf("after %d: %+v, want %d remaining", tt.charged, d, tt.remaining)
			}
		}
	}
	h := http.Header{}
	if l.Headers(&http.Request{}, rule, h) {
		t.Errorf("a request without a caller got headers %v", h)
	}
	dead := NewLimiter(deadRedis(t), prefix, nil, quietWriter)
	if _, err := dead.Peek(ctx, rule, s); err == nil {
		t.Error("Peek on a dead Redis: no error")
	}
}
