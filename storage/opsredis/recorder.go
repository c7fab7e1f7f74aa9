package opsredis

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// FlushEvery is how often a Recorder writes what it gathered.
const FlushEvery = time.Second

// maxPending bounds the error records a Recorder holds between two
// flushes (Redis away: the excess is dropped and counted in the log).
const maxPending = 4 * MaxErrors

// Recorder gathers the records in memory and writes them in one pipeline
// every FlushEvery (Run): recording costs a lock and a map update on the
// request path, never a Redis round trip. A process that stops loses at
// most the last second (Run flushes once more when its context ends).
type Recorder struct {
	store *Store
	log   *slog.Logger
	mu    sync.Mutex
	cur   batch
	lost  int
}

// NewRecorder writes to store (log: nil means slog.Default()).
func NewRecorder(store *Store, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{store: store, log: log}
}

// Request counts one answer of app (0: none) with status at.
func (r *Recorder) Request(app int64, status int, at time.Time) {
	k := reqKey{app: app, minute: at.Unix() / 60, class: storage.StatusClass(status)}
	r.mu.Lock()
	if r.cur.reqs == nil {
		r.cur.reqs = map[reqKey]int64{}
	}
	r.cur.reqs[k]++
	r.mu.Unlock()
}

// Error keeps one error answer.
func (r *Recorder) Error(e storage.APIError) {
	r.mu.Lock()
	if len(r.cur.errs) < maxPending {
		r.cur.errs = append(r.cur.errs, e)
	} else {
		r.lost++
	}
	r.mu.Unlock()
}

// Job counts one task run of queue that ended at (failed: in an error).
func (r *Recorder) Job(queue string, failed bool, at time.Time) {
	k := jobKey{queue: queue, minute: at.Unix() / 60, failed: failed}
	r.mu.Lock()
	if r.cur.jobs == nil {
		r.cur.jobs = map[jobKey]int64{}
	}
	r.cur.jobs[k]++
	r.mu.Unlock()
}

// Flush writes what was gathered; on failure the counts are kept for the
// next flush (the error records too, up to maxPending).
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	b, lost := r.cur, r.lost
	r.cur, r.lost = batch{}, 0
	r.mu.Unlock()
	if lost > 0 {
		r.log.WarnContext(ctx, "ops: error records dropped (Redis slow or away)", "dropped", lost)
	}
	if len(b.reqs) == 0 && len(b.errs) == 0 && len(b.jobs) == 0 {
		return nil
	}
	err := r.store.write(ctx, b)
	if err != nil {
		r.putBack(b)
	}
	return err
}

// putBack merges an unwritten batch into the current one.
func (r *Recorder) putBack(b batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, n := range b.reqs {
		if r.cur.reqs == nil {
			r.cur.reqs = map[reqKey]int64{}
		}
		r.cur.reqs[k] += n
	}
	for k, n := range b.jobs {
		if r.cur.jobs == nil {
			r.cur.jobs = map[jobKey]int64{}
		}
		r.cur.jobs[k] += n
	}
	room := max(0, maxPending-len(r.cur.errs))
	r.cur.errs = append(b.errs[:min(room, len(b.errs))], r.cur.errs...)
}

// Run flushes every FlushEvery until ctx ends, then once more.
func (r *Recorder) Run(ctx context.Context) {
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if err := r.Flush(done); err != nil {
				r.log.WarnContext(done, "ops: last flush failed", "err", err)
			}
			cancel()
			return
		case <-t.C:
			if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
				r.log.WarnContext(ctx, "ops: flush failed; kept for the next", "err", err)
			}
		}
	}
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }
