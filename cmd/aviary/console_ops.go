package main

import (
	"context"
	"log/slog"

	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage/opsredis"
	"github.com/aviary-dev/aviary/web/console"
)

// startOpsRecorder returns the operations records' store on the backends'
// Redis and a Recorder writing to it every second while the process runs
// (and once more when it stops): the API's answers and recent errors, the
// workers' task runs (docs/console.md).
func startOpsRecorder(b *backends, log *slog.Logger) (*opsredis.Store, *opsredis.Recorder) {
	store := opsredis.New(b.redis, opsredis.DefaultPrefix)
	rec := opsredis.NewRecorder(store, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.Run(ctx)
	}()
	b.closers = append(b.closers, func() { cancel(); <-done })
	return store, rec
}

// consoleRateLimits adapts the API limiter's reader to the console's (web
// does not import api): the counters of apps under the rules rules lists
// (the API's registered ones, known once its routes are built).
func consoleRateLimits(l *ratelimit.Limiter, rules func() []ratelimit.Rule) console.RateLimits {
	return func(ctx context.Context, apps []int64) ([]console.RateLimit, error) {
		cs, err := l.Counters(ctx, rules(), apps)
		if err != nil {
			return nil, err
		}
		out := make([]console.RateLimit, len(cs))
		for i, c := range cs {
			out[i] = console.RateLimit{Rule: c.Rule, Scope: c.Scope, AppID: c.AppID, UserID: c.UserID,
				Limit: c.Limit, Used: c.Used, Remaining: c.Remaining, Reset: c.Reset}
		}
		return out, nil
	}
}
