package auth

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// testClock is an adjustable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// lookup is one kind of cached lookup, by credential.
type lookup struct {
	name string
	// do looks the credential up through s.
	do func(s Store) error
	// msg is the invalidation message that drops it.
	msg string
	// announce publishes that message.
	announce func(ctx context.Context, p *Publisher) error
}

var lookups = []lookup{
	{name: "bearer token", do: func(s Store) error { _, err := s.AppByBearerToken(context.Background(), bt1); return err },
		msg: "bearer:" + bt1, announce: func(ctx context.Context, p *Publisher) error { return p.BearerRevoked(ctx, bt1) }},
	{name: "consumer key", do: func(s Store) error { _, err := s.AppByConsumerKey(context.Background(), ck1); return err },
		msg: "app:" + ck1, announce: func(ctx context.Context, p *Publisher) error { return p.AppChanged(ctx, ck1) }},
	{name: "access token", do: func(s Store) error { _, err := s.AccessToken(context.Background(), at1); return err },
		msg: "token:" + at1, announce: func(ctx context.Context, p *Publisher) error { return p.AccessTokenRevoked(ctx, at1) }},
	{name: "user", do: func(s Store) error { _, err := s.UserByID(context.Background(), 10); return err },
		msg: "user:10", announce: func(ctx context.Context, p *Publisher) error { return p.UserChanged(ctx, 10) }},
}

func TestCacheHitExpiryAndInvalidate(t *testing.T) {
	t.Parallel()
	for _, l := range lookups {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			clock := &testClock{now: time.Unix(1_700_000_000, 0)}
			backing := &countingStore{fakeStore: newFakeStore()}
			cache := NewCache(2*time.Second, clock.Now)
			s := CachedStore(backing, cache)
			steps := []struct {
				name      string
				before    func()
				wantCalls int64
			}{
				{"first lookup goes to the store", nil, 1},
				{"second is a hit", nil, 1},
				{"still a hit just before the TTL", func() { clock.Advance(1999 * time.Millisecond) }, 1},
				{"expired at the TTL", func() { clock.Advance(time.Millisecond) }, 2},
				{"hit again", nil, 2},
				{"other entries' messages keep it", func() { cache.Invalidate("user:424242"); cache.Invalidate("bearer:other") }, 2},
				{"its message drops it", func() { cache.Invalidate(l.msg) }, 3},
				{"unknown message empties the cache", func() { cache.Invalidate("what:ever") }, 4},
			}
			for _, st := range steps {
				if st.before != nil {
					st.before()
				}
				if err := l.do(s); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				if got := backing.calls.Load(); got != st.wantCalls {
					t.Fatalf("%s: store calls = %d, want %d", st.name, got, st.wantCalls)
				}
			}
		})
	}
}

func TestCacheKeepsNoMissesOrErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		do   func(s Store) error
	}{
		{"unknown bearer token", func(s Store) error { _, err := s.AppByBearerToken(context.Background(), "nope"); return err }},
		{"store down", func(s Store) error { _, err := s.AppByBearerToken(context.Background(), "boom"); return err }},
		{"unknown user", func(s Store) error { _, err := s.UserByID(context.Background(), 12345); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			backing := &countingStore{fakeStore: newFakeStore()}
			s := CachedStore(backing, NewCache(time.Minute, nil))
			for range 3 {
				if err := tc.do(s); err == nil {
					t.Fatal("lookup succeeded, want an error")
				}
			}
			if got := backing.calls.Load(); got != 3 {
				t.Fatalf("store calls = %d, want 3 (nothing kept)", got)
			}
		})
	}
}

// A lookup that started before an invalidation must not store its result:
// it may be the state the invalidation announced the end of.
func TestCacheDropsLoadsRacingAnInvalidation(t *testing.T) {
	t.Parallel()
	cache := NewCache(time.Minute, nil)
	gen := cache.gen.Load()
	cache.Invalidate("bearer:" + bt1)
	cache.put(cacheKey(kindBearer, bt1), storage.App{ID: 1}, gen)
	if _, ok := cache.get(cacheKey(kindBearer, bt1)); ok {
		t.Fatal("a load that raced an invalidation was kept")
	}
}

