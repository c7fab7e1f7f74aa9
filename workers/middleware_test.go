package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

func TestFinalAttempt(t *testing.T) {
	plain := errors.New("timeout")
	tests := []struct {
		retried, maxRetry int
		err               error
		want              bool
	}{
		{0, 12, plain, false},
		{12 - 1, 12, plain, false},
		{12, 12, plain, true},
		{12 + 1, 12, plain, true},
		{0, 0, plain, true},
		{0, 12, asynq.SkipRetry, true},
		{0, 12, fmt.Errorf("job 1: %w", asynq.SkipRetry), true},
		{3, 12, fmt.Errorf("wrapped: %w", plain), false},
	}
	for _, tt := range tests {
		if got := finalAttempt(tt.retried, tt.maxRetry, tt.err); got != tt.want {
			t.Errorf("finalAttempt(%d, %d, %v) = %v, want %v", tt.retried, tt.maxRetry, tt.err, got, tt.want)
		}
	}
}

// scripted fails its first failures runs (panicking on the run numbered
// panicOn), then succeeds, and records the final failures it hears of.
type scripted struct {
	mu       sync.Mutex
	runs     int
	failures int
	panicOn  int
	err      error
	finals   []string
	done     chan struct{}
}

func (s *scripted) ProcessTask(ctx context.Context, t *asynq.Task) error {
	s.mu.Lock()
	s.runs++
	run := s.runs
	s.mu.Unlock()
	if run == s.panicOn {
		panic("scripted panic")
	}
	if run <= s.failures {
		return s.err
	}
	close(s.done)
	return nil
}

func (s *scripted) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finals = append(s.finals, fmt.Sprintf("%s attempts=%d err=%v", t.Type(), attempts, err != nil))
	close(s.done)
}

// TestMiddlewareOnRealServer runs tasks through a real asynq server and
// checks the middleware's view of each attempt: retries are not final, the
// last failure is reported once with the attempt count, panics count as
// failures, and runs are counted by outcome.
func TestMiddlewareOnRealServer(t *testing.T) {
	tests := []struct {
		name       string
		h          *scripted
		maxRetry   int
		wantFinals []string
		wantRuns   map[string]float64
	}{
		{"succeeds after a retry", &scripted{failures: 1, err: errors.New("hiccup")}, 3, nil,
			map[string]float64{outcomeRetry: 1, outcomeSuccess: 1}},
		{"retries used up", &scripted{failures: 99, err: errors.New("down")}, 1, []string{"test:scripted attempts=2 err=true"},
			map[string]float64{outcomeRetry: 1, outcomeFailed: 1}},
		{"skip retry is final at once", &scripted{failures: 99, err: fmt.Errorf("bad payload: %w", asynq.SkipRetry)}, 5,
			[]string{"test:scripted attempts=1 err=true"}, map[string]float64{outcomeFailed: 1}},
		{"panic is a failure", &scripted{panicOn: 1}, 0, []string{"test:scripted attempts=1 err=true"},
			map[string]float64{outcomeFailed: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.h.done = make(chan struct{})
			reg := prometheus.NewRegistry()
			log := slog.New(slog.DiscardHandler)
			m := newTaskMetrics(reg)
			mux := asynq.NewServeMux()
			mux.Handle("test:scripted", observe(log, m, nil, finalFailure(tc.h, recoverPanics(tc.h))))
			addr, db := storagetest.RedisDB(t)
			opt := asynq.RedisClientOpt{Addr: addr, DB: db}
			srv := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Logger: slogAdapter{log}, LogLevel: asynq.FatalLevel,
				DelayedTaskCheckInterval: 20 * time.Millisecond,
				RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond }})
			if err := srv.Start(mux); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Shutdown)
			client := asynq.NewClient(opt)
			t.Cleanup(func() { client.Close() })
			if _, err := client.Enqueue(asynq.NewTask("test:scripted", nil), asynq.MaxRetry(tc.maxRetry)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-tc.h.done:
			case <-time.After(30 * time.Second):
				t.Fatal("task never finished")
			}
			waitCounted(t, m, sum(tc.wantRuns))
			tc.h.mu.Lock()
			finals := strings.Join(tc.h.finals, "|")
			tc.h.mu.Unlock()
			if want := strings.Join(tc.wantFinals, "|"); finals != want {
				t.Errorf("final failures %q, want %q", finals, want)
			}
			for out, want := range tc.wantRuns {
				if got := counted(t, m, out); got != want {
					t.Errorf("runs{outcome=%s} = %v, want %v", out, got, want)
				}
			}
		})
	}
}

