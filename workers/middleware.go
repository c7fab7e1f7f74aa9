package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Task outcomes, as logged and counted.
const (
	outcomeSuccess = "success"
	outcomeRetry   = "retry"
	outcomeFailed  = "failed"
	// outcomeDeferred: the handler had no room for the task (media
	// slots) and asynq puts it back without counting an attempt.
	outcomeDeferred = "deferred"
)

type taskMetrics struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newTaskMetrics(reg prometheus.Registerer) *taskMetrics {
	m := &taskMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_task_runs_total", Help: "Task runs, by task type and outcome (success, retry, failed).",
		}, []string{"type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aviary_task_duration_seconds", Help: "Task run time, by task type.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 15, 60, 300, 900, 3600},
		}, []string{"type"}),
	}
	reg.MustRegister(m.runs, m.duration)
	return m
}

// attempt describes the current run of a task from its context.
type attempt struct {
	taskID   string
	retried  int
	maxRetry int
}

func attemptOf(ctx context.Context) attempt {
	id, _ := asynq.GetTaskID(ctx)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	return attempt{taskID: id, retried: retried, maxRetry: maxRetry}
}

// finalAttempt reports whether asynq will not run a task again after it
// failed with err on the attempt that had been retried retried times: the
// handler asked to skip retries, or the retries are used up (asynq archives
// a task once retried >= maxRetry).
func finalAttempt(retried, maxRetry int, err error) bool {
	return errors.Is(err, asynq.SkipRetry) || retried >= maxRetry
}

// outcome classifies a run's result.
func outcome(a attempt, err error) string {
	switch {
	case err == nil:
		return outcomeSuccess
	case errors.Is(err, tasks.ErrDeferred):
		return outcomeDeferred
	case finalAttempt(a.retried, a.maxRetry, err):
		return outcomeFailed
	}
	return outcomeRetry
}

// observe logs and counts every run, with the task id in the context so
// the handler's own records carry it.
func observe(log *slog.Logger, m *taskMetrics, jobs JobCounter, next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		a := attemptOf(ctx)
		ctx = logctx.With(ctx, slog.String("task_id", a.taskID), slog.String("task_type", t.Type()))
		start := time.Now()
		err := next.ProcessTask(ctx, t)
		elapsed := time.Since(start)
		out := outcome(a, err)
		m.runs.WithLabelValues(t.Type(), out).Inc()
		m.duration.WithLabelValues(t.Type()).Observe(elapsed.Seconds())
		if jobs != nil {
			q, _ := asynq.GetQueueName(ctx)
			jobs.Job(q, err != nil, time.Now())
		}
		log.Log(ctx, runLevel(out, err), "task run", "outcome", out, "attempt", a.retried+1, "seconds", elapsed.Seconds(), "err", err)
		return err
	})
}

// runLevel is the level of a run's log record: Error only for a final
// failure that is not the client's doing.
func runLevel(outcome string, err error) slog.Level {
	switch {
	case outcome == outcomeSuccess:
		return slog.LevelInfo
	case outcome == outcomeDeferred:
		return slog.LevelDebug
	case outcome == outcomeFailed && !errors.Is(err, tasks.ErrClientInput):
		return slog.LevelError
	}
	return slog.LevelWarn
}

// finalFailure runs next and tells handler, if it is a FinalFailer, when
// its task failed for good (next is handler behind inner middleware).
func finalFailure(handler, next asynq.Handler) asynq.Handler {
	ff, ok := handler.(FinalFailer)
	if !ok {
		return next
	}
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		err := next.ProcessTask(ctx, t)
		if err == nil {
			return nil
		}
		// A run whose context was cancelled was stopped (the worker shuts
		// down), not failed: asynq puts the task back, so even on the last
		// attempt it is not final. A deadline is a failure like any other.
		if errors.Is(ctx.Err(), context.Canceled) {
			return err
		}
		// A run that lost its task lease stopped because another run
		// (a rescue) holds the work now: not a failure of the work.
		if errors.Is(err, sweep.ErrLeaseLost) {
			return err
		}
		if a := attemptOf(ctx); finalAttempt(a.retried, a.maxRetry, err) {
			ff.FinalFailure(ctx, t, a.retried+1, err)
		}
		return err
	})
}

// recoverPanics turns a handler panic into an error, so the run is counted
// and the final-failure hook sees it like any other failure.
func recoverPanics(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic in %s handler: %v\n%s", t.Type(), v, debug.Stack())
			}
		}()
		return next.ProcessTask(ctx, t)
	})
}