// listening starts cache.Listen on channel and waits until it is subscribed.
func listening(t *testing.T, cache *Cache, client redis.UniversalClient, channel string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		cache.Listen(ctx, client, channel, func() { close(ready) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("cache did not subscribe within 5s")
	}
}

// eventually polls cond every 10ms for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCacheInvalidationByPubSub(t *testing.T) {
	t.Parallel()
	client, prefix := testRedis(t)
	channel := prefix + "invalidate"
	pub := NewPublisher(client, channel)
	for _, l := range lookups {
		t.Run(l.name, func(t *testing.T) {
			backing := &countingStore{fakeStore: newFakeStore()}
			// A TTL far beyond the test: only the message can drop the entry.
			cache := NewCache(time.Hour, nil)
			listening(t, cache, client, channel)
			s := CachedStore(backing, cache)
			for range 2 {
				if err := l.do(s); err != nil {
					t.Fatal(err)
				}
			}
			if got := backing.calls.Load(); got != 1 {
				t.Fatalf("store calls = %d before the announcement, want 1", got)
			}
			if err := l.announce(context.Background(), pub); err != nil {
				t.Fatalf("announce: %v", err)
			}
			// A correctness bound (the one second), not a speed assertion.
			dropped := eventually(time.Second, func() bool {
				_, ok := cache.get(keyOf(l.msg))
				return !ok
			})
			if !dropped {
				t.Fatalf("entry %s still cached 1s after the announcement", l.name)
			}
			if err := l.do(s); err != nil {
				t.Fatal(err)
			}
			if got := backing.calls.Load(); got != 2 {
				t.Fatalf("store calls = %d after the announcement, want 2", got)
			}
		})
	}
}

func TestCachePubSubDown(t *testing.T) {
	t.Parallel()
	t.Run("lost message: the TTL still expires the entry", func(t *testing.T) {
		t.Parallel()
		clock := &testClock{now: time.Unix(1_700_000_000, 0)}
		backing := &countingStore{fakeStore: newFakeStore()}
		s := CachedStore(backing, NewCache(2*time.Second, clock.Now))
		bearer := lookups[0]
		_ = bearer.do(s)
		// The revocation is never announced (the publisher's Redis is away).
		if err := bearer.announce(context.Background(), NewPublisher(deadRedis(t), "")); err == nil {
			t.Fatal("publishing to a dead Redis succeeded")
		}
		_ = bearer.do(s)
		clock.Advance(2 * time.Second)
		_ = bearer.do(s)
		if got := backing.calls.Load(); got != 2 {
			t.Fatalf("store calls = %d, want 2 (hit, then expired by TTL)", got)
		}
	})
	t.Run("subscription lost: the cache is emptied and bypassed until it is back", func(t *testing.T) {
		t.Parallel()
		rp := storagetest.PrivateRedis(t)
		client := redis.NewClient(&redis.Options{Addr: rp.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		t.Cleanup(func() { _ = client.Close() })
		backing := &countingStore{fakeStore: newFakeStore()}
		cache := NewCache(time.Hour, nil)
		listening(t, cache, client, "inv")
		s := CachedStore(backing, cache)
		bearer := lookups[0]
		_ = bearer.do(s)
		_ = bearer.do(s)
		if got := backing.calls.Load(); got != 1 {
			t.Fatalf("store calls = %d while subscribed, want 1", got)
		}
		rp.Stop()
		if !eventually(time.Second, func() bool { return cache.bypass.Load() }) {
			t.Fatal("cache still served 1s after its subscription was lost")
		}
		for i := range 3 {
			_ = bearer.do(s)
			if got, want := backing.calls.Load(), int64(2+i); got != want {
				t.Fatalf("store calls = %d with pub/sub down, want %d (bypassed)", got, want)
			}
		}
	})
	t.Run("never subscribed: Redis unreachable from the start", func(t *testing.T) {
		t.Parallel()
		backing := &countingStore{fakeStore: newFakeStore()}
		cache := NewCache(time.Hour, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := cache.Start(ctx, deadRedis(t), "inv")
		t.Cleanup(func() { cancel(); <-done })
		s := CachedStore(backing, cache)
		for range 3 {
			_ = lookups[0].do(s)
		}
		if got := backing.calls.Load(); got != 3 {
			t.Fatalf("store calls = %d, want 3 (bypassed while not subscribed)", got)
		}
	})
}

func TestPublisherMessages(t *testing.T) {
	t.Parallel()
	client, prefix := testRedis(t)
	channel := prefix + "messages"
	ps := client.Subscribe(context.Background(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	pub := NewPublisher(client, channel)
	for _, l := range lookups {
		if err := l.announce(context.Background(), pub); err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		msg, err := ps.ReceiveMessage(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: receive: %v", l.name, err)
		}
		if msg.Payload != l.msg {
			t.Errorf("%s: message %q, want %q", l.name, msg.Payload, l.msg)
		}
	}
	// A failed announcement names the kind of change, never the credential.
	err := NewPublisher(deadRedis(t), "").BearerRevoked(context.Background(), bt1)
	if err == nil || strings.Contains(err.Error(), bt1) {
		t.Errorf("error of a failed announcement = %v", err)
	}
}

// keyOf is the entry an invalidation message ("kind:value") names.
func keyOf(msg string) entryKey {
	kind, value, _ := strings.Cut(msg, ":")
	return cacheKey(kind, value)
}
