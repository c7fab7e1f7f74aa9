// Package opsredis keeps what the console's operations pages show
// (docs/console.md): the recent error answers of each app, the requests
// answered per minute by status class and the tasks run per minute by
// queue, in Redis, so every API replica and worker writes to and the
// console reads from one place. Writes are batched by a Recorder off the
// request path. Under the deployment's prefix:
//
//	err:{app}                 list of storage.APIError JSON, newest first, at most MaxErrors, kept ErrorTTL after the last
//	req:{app}:{unix-minute}   hash status class -> requests (req:all:{minute}: every app and none)
//	jobs:{unix-minute}        hash {queue}|processed, {queue}|failed -> tasks
//
// The minute buckets expire after MinuteTTL.
package opsredis

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
)

// DefaultPrefix is the key prefix of a deployment's operations records.
const DefaultPrefix = "aviary:ops:"

// Retention.
const (
	// MaxErrors is how many error answers are kept per app.
	MaxErrors = 200
	// ErrorTTL is how long an app's errors are kept after its last one.
	ErrorTTL = 7 * 24 * time.Hour
	// MinuteTTL is how long a minute's counters are kept.
	MinuteTTL = 2 * time.Hour
)

// Store reads and writes the records.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
}

// New keeps the records under prefix (DefaultPrefix when empty).
func New(rdb redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{rdb: rdb, prefix: prefix}
}

func (s *Store) errKey(app int64) string { return s.prefix + "err:" + strconv.FormatInt(app, 10) }

func (s *Store) reqKey(app string, minute int64) string {
	return s.prefix + "req:" + app + ":" + strconv.FormatInt(minute, 10)
}

func (s *Store) jobsKey(minute int64) string {
	return s.prefix + "jobs:" + strconv.FormatInt(minute, 10)
}

// batch is what a Recorder writes at once.
type batch struct {
	reqs map[reqKey]int64
	errs []storage.APIError
	jobs map[jobKey]int64
}

type reqKey struct {
	app    int64
	minute int64
	class  int
}

type jobKey struct {
	queue  string
	minute int64
	failed bool
}

// write stores b in one pipeline.
func (s *Store) write(ctx context.Context, b batch) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		minutes := map[string]bool{}
		for k, n := range b.reqs {
			class := storage.StatusClasses[k.class]
			for _, app := range []string{strconv.FormatInt(k.app, 10), "all"} {
				key := s.reqKey(app, k.minute)
				p.HIncrBy(ctx, key, class, n)
				minutes[key] = true
			}
		}
		for k, n := range b.jobs {
			key := s.jobsKey(k.minute)
			field := k.queue + "|processed"
			p.HIncrBy(ctx, key, field, n)
			if k.failed {
				p.HIncrBy(ctx, key, k.queue+"|failed", n)
			}
			minutes[key] = true
		}
		for key := range minutes {
			p.Expire(ctx, key, MinuteTTL)
		}
		apps := map[int64]bool{}
		for _, e := range b.errs {
			body, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("ops: encode error record: %w", err)
			}
			p.LPush(ctx, s.errKey(e.AppID), body)
			apps[e.AppID] = true
		}
		for app := range apps {
			p.LTrim(ctx, s.errKey(app), 0, MaxErrors-1)
			p.Expire(ctx, s.errKey(app), ErrorTTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ops: write: %w", err)
	}
	return nil
}

// Errors are the newest limit error answers of apps, newest first.
func (s *Store) Errors(ctx context.Context, apps []int64, limit int) ([]storage.APIError, error) {
	if len(apps) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StringSliceCmd, len(apps))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range apps {
			cmds[i] = p.LRange(ctx, s.errKey(a), 0, int64(limit-1))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ops: read errors: %w", err)
	}
	var out []storage.APIError
	for _, c := range cmds {
		for _, raw := range c.Val() {
			var e storage.APIError
			if json.Unmarshal([]byte(raw), &e) == nil {
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b storage.APIError) int { return b.At.Compare(a.At) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Requests are the answers of apps (nil: every app, and requests of none)
// per minute by status class, for the minutes minutes from from (a minute
// without requests is zero).
func (s *Store) Requests(ctx context.Context, apps []int64, from time.Time, minutes int) ([]storage.RequestMinute, error) {
	names := []string{"all"}
	if apps != nil {
		names = names[:0]
		for _, a := range apps {
			names = append(names, strconv.FormatInt(a, 10))
		}
	}
	first := from.Unix() / 60
	out := make([]storage.RequestMinute, minutes)
	cmds := make([][]*redis.MapStringStringCmd, minutes)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range out {
			out[i].Minute = time.Unix((first+int64(i))*60, 0).UTC()
			for _, n := range names {
				cmds[i] = append(cmds[i], p.HGetAll(ctx, s.reqKey(n, first+int64(i))))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ops: read requests: %w", err)
	}
	for i, cs := range cmds {
		for _, c := range cs {
			for class, v := range c.Val() {
				if j := slices.Index(storage.StatusClasses, class); j >= 0 {
					n, _ := strconv.ParseInt(v, 10, 64)
					out[i].ByClass[j] += n
				}
			}
		}
	}
	return out, nil
}

// Jobs are the tasks run per queue and minute for the minutes minutes from
// from, only the minutes and queues that ran some, by minute then queue.
func (s *Store) Jobs(ctx context.Context, from time.Time, minutes int) ([]storage.JobMinute, error) {
	first := from.Unix() / 60
	cmds := make([]*redis.MapStringStringCmd, minutes)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = p.HGetAll(ctx, s.jobsKey(first+int64(i)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ops: read jobs: %w", err)
	}
	var out []storage.JobMinute
	for i, c := range cmds {
		byQueue := map[string]*storage.JobMinute{}
		for field, v := range c.Val() {
			queue, what, ok := strings.Cut(field, "|")
			if !ok {
				continue
			}
			m := byQueue[queue]
			if m == nil {
				m = &storage.JobMinute{Minute: time.Unix((first+int64(i))*60, 0).UTC(), Queue: queue}
				byQueue[queue] = m
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			if what == "failed" {
				m.Failed += n
			} else {
				m.Processed += n
			}
		}
		for _, q := range slices.Sorted(mapsKeys(byQueue)) {
			out = append(out, *byQueue[q])
		}
	}
	return out, nil
}

// Clear removes every record (a state reset).
func (s *Store) Clear(ctx context.Context) error {
	iter := s.rdb.Scan(ctx, 0, s.prefix+"*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("ops: clear: %w", err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := s.rdb.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("ops: clear: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}
