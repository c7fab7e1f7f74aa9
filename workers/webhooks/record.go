package webhooks

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// recorder records a drain's outcomes in batches while the next
// deliveries are sent: whatever accumulated during one transaction goes
// in the next (up to maxRecord), so the sends never wait for the
// database except before a replay status (flush) and at the end.
type recorder struct {
	w      *drain
	in     chan recItem
	done   chan struct{}
	failed atomic.Bool // a batch could not be recorded: the drain stops
}

// recItem is an outcome (fail: the webhook turns failing after it) or a
// flush request (flushed is closed once everything before it is
// recorded).
type recItem struct {
	o       *storage.DeliveryOutcome
	fail    bool
	flushed chan bool
}

// linger is the longest an outcome waits for others to be recorded with.
const linger = 20 * time.Millisecond

func newRecorder(w *drain) *recorder {
	r := &recorder{w: w, in: make(chan recItem, 8*maxRecord), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *recorder) add(o storage.DeliveryOutcome, fail bool) {
	r.in <- recItem{o: &o, fail: fail}
}

// flush waits until every outcome added is recorded; false when one could
// not be.
func (r *recorder) flush() bool {
	ch := make(chan bool, 1)
	r.in <- recItem{flushed: ch}
	return <-ch
}

// close records what is left and stops the recorder.
func (r *recorder) close() {
	close(r.in)
	<-r.done
}

func (r *recorder) run() {
	defer close(r.done)
	for {
		first, ok := <-r.in
		if !ok {
			return
		}
		items := []recItem{first}
		// Gather for up to linger (or maxRecord outcomes, a flush, the
		// end): one transaction, and one commit's flush, per batch rather
		// than per outcome.
		timer := time.NewTimer(linger)
	gather:
		for len(items) < maxRecord && items[len(items)-1].flushed == nil {
			select {
			case it, ok := <-r.in:
				if !ok {
					break gather
				}
				items = append(items, it)
			case <-timer.C:
				break gather
			}
		}
		timer.Stop()
		b := storage.DeliveryBatch{WebhookID: r.w.c.ID}
		var waiting []chan bool
		for _, it := range items {
			if it.flushed != nil {
				waiting = append(waiting, it.flushed)
				continue
			}
			b.Outcomes = append(b.Outcomes, *it.o)
			if it.fail {
				b.Fail, b.ProbeIn = true, r.w.d.ProbeInterval
			}
		}
		ok = r.failed.Load() || len(b.Outcomes) == 0 || r.record(b)
		ok = ok && !r.failed.Load()
		for _, ch := range waiting {
			ch <- ok
		}
	}
}

// record records b, retrying a few times: a batch that can not be
// recorded stops the drain (its deliveries stay pending and go again:
// at least once).
func (r *recorder) record(b storage.DeliveryBatch) bool {
	backoff := 100 * time.Millisecond
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(r.w.sends, 10*time.Second)
		err := r.w.d.Store.RecordDeliveryBatch(ctx, b)
		cancel()
		if err == nil {
			return true
		}
		r.w.d.metrics.recordErr.Inc()
		if try == 4 {
			r.w.log.Error("record delivery outcomes; they will be sent again", "count", len(b.Outcomes), "err", err)
			r.failed.Store(true)
			return false
		}
		r.w.log.Warn("record delivery outcomes; retrying", "retry_in", backoff, "err", err)
		time.Sleep(backoff)
		backoff *= 2
	}
}
