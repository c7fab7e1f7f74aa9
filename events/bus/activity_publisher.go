package bus

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/events"
)

// Defaults of an ActivityPublisher: what it keeps to put back after Redis
// lost its data.
const (
	DefaultActivityKeep    = 2 * time.Minute
	DefaultActivityKeepMax = 10_000
)

// ActivityPublisher appends the activity sink's envelopes to the activity
// stream and puts back what a Redis that lost its data took with it. The
// API replicas' hubs cannot catch activity up from the event log, as they
// do the filtered stream (deriving activity lives in the workers), so the
// one publisher (the "activity-stream" cursor's holder) checks, in the
// same script as each append, that the stream still holds the entry it
// added last. When it does not (Redis restarted empty, or from an older
// snapshot), the entries it added in the last Keep (at most KeepMax) go
// in again before the new ones: a hub skips those it routed already by
// (seq, subscription) and routes those it never read. What was added
// before this publisher's process started (another holder's) is not kept.
// Its methods are safe for concurrent use.
type ActivityPublisher struct {
	Bus     *Bus
	Keep    time.Duration // (DefaultActivityKeep)
	KeepMax int           // (DefaultActivityKeepMax)
	Logger  *slog.Logger
	Clock   func() time.Time

	mu     sync.Mutex
	newest string // id of the last entry added; "" before the first
	recent []keptActivity
}

type keptActivity struct {
	at   time.Time
	body string
}

// PublishActivity appends as, in order, to the activity stream, after
// putting back the kept entries Redis lost.
func (p *ActivityPublisher) PublishActivity(ctx context.Context, as []events.Activity) error {
	if len(as) == 0 {
		return nil
	}
	bodies, err := encodeActivities(as)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prune(p.now())
	lost, err := p.add(ctx, p.newest, bodies)
	if err != nil {
		return err // the batch is offered again; what went in is skipped by readers
	}
	if lost {
		p.logger().WarnContext(ctx, "activity stream: Redis lost entries since the last publish; adding the recent ones again",
			"again", len(p.recent), "keep", p.keep())
		again := make([]string, 0, len(p.recent)+len(bodies))
		for _, k := range p.recent {
			again = append(again, k.body)
		}
		if lost, err = p.add(ctx, "", append(again, bodies...)); err != nil || lost {
			// Part of the kept entries may be missing: the next publish
			// must find nothing of ours and add them all again.
			p.newest = neverAdded
			if err == nil {
				err = errors.New("publish activity: Redis lost entries again while the kept ones were added again")
			}
			return err
		}
	}
	p.remember(bodies)
	return nil
}

// neverAdded is a stream id no entry has: a publisher whose re-adding
// failed expects it, so its next publish adds the kept entries again.
const neverAdded = "0-0"

// add appends bodies (see Bus.addActivities) and records the newest id.
func (p *ActivityPublisher) add(ctx context.Context, expect string, bodies []string) (lost bool, err error) {
	newest, lost, err := p.Bus.addActivities(ctx, expect, bodies)
	if newest != "" {
		p.newest = newest
	}
	return lost, err
}

// remember keeps bodies, just added, and drops what is beyond KeepMax or
// older than Keep.
func (p *ActivityPublisher) remember(bodies []string) {
	now := p.now()
	for _, b := range bodies {
		p.recent = append(p.recent, keptActivity{at: now, body: b})
	}
	p.prune(now)
}

// prune drops the kept entries beyond KeepMax or older than Keep at now
// (before a loss is put back too: after a quiet hour nothing old goes in
// again).
func (p *ActivityPublisher) prune(now time.Time) {
	drop := max(0, len(p.recent)-p.keepMax())
	for drop < len(p.recent) && now.Sub(p.recent[drop].at) > p.keep() {
		drop++
	}
	if drop > 0 {
		n := copy(p.recent, p.recent[drop:])
		clear(p.recent[n:])
		p.recent = p.recent[:n]
	}
}

func (p *ActivityPublisher) keep() time.Duration {
	if p.Keep > 0 {
		return p.Keep
	}
	return DefaultActivityKeep
}

func (p *ActivityPublisher) keepMax() int {
	if p.KeepMax > 0 {
		return p.KeepMax
	}
	return DefaultActivityKeepMax
}

func (p *ActivityPublisher) now() time.Time {
	if p.Clock != nil {
		return p.Clock()
	}
	return time.Now()
}

func (p *ActivityPublisher) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}
