package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
)

// DefaultCacheTTL is how long a Cache keeps a looked-up credential unless
// told otherwise. It bounds how stale an entry can be when an invalidation
// is lost (pub/sub down or partitioned): keep it short.
const DefaultCacheTTL = 2 * time.Second

// InvalidationChannel is the Redis pub/sub channel on which credential
// changes are announced to every API replica (see Publisher, Cache.Listen).
const InvalidationChannel = "aviary:auth:invalidate"

// maxCacheEntries bounds the memory a Cache uses: past it, expired entries
// are swept and, if it is still full, new ones are not kept.
const maxCacheEntries = 100_000

// Invalidation messages: kind ":" value.
const (
	kindBearer = "bearer" // a bearer token (the token)
	kindToken  = "token"  // an OAuth 1.0a access token (the token)
	kindUser   = "user"   // a user's state (the decimal user id)
	kindApp    = "app"    // an app's consumer credentials (the consumer key)
	kindAppID  = "app-id" // an app by id (dropped with every app change)
	kindOAuth2 = "oauth2" // OAuth 2.0 user tokens (all of them: they are stored hashed, families revoke many)
	kindAll    = "all"    // everything
)

// Cache keeps the credential records authentication looks up (bearer token
// -> app, consumer key -> app, access token, user) in process memory for a
// short TTL, so a busy client costs PostgreSQL one lookup per TTL instead of
// one per request. Misses and errors are never kept (a new token works at
// once; an outage is retried on the next request). OAuth 1.0a nonces are not
// cached: they are checked in Redis on every request.
//
// Entries are dropped early when a change is announced on Redis pub/sub
// (Listen; Publisher announces), so a revoked token or a suspended user is
// refused on every replica within the pub/sub delivery time. While Listen is
// not subscribed (Redis down, reconnecting) the cache is emptied and
// bypassed: every lookup goes to the store, as without a cache. If a
// message is lost while the subscription looks alive, the TTL still bounds
// the staleness.
type Cache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.RWMutex
	entries map[entryKey]cacheEntry
	// gen is bumped by every invalidation; a lookup that started before one
	// does not store its (possibly stale) result.
	gen atomic.Uint64
	// bypass is set while a Listen loop is not subscribed.
	bypass atomic.Bool
}

type cacheEntry struct {
	value   any
	expires time.Time
}

// NewCache returns a Cache whose entries live for ttl (<= 0: DefaultCacheTTL).
// now is the clock (nil means time.Now). Until Listen runs, entries are
// dropped only by their TTL.
func NewCache(ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{ttl: ttl, now: now, entries: make(map[entryKey]cacheEntry)}
}

// Live reports whether the cache serves entries: always without Listen,
// and only while subscribed with it.
func (c *Cache) Live() bool { return !c.bypass.Load() }

// TTL returns how long entries live.
func (c *Cache) TTL() time.Duration { return c.ttl }

func (c *Cache) get(key entryKey) (any, bool) {
	if c.bypass.Load() {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.expires) {
		return nil, false
	}
	return e.value, true
}

// put stores value under key unless an invalidation happened since gen was
// read (the value may predate it).
func (c *Cache) put(key entryKey, value any, gen uint64) {
	if c.bypass.Load() {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen.Load() != gen {
		return
	}
	if len(c.entries) >= maxCacheEntries {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCacheEntries {
			return
		}
	}
	c.entries[key] = cacheEntry{value: value, expires: now.Add(c.ttl)}
}

// Invalidate applies one invalidation message ("bearer:<token>",
// "token:<token>", "user:<id>", "app:<consumer key>" or "all"). A message it
// does not understand empties the cache (safe side).
func (c *Cache) Invalidate(msg string) {
	kind, value, _ := strings.Cut(msg, ":")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.Add(1)
	switch kind {
	case kindBearer:
		delete(c.entries, cacheKey(kindBearer, value))
	case kindToken:
		delete(c.entries, cacheKey(kindToken, value))
	case kindUser:
		delete(c.entries, cacheKey(kindUser, value))
	case kindOAuth2:
		for k := range c.entries {
			if k.kind == kindOAuth2 {
				delete(c.entries, k)
			}
		}
	case kindApp:
		// Bearer entries hold the app too: drop them all, it is rare.
		clear(c.entries)
	default:
		clear(c.entries)
	}
}

// flush empties the cache.
func (c *Cache) flush() { c.Invalidate(kindAll) }

// entryKey names a cache entry: a kind and its value. (A struct, not the
// joined string: a lookup on every request then allocates nothing.)
type entryKey struct{ kind, value string }

func cacheKey(kind, value string) entryKey { return entryKey{kind: kind, value: value} }

// message is the invalidation message that drops k ("kind:value").
func (k entryKey) message() string { return k.kind + ":" + k.value }

// listenBackoff is how long Listen waits before resubscribing after a
// failure.
const listenBackoff = time.Second

// listenIdle is how long Listen waits for a message before it pings the
// subscription to check it is alive.
const listenIdle = 5 * time.Second

// Listen subscribes to channel on client and applies every invalidation
// published there until ctx is done. While it is not subscribed the cache
// is empty and bypassed, and each (re)subscription empties it again
// (messages may have been missed meanwhile). ready, if not nil, is called
// once the first subscription is confirmed. The client needs no special
// options: the subscription's reads wait without a deadline and Listen pings
// an idle subscription every few seconds.
func (c *Cache) Listen(ctx context.Context, client redis.UniversalClient, channel string, ready func()) {
	c.bypass.Store(true)
	c.flush()
	defer c.bypass.Store(true)
	for ctx.Err() == nil {
		c.listenOnce(ctx, client, channel, &ready)
		c.bypass.Store(true)
		c.flush()
		select {
		case <-ctx.Done():
		case <-time.After(listenBackoff):
		}
	}
}

// Start runs Listen in a goroutine, the cache being bypassed from the moment
// Start returns until the subscription is confirmed. done is closed when
// Listen returns (after ctx is done).
func (c *Cache) Start(ctx context.Context, client redis.UniversalClient, channel string) (done <-chan struct{}) {
	c.bypass.Store(true)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		c.Listen(ctx, client, channel, nil)
	}()
	return ch
}

