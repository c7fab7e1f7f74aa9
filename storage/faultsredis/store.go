// Package faultsredis keeps Aviary's faults on demand (domain/faults,
// docs/faults.md) in Redis, so every API replica and worker sees the same
// faults and counts their hits in one place. Under the deployment's
// prefix: a hash of the faults' definitions (id -> JSON), a hash of the
// hits (id -> n) and a hash of what is left of counted faults (id -> n),
// prefix{faults}:defs, :hits and :left. The hash tag {faults} puts the
// three in one Redis Cluster slot: the script and the transactions below
// use them together (docs/redis.md).
// Counting a hit and taking one of a counted fault's requests is one
// script, so "the next N requests" holds across replicas.
package faultsredis

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/domain/faults"
)

// DefaultPrefix is the key prefix of a deployment's faults.
const DefaultPrefix = "aviary:faults:"

// hashTag follows the prefix in every key of a Store, so Redis Cluster
// hashes them all to one slot.
const hashTag = "{faults}:"

// Store is the faults in Redis.
type Store struct {
	rdb    redis.UniversalClient
	defs   string
	hits   string
	left   string
	now    func() time.Time
	random func() float64
}

// New keeps faults under prefix (DefaultPrefix when empty).
func New(rdb redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	tagged := prefix + hashTag
	return &Store{rdb: rdb, defs: tagged + "defs", hits: tagged + "hits", left: tagged + "left", now: time.Now, random: mrand.Float64}
}

// Create stores f under a new id (f must be normalized).
func (s *Store) Create(ctx context.Context, f faults.Fault) (faults.Fault, error) {
	f.ID = newID()
	// microseconds: faults made one after another within a millisecond
	// (a test suite's set-up) must keep their order, the oldest applying
	f.CreatedAt = s.now().UTC().Truncate(time.Microsecond)
	f.Hits = 0
	body, err := json.Marshal(f)
	if err != nil {
		return faults.Fault{}, fmt.Errorf("faults: encode: %w", err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.defs, f.ID, body)
		if f.Count > 0 {
			p.HSet(ctx, s.left, f.ID, f.Count)
		}
		return nil
	})
	if err != nil {
		return faults.Fault{}, fmt.Errorf("faults: create: %w", err)
	}
	return f, nil
}

// List returns every fault with its hits and what is left, oldest first.
func (s *Store) List(ctx context.Context) ([]faults.Fault, error) {
	var defs, hits, left *redis.MapStringStringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		defs, hits, left = p.HGetAll(ctx, s.defs), p.HGetAll(ctx, s.hits), p.HGetAll(ctx, s.left)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("faults: list: %w", err)
	}
	out := make([]faults.Fault, 0, len(defs.Val()))
	for id, body := range defs.Val() {
		var f faults.Fault
		if err := json.Unmarshal([]byte(body), &f); err != nil {
			return nil, fmt.Errorf("faults: decode fault %s: %w", id, err)
		}
		f.Hits, _ = strconv.ParseInt(hits.Val()[id], 10, 64)
		f.Remaining, _ = strconv.ParseInt(left.Val()[id], 10, 64)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b faults.Fault) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Get returns one fault; false when there is none.
func (s *Store) Get(ctx context.Context, id string) (faults.Fault, bool, error) {
	all, err := s.List(ctx)
	if err != nil {
		return faults.Fault{}, false, err
	}
	for _, f := range all {
		if f.ID == id {
			return f, true, nil
		}
	}
	return faults.Fault{}, false, nil
}

// Delete removes one fault; false when there was none.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	var n *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.HDel(ctx, s.defs, id)
		p.HDel(ctx, s.hits, id)
		p.HDel(ctx, s.left, id)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("faults: delete %s: %w", id, err)
	}
	return n.Val() > 0, nil
}

// Clear removes every fault of appID, or every fault at all when appID is
// 0, and reports how many went. A state reset calls it with 0.
func (s *Store) Clear(ctx context.Context, appID int64) (int, error) {
	if appID == 0 {
		n, err := s.rdb.HLen(ctx, s.defs).Result()
		if err != nil {
			return 0, fmt.Errorf("faults: clear: %w", err)
		}
		if err := s.rdb.Del(ctx, s.defs, s.hits, s.left).Err(); err != nil {
			return 0, fmt.Errorf("faults: clear: %w", err)
		}
		return int(n), nil
	}
	all, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range all {
		if f.AppID != appID {
			continue
		}
		ok, err := s.Delete(ctx, f.ID)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// hitScript counts a hit of fault ARGV[1] if it still exists and, when it
// is counted (ARGV[2] = 1), has requests left, taking one; it returns the
// hits so far, or 0 when the fault did not apply.
var hitScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == '1' then
  local n = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
  if n <= 0 then return 0 end
  redis.call('HINCRBY', KEYS[3], ARGV[1], -1)
end
return redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
`)

// Hit records that f is applied once; false when it may no longer apply
// (deleted, or a counted fault used up by other requests).
func (s *Store) Hit(ctx context.Context, f faults.Fault) (bool, error) {
	counted := "0"
	if f.Count > 0 {
		counted = "1"
	}
	n, err := hitScript.Run(ctx, s.rdb, []string{s.defs, s.hits, s.left}, f.ID, counted).Int64()
	if err != nil {
		return false, fmt.Errorf("faults: count a hit of %s: %w", f.ID, err)
	}
	return n > 0, nil
}

// Take applies the first active fault of kind for work of appID (a CRC
// check, a media upload), counting its hit: false when none applies.
func (s *Store) Take(ctx context.Context, kind faults.Kind, appID int64) (faults.Fault, bool, error) {
	all, err := s.List(ctx)
	if err != nil {
		return faults.Fault{}, false, err
	}
	now := s.now()
	for _, f := range all {
		if !f.MatchesWork(kind, appID) || !f.Active(now) || s.random() >= f.Probability {
			continue
		}
		ok, err := s.Hit(ctx, f)
		if err != nil {
			return faults.Fault{}, false, err
		}
		if ok {
			return f, true, nil
		}
	}
	return faults.Fault{}, false, nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CRCFault takes the fault the next CRC check of appID's webhook suffers
// (domain/webhooks.Faults): faults.CRCFailure, faults.CRCTimeout or "".
func (s *Store) CRCFault(ctx context.Context, appID int64) (faults.Kind, error) {
	for _, kind := range []faults.Kind{faults.CRCFailure, faults.CRCTimeout} {
		_, ok, err := s.Take(ctx, kind, appID)
		if err != nil || ok {
			return kind, err
		}
	}
	return "", nil
}

// MediaFault takes a media failure for the upload of appID being processed
// (workers/media.Faults).
func (s *Store) MediaFault(ctx context.Context, appID int64) (bool, error) {
	_, ok, err := s.Take(ctx, faults.MediaFailure, appID)
	return ok, err
}
