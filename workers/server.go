// Package workers assembles Aviary's background work: NewMux registers every
// task type (one package per domain under workers/) in one list behind the
// shared middleware (logging, metrics, per-type final-failure handling), and
// NewServer builds the asynq server that runs it. Handlers honour ctx,
// return plain errors for transient failures (the task is retried with
// backoff) and wrap asynq.SkipRetry for permanent ones. The sweepers that
// keep records and queues in step live in workers/sweep.
package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
)

// ServerConfig configures the asynq server of a worker process.
type ServerConfig struct {
	Queues          map[string]int
	Concurrency     int
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
	// TaskCheckInterval is how long an idle worker waits between looks for
	// new tasks (asynq sleeps half to one and a half of it); zero means
	// DefaultTaskCheckInterval.
	TaskCheckInterval time.Duration
}

// DefaultTaskCheckInterval keeps the pickup delay of a task enqueued into
// an idle worker near 20 ms (asynq's own default, 1 s, makes it 0.5-1.5 s,
// which dominated short compliance jobs; at 100 ms it was still a fifth of
// a 1,000,000-line job), for about fifty dequeue script calls a second per
// idle worker process (two Redis commands per queue each, a fraction of a
// percent of a Redis core). AVIARY_TASK_CHECK_INTERVAL sets it.
const DefaultTaskCheckInterval = 20 * time.Millisecond

// DelayedTaskCheckInterval is how often a worker moves due retries and
// scheduled tasks back to their queue. A deferred run (a media image that
// found every image slot taken) is retried after 1-2 s and a task whose
// worker died after 1 s; asynq's default, 5 s, made those 5 s rounds (the
// load test's scaling phase saw a burst of images drain in steps of 5 s).
// The price is one forwarding script per queue a second per worker process.
const DelayedTaskCheckInterval = time.Second

// NewServer builds the asynq server. Retries back off exponentially from
// 2 s to 10 min with jitter; a task whose worker died (lease expired) is
// retried after 1 s.
func NewServer(redis asynq.RedisConnOpt, cfg ServerConfig) *asynq.Server {
	if cfg.TaskCheckInterval <= 0 {
		cfg.TaskCheckInterval = DefaultTaskCheckInterval
	}
	return asynq.NewServer(redis, asynq.Config{
		TaskCheckInterval:        cfg.TaskCheckInterval,
		DelayedTaskCheckInterval: DelayedTaskCheckInterval,
		Queues:                   cfg.Queues,
		Concurrency:              cfg.Concurrency,
		ShutdownTimeout:          cfg.ShutdownTimeout,
		RetryDelayFunc:           RetryDelay,
		IsFailure:                isFailure,
		Logger:                   slogAdapter{cfg.Logger},
		LogLevel:                 asynq.InfoLevel,
	})
}

// isFailure tells asynq which errors count as a failed attempt: a run
// deferred for want of room (tasks.ErrDeferred) does not.
func isFailure(err error) bool { return !errors.Is(err, tasks.ErrDeferred) }

// RetryDelay is the backoff between attempts of a failed task; a deferred
// run is tried again after 1-2 s.
func RetryDelay(n int, err error, _ *asynq.Task) time.Duration {
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return time.Second
	}
	if errors.Is(err, tasks.ErrDeferred) {
		return time.Second + rand.N(time.Second)
	}
	base := 2 * time.Second << min(n, 10)
	if base > 10*time.Minute {
		base = 10 * time.Minute
	}
	return base/2 + rand.N(base/2+1)
}

// slogAdapter lets asynq log through slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) log(level slog.Level, args ...any) {
	a.l.Log(context.Background(), level, fmt.Sprint(args...), "component", "asynq")
}

func (a slogAdapter) Debug(args ...any) { a.log(slog.LevelDebug, args...) }
func (a slogAdapter) Info(args ...any)  { a.log(slog.LevelInfo, args...) }
func (a slogAdapter) Warn(args ...any)  { a.log(slog.LevelWarn, args...) }
func (a slogAdapter) Error(args ...any) { a.log(slog.LevelError, args...) }
func (a slogAdapter) Fatal(args ...any) { a.log(slog.LevelError+4, args...) }