// listenOnce runs one subscription until it fails.
func (c *Cache) listenOnce(ctx context.Context, client redis.UniversalClient, channel string, ready *func()) {
	ps := client.Subscribe(ctx, channel)
	defer ps.Close()
	// A blocked read does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	for {
		msg, err := ps.ReceiveTimeout(ctx, listenIdle)
		var nerr net.Error
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.As(err, &nerr) && nerr.Timeout():
			if err := ps.Ping(ctx); err != nil {
				return
			}
			continue
		default:
			return
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				c.flush()
				c.bypass.Store(false)
				if *ready != nil {
					(*ready)()
					*ready = nil
				}
			}
		case *redis.Message:
			c.Invalidate(m.Payload)
		}
	}
}

// CachedStore returns a Store that answers from cache when it can and asks
// store otherwise, keeping what store found.
func CachedStore(store Store, cache *Cache) Store {
	return &cachedStore{store: store, cache: cache}
}

type cachedStore struct {
	store Store
	cache *Cache
}

func (s *cachedStore) AppByBearerToken(ctx context.Context, token string) (storage.App, error) {
	return cached(s.cache, cacheKey(kindBearer, token), func() (storage.App, error) { return s.store.AppByBearerToken(ctx, token) })
}

func (s *cachedStore) AppByConsumerKey(ctx context.Context, key string) (storage.App, error) {
	return cached(s.cache, cacheKey(kindApp, key), func() (storage.App, error) { return s.store.AppByConsumerKey(ctx, key) })
}

func (s *cachedStore) AppByID(ctx context.Context, id int64) (storage.App, error) {
	return cached(s.cache, cacheKey(kindAppID, strconv.FormatInt(id, 10)), func() (storage.App, error) { return s.store.AppByID(ctx, id) })
}

func (s *cachedStore) AccessToken(ctx context.Context, token string) (storage.AccessToken, error) {
	return cached(s.cache, cacheKey(kindToken, token), func() (storage.AccessToken, error) { return s.store.AccessToken(ctx, token) })
}

func (s *cachedStore) OAuth2Token(ctx context.Context, token string) (storage.OAuth2Token, error) {
	return cached(s.cache, cacheKey(kindOAuth2, token), func() (storage.OAuth2Token, error) { return s.store.OAuth2Token(ctx, token) })
}

func (s *cachedStore) UserByID(ctx context.Context, id int64) (storage.User, error) {
	return cached(s.cache, cacheKey(kindUser, strconv.FormatInt(id, 10)), func() (storage.User, error) { return s.store.UserByID(ctx, id) })
}

func cached[T any](c *Cache, key entryKey, load func() (T, error)) (T, error) {
	if v, ok := c.get(key); ok {
		return v.(T), nil
	}
	gen := c.gen.Load()
	v, err := load()
	if err == nil {
		c.put(key, v, gen)
	}
	return v, err
}

// Publisher announces credential changes to every API replica's Cache.
// Call it after the change is committed.
type Publisher struct {
	client  redis.UniversalClient
	channel string
}

// NewPublisher returns a Publisher on channel (empty: InvalidationChannel).
func NewPublisher(client redis.UniversalClient, channel string) *Publisher {
	if channel == "" {
		channel = InvalidationChannel
	}
	return &Publisher{client: client, channel: channel}
}

// BearerRevoked announces that a bearer token was revoked.
func (p *Publisher) BearerRevoked(ctx context.Context, token string) error {
	return p.publish(ctx, cacheKey(kindBearer, token).message())
}

// AccessTokenRevoked announces that an OAuth 1.0a access token was revoked.
func (p *Publisher) AccessTokenRevoked(ctx context.Context, token string) error {
	return p.publish(ctx, cacheKey(kindToken, token).message())
}

// OAuth2Revoked announces that OAuth 2.0 user tokens were revoked (a
// token, or a whole grant family): every replica drops its cached OAuth 2.0
// tokens.
func (p *Publisher) OAuth2Revoked(ctx context.Context) error {
	return p.publish(ctx, cacheKey(kindOAuth2, "").message())
}

// UserChanged announces that a user's state (suspended, deactivated,
// deleted, ...) changed.
func (p *Publisher) UserChanged(ctx context.Context, id int64) error {
	return p.publish(ctx, cacheKey(kindUser, strconv.FormatInt(id, 10)).message())
}

// AppChanged announces that an app's consumer credentials changed.
func (p *Publisher) AppChanged(ctx context.Context, consumerKey string) error {
	return p.publish(ctx, cacheKey(kindApp, consumerKey).message())
}

func (p *Publisher) publish(ctx context.Context, msg string) error {
	if err := p.client.Publish(ctx, p.channel, msg).Err(); err != nil {
		// The message names a secret: only its kind goes into the error.
		kind, _, _ := strings.Cut(msg, ":")
		return fmt.Errorf("auth: announce %s change on %s: %w", kind, p.channel, err)
	}
	return nil
}
