// Package webhooks holds the webhook work of the workers: the CRC sweeper
// that re-checks registered webhooks on the platform's schedule
// (docs/webhooks.md, "CRC schedule"), the dispatcher sink that records the
// deliveries of stream links (LinkSink) and the Deliverer that sends them
// (docs/webhooks.md, "Deliveries").
package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// The platform's published schedule (x-api webhooks introduction): every
// 30 minutes, a check of each webhook that has not passed in the past 24
// hours.
const (
	DefaultInterval = 30 * time.Minute
	DefaultRecheck  = 24 * time.Hour
	// batch is the most webhooks claimed at a time; checksAtOnce of them
	// are checked in parallel.
	batch        = 100
	checksAtOnce = 8
)

// Store is the record access of the sweeper (storage/postgres.DB).
type Store interface {
	ClaimWebhooksForCRC(ctx context.Context, q storage.WebhookDueQuery) ([]storage.WebhookDue, error)
	RecordWebhookCRC(ctx context.Context, c storage.WebhookCRC) (storage.Webhook, error)
}

// CRCSweeper checks, every Interval, each webhook without a pass for
// Recheck and not checked within Interval. Claiming a webhook stamps its
// last check, so several worker replicas check each webhook once.
type CRCSweeper struct {
	Store Store
	// Client sends the checks: the guarded client (api/webhooks.NewClient
	// builds the same one; no redirects followed).
	Client domain.Doer
	// Faults injects CRC failures and timeouts (docs/faults.md); nil: none.
	Faults domain.Faults
	Logger *slog.Logger
	Clock  func() time.Time
	// Interval is the tick (AVIARY_WEBHOOK_CRC_INTERVAL, DefaultInterval);
	// Recheck is how long a pass stands before the next check
	// (AVIARY_WEBHOOK_CRC_RECHECK; cmd defaults it to DefaultRecheck; 0
	// checks every webhook every tick, the platform's hourly schedule with
	// an Interval of 1h).
	Interval time.Duration
	Recheck  time.Duration
}

// Run sweeps at once and then every Interval until ctx ends.
func (s *CRCSweeper) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.logger().WarnContext(ctx, "webhook CRC sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep checks every due webhook once and returns how many it checked.
func (s *CRCSweeper) Sweep(ctx context.Context) (int, error) {
	checked := 0
	for ctx.Err() == nil {
		now := s.now()
		due, err := s.Store.ClaimWebhooksForCRC(ctx, s.query(now))
		if err != nil {
			return checked, err
		}
		s.checkAll(ctx, due)
		checked += len(due)
		if len(due) < batch {
			break
		}
	}
	return checked, ctx.Err()
}

func (s *CRCSweeper) query(now time.Time) storage.WebhookDueQuery {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	recheck := max(s.Recheck, 0)
	// A tick's claims happen a little after the previous tick's: allow
	// a tenth of the interval, or a webhook would skip every other tick.
	return storage.WebhookDueQuery{Now: now, PassedBefore: now.Add(-recheck),
		CheckedBefore: now.Add(-interval + interval/10), Limit: batch}
}

// checkAll checks due webhooks, checksAtOnce at a time.
func (s *CRCSweeper) checkAll(ctx context.Context, due []storage.WebhookDue) {
	sem := make(chan struct{}, checksAtOnce)
	var wg sync.WaitGroup
	for _, d := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s.check(ctx, d)
		})
	}
	wg.Wait()
}

// check runs one webhook's CRC and records the outcome.
func (s *CRCSweeper) check(ctx context.Context, d storage.WebhookDue) {
	at := s.now()
	o := domain.CheckWithFaults(ctx, s.Faults, d.AppID, s.Client, d.URL, d.ConsumerSecret)
	rec := domain.Record(d.Webhook, o, at)
	w, err := s.Store.RecordWebhookCRC(context.WithoutCancel(ctx), rec)
	switch {
	case errors.Is(err, storage.ErrNotFound): // deleted meanwhile
	case err != nil:
		s.logger().WarnContext(ctx, "record webhook CRC", "webhook_id", d.ID, "err", err)
	case !o.OK:
		s.logger().InfoContext(ctx, "webhook CRC failed", "webhook_id", d.ID, "app_id", d.AppID,
			"failure", o.Failure, "permanent", o.Permanent, "valid", w.Valid)
	}
}

func (s *CRCSweeper) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *CRCSweeper) logger() *slog.Logger { return logctx.OrDefault(s.Logger) }
