// Package workers holds Aviary's background work: asynq task handlers (one
// type per file) and the maintenance loops that keep records and queues in
// step. Handlers honour ctx, return plain errors for transient failures (the
// task is retried with backoff) and wrap asynq.SkipRetry for permanent ones.
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

// Handlers are the task handlers a worker serves.
type Handlers struct {
	Compliance *Compliance
}

// NewMux registers every task type on one asynq.ServeMux.
func NewMux(h Handlers) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.Handle(tasks.TypeComplianceProcess, h.Compliance)
	return mux
}

// ServerConfig configures the asynq server of a worker process.
type ServerConfig struct {
	Queues          map[string]int
	Concurrency     int
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
	ErrorHandler    asynq.ErrorHandlerFunc
}

// NewServer builds the asynq server. Retries back off exponentially from
// 2 s to 10 min with jitter; a task whose worker died (lease expired) is
// retried after 1 s.
func NewServer(redis asynq.RedisConnOpt, cfg ServerConfig) *asynq.Server {
	return asynq.NewServer(redis, asynq.Config{
		Queues:          cfg.Queues,
		Concurrency:     cfg.Concurrency,
		ShutdownTimeout: cfg.ShutdownTimeout,
		RetryDelayFunc:  RetryDelay,
		ErrorHandler:    cfg.ErrorHandler,
		Logger:          slogAdapter{cfg.Logger},
		LogLevel:        asynq.InfoLevel,
	})
}

// RetryDelay is the backoff between attempts of a failed task.
func RetryDelay(n int, err error, _ *asynq.Task) time.Duration {
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return time.Second
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
