package streams

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/render"
)

// backfillBatch is how many events one read of the log takes.
const backfillBatch = 500

// The backfill's look at the matches stream (backfillFrom): how many of
// the matches published in its minutes it scans for the lowest seq, how
// much earlier than its minutes it starts (the API's clock against
// Redis's), and how long it waits for Redis before going by creation time
// alone.
const (
	backfillMatchScan   = 1000
	backfillClockMargin = 5 * time.Second
	backfillRedisWait   = time.Second
)

// backfill writes the posts of the last minutes that match the app's rules
// now, oldest first, from the event log: those created in the last
// minutes, and those the dispatcher published to the streams in them
// (backfillFrom). Posts the live stream also delivers may come twice, as
// the platform documents.
func (m *Module) backfill(ctx context.Context, s *streamWriter, appID int64, minutes int, opts render.Options) error {
	if m.Log == nil || m.Rules == nil {
		return nil
	}
	rules, err := m.Rules.StreamRulesOf(ctx, []int64{appID})
	if err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	if len(rules) == 0 {
		return nil
	}
	set := streamrules.NewSet(rules)
	since := m.Clock().Add(-time.Duration(minutes) * time.Minute)
	after, ok, err := m.backfillFrom(ctx, since)
	if err != nil || !ok {
		return err
	}
	for {
		evs, err := m.Log.EventsAfter(ctx, after, backfillBatch)
		if err != nil {
			return fmt.Errorf("backfill: %w", err)
		}
		for _, ev := range evs {
			after = ev.Seq
			match, ok, err := set.MatchEvent(ev)
			if err != nil {
				m.Logger.ErrorContext(ctx, "backfill: event skipped", "err", err)
			}
			if !ok {
				continue
			}
			if err := m.deliver(ctx, s, Delivery{Seq: match.Seq, PostID: match.PostID, Rules: match.Rules}, opts); err != nil {
				return err
			}
		}
		if len(evs) < backfillBatch {
			return nil
		}
	}
}

// backfillFrom is the seq the backfill reads the log after: before the
// first event created since since, or before the lowest of the first
// matches published to the streams since then (bus.LowestMatchSince) when
// that one is older. The second covers a post
// the dispatcher matched late (its cursor changed hands after a worker
// died, PostgreSQL was away): it went out live after since, to clients
// that were connected, though it was created before; a client away since
// then must get it too. ok is false when there is nothing to backfill. A
// matches stream that cannot be read (Redis away) leaves the creation
// time alone.
func (m *Module) backfillFrom(ctx context.Context, since time.Time) (after int64, ok bool, err error) {
	var from []int64
	first, err := m.Log.EventsSince(ctx, since, 0, 1)
	if err != nil {
		return 0, false, fmt.Errorf("backfill: %w", err)
	}
	if len(first) > 0 {
		from = append(from, first[0].Seq)
	}
	if m.Hub != nil && m.Hub.Bus != nil {
		rctx, cancel := context.WithTimeout(ctx, backfillRedisWait)
		seq, err := m.Hub.Bus.LowestMatchSince(rctx, since.Add(-backfillClockMargin), backfillMatchScan)
		cancel()
		switch {
		case err != nil:
			m.Logger.WarnContext(ctx, "backfill: the matches stream could not be read; backfilling by creation time only", "err", err)
		case seq > 0:
			from = append(from, seq)
		}
	}
	if len(from) == 0 {
		return 0, false, nil
	}
	return slices.Min(from) - 1, true, nil
}