func sum(m map[string]float64) float64 {
	var n float64
	for _, v := range m {
		n += v
	}
	return n
}

// waitCounted waits until n runs are counted (the count follows the
// handler's return by a moment).
func waitCounted(t *testing.T, m *taskMetrics, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var got float64
		for _, out := range []string{outcomeSuccess, outcomeRetry, outcomeFailed} {
			got += counted(t, m, out)
		}
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %v runs counted", n)
}

// TestNewMuxRegistersEveryType checks the one list: a registered type is
// served, an unknown one is not.
func TestNewMuxRegistersEveryType(t *testing.T) {
	mux := NewMux(Deps{Logger: slog.New(slog.DiscardHandler)})
	err := mux.ProcessTask(context.Background(), asynq.NewTask("compliance:process", []byte(`{"job_id":1}`)))
	if err == nil || !strings.Contains(err.Error(), "handler not found") {
		t.Errorf("a mux without the compliance handler served its task: %v", err)
	}
}

// counted reads the runs counter of one outcome.
func counted(t *testing.T, m *taskMetrics, out string) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.runs.WithLabelValues("test:scripted", out).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

// TestRunLevel: a final failure caused by the client's input is a warning,
// not an error (before, an unreadable upload was logged at Error).
func TestRunLevel(t *testing.T) {
	tests := []struct {
		outcome string
		err     error
		want    slog.Level
	}{
		{outcomeSuccess, nil, slog.LevelInfo},
		{outcomeRetry, errors.New("db hiccup"), slog.LevelWarn},
		{outcomeFailed, errors.New("retries used up"), slog.LevelError},
		{outcomeFailed, fmt.Errorf("bad payload: %w", asynq.SkipRetry), slog.LevelError},
		{outcomeFailed, fmt.Errorf("job 1: gzip upload: %w", tasks.ErrClientInput), slog.LevelWarn},
	}
	for _, tc := range tests {
		if got := runLevel(tc.outcome, tc.err); got != tc.want {
			t.Errorf("runLevel(%s, %v) = %v, want %v", tc.outcome, tc.err, got, tc.want)
		}
	}
}

// TestStoppedRunIsNotFinal: a run whose context was cancelled (the worker
// shutting down; asynq puts the task back) or that lost its task lease to
// a rescue (sweep.ErrLeaseLost: the rescue does the work) is no final
// failure, even on the last attempt; a run failing with its context live
// is.
func TestStoppedRunIsNotFinal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cancelled bool
		err       error
		wantFinal bool
	}{
		{"stopped", true, context.Canceled, false},
		{"lease lost", false, fmt.Errorf("%w: %w", sweep.ErrLeaseLost, context.Canceled), false},
		{"failed", false, errors.New("boom"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &scripted{failures: 1, err: tc.err, done: make(chan struct{})}
			ctx, cancel := context.WithCancel(t.Context())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			// No asynq metadata in ctx: no retries left, every failure would be final.
			err := finalFailure(h, h).ProcessTask(ctx, asynq.NewTask("test:run", nil))
			if err == nil {
				t.Fatal("the failing run returned nil")
			}
			if got := len(h.finals) == 1; got != tc.wantFinal {
				t.Errorf("final failures %v, want final = %v", h.finals, tc.wantFinal)
			}
		})
	}
}
