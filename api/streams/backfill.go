package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/render"
)

// backfillBatch is how many events one read of the log takes.
const backfillBatch = 500

// backfill writes the posts of the last minutes that match the app's rules
// now, oldest first, from the event log. Posts the live stream also
// delivers may come twice, as the platform documents.
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
	var after int64
	for {
		evs, err := m.Log.EventsSince(ctx, since, after, backfillBatch)
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
