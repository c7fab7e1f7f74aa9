package workers

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
)

// samples draws RetryDelay n times for retry count retried.
func samples(retried, n int, err error) []time.Duration {
	task := asynq.NewTask("compliance:process", nil)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = RetryDelay(retried, err, task)
	}
	return out
}

func TestRetryDelayBounds(t *testing.T) {
	failure := errors.New("database unavailable")
	tests := []struct {
		retried int
		base    time.Duration // the delay before jitter; results lie in [base/2, base]
	}{
		{0, 2 * time.Second},
		{1, 4 * time.Second},
		{2, 8 * time.Second},
		{3, 16 * time.Second},
		{5, 64 * time.Second},
		{8, 512 * time.Second},
		{9, 10 * time.Minute}, // 1024 s capped
		{10, 10 * time.Minute},
		{11, 10 * time.Minute},
		{12, 10 * time.Minute},
		{100, 10 * time.Minute},
		{1 << 20, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("retried=", tt.retried), func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for _, d := range samples(tt.retried, 500, failure) {
				if d < tt.base/2 || d > tt.base {
					t.Fatalf("RetryDelay(%d) = %v, want within [%v, %v]", tt.retried, d, tt.base/2, tt.base)
				}
				seen[d] = true
			}
			if len(seen) < 2 {
				t.Errorf("RetryDelay(%d) gave the same delay 500 times: no jitter", tt.retried)
			}
		})
	}
}

func TestRetryDelayGrows(t *testing.T) {
	failure := errors.New("timeout")
	// Each step doubles the base, so every delay of step n+1 is at least
	// every delay of step n, until the cap (reached at n = 9).
	for n := 0; n < 8; n++ {
		cur, next := samples(n, 200, failure), samples(n+1, 200, failure)
		if maxCur, minNext := maxOf(cur), minOf(next); minNext < maxCur {
			t.Errorf("RetryDelay(%d) can be %v, less than RetryDelay(%d) = %v", n+1, minNext, n, maxCur)
		}
	}
	if got := maxOf(samples(50, 500, failure)); got > 10*time.Minute {
		t.Errorf("RetryDelay(50) = %v, above the 10 min cap", got)
	}
}

func TestRetryDelayLeaseExpired(t *testing.T) {
	for _, err := range []error{asynq.ErrLeaseExpired, fmt.Errorf("task: %w", asynq.ErrLeaseExpired)} {
		for _, retried := range []int{0, 3, 12, 1000} {
			if got := RetryDelay(retried, err, asynq.NewTask("compliance:process", nil)); got != time.Second {
				t.Errorf("RetryDelay(%d, %v) = %v, want 1s", retried, err, got)
			}
		}
	}
}

func maxOf(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func minOf(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

// TestDeferredRun: a run deferred for want of room (media slots) is not a
// failed attempt, is tried again within 1-2 s whatever its retry count,
// and is logged at Debug as outcome "deferred".
func TestDeferredRun(t *testing.T) {
	err := fmt.Errorf("media 7 (video): %w", tasks.ErrDeferred)
	if isFailure(err) || !isFailure(errors.New("boom")) {
		t.Errorf("isFailure(deferred) = %v, isFailure(other) = %v; want false, true", isFailure(err), isFailure(errors.New("boom")))
	}
	for _, retried := range []int{0, 5, 20} {
		for _, d := range samples(retried, 50, err) {
			if d < time.Second || d > 2*time.Second {
				t.Fatalf("deferred delay after %d retries = %s, want 1-2 s", retried, d)
			}
		}
	}
	a := attempt{retried: 8, maxRetry: 8}
	if got := outcome(a, err); got != outcomeDeferred {
		t.Errorf("outcome = %q, want %q", got, outcomeDeferred)
	}
	if got := runLevel(outcomeDeferred, err); got != slog.LevelDebug {
		t.Errorf("runLevel = %v, want Debug", got)
	}
}
