package activity

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the sink's record access (storage/postgres.DB).
type Store interface {
	ActivitySubscriptionsMatching(ctx context.Context, keys []storage.ActivityKey) ([]storage.ActivitySubscription, error)
	ActivityKeywordSubscriptions(ctx context.Context, eventType string, texts []string) ([]storage.ActivitySubscription, error)
	AddActivityDeliveries(ctx context.Context, ds []storage.NewActivityDelivery) (int64, error)
	UsersByIDs(ctx context.Context, ids []int64) ([]storage.User, error)
}

// PostRenderer renders a post for the public as the API does (nil: the
// public may not see it); render.Hydrator.
type PostRenderer interface {
	PostMessage(ctx context.Context, id int64, o render.Options) ([]byte, error)
}

// Publisher sends rendered activities to the API replicas' activity
// streams (events/bus.Bus).
type Publisher interface {
	PublishActivity(ctx context.Context, as []events.Activity) error
}

// Mode is what a Sink does with the envelopes it renders: each mode runs
// under its own dispatcher cursor, so one failing (PostgreSQL, Redis)
// never holds the other back.
type Mode int

const (
	// Webhooks records the webhook deliveries (cursor "activity").
	Webhooks Mode = iota
	// Stream publishes every envelope to the activity stream (cursor
	// "activity-stream").
	Stream
)

// Cursor names, and the sinks', of the two modes.
const (
	WebhooksCursor = "activity"
	StreamCursor   = "activity-stream"
)

// Sink is an activity dispatcher's sink (a workers/dispatch.Sink). For a
// batch it derives the activity events, matches subscriptions by user and
// type (and direction) and renders one envelope per matched subscription;
// then, by Mode, it records the webhook deliveries of the subscriptions
// with a webhook in one transaction (a re-offered batch adds nothing: the
// unique index), or publishes every envelope to the activity stream
// (stream readers skip what they saw by (seq, subscription)). An error
// leaves the batch to be offered again whole, to that mode's cursor only.
type Sink struct {
	Mode   Mode
	Store  Store
	Posts  PostRenderer
	Bus    Publisher // Stream mode only
	Logger *slog.Logger
}

// Name names the sink (its metrics): its cursor's name.
func (s *Sink) Name() string {
	if s.Mode == Stream {
		return StreamCursor
	}
	return WebhooksCursor
}

type derivedEvent struct {
	ev events.Event
	d  Derived
}

// Handle derives, matches, renders, records and publishes the batch.
func (s *Sink) Handle(ctx context.Context, batch []events.Event) error {
	var ds []derivedEvent
	keys := map[storage.ActivityKey]bool{}
	for _, e := range batch {
		derived, err := Derive(e)
		if err != nil {
			s.logger().ErrorContext(ctx, "activity: undecodable event skipped", "seq", e.Seq, "err", err)
			continue
		}
		for _, d := range derived {
			ds = append(ds, derivedEvent{e, d})
			keys[storage.ActivityKey{UserID: d.UserID, EventType: d.Type}] = true
		}
	}
	if len(ds) == 0 {
		return nil
	}
	subs, err := s.Store.ActivitySubscriptionsMatching(ctx, sortedKeys(keys))
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	for typ, texts := range keywordTexts(ds) { // news.new: one lookup per batch
		ks, err := s.Store.ActivityKeywordSubscriptions(ctx, typ, texts)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		subs = append(subs, ks...)
	}
	if s.Mode == Webhooks {
		subs = slices.DeleteFunc(subs, func(sub storage.ActivitySubscription) bool { return sub.WebhookID == 0 })
	}
	if len(subs) == 0 {
		return nil
	}
	out, err := s.render(ctx, ds, index(subs))
	if err != nil {
		return err
	}
	if s.Mode == Stream {
		return s.publish(ctx, out)
	}
	return s.record(ctx, out)
}

// index groups subscriptions by (user, type).
func index(subs []storage.ActivitySubscription) map[storage.ActivityKey][]storage.ActivitySubscription {
	m := map[storage.ActivityKey][]storage.ActivitySubscription{}
	for _, sub := range subs {
		k := storage.ActivityKey{UserID: sub.FilterUserID, EventType: sub.EventType}
		m[k] = append(m[k], sub)
	}
	return m
}

func sortedKeys(m map[storage.ActivityKey]bool) []storage.ActivityKey {
	out := make([]storage.ActivityKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b storage.ActivityKey) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.EventType, b.EventType))
	})
	return out
}

// rendered is one envelope for one subscription.
type rendered struct {
	sub  storage.ActivitySubscription
	ev   events.Event
	body []byte
}

// render builds the envelopes of the derived events matched by subs: each
// subscription receives an event once (a self-like is outbound and inbound
// for one user; a subscription without direction takes the first), and
// only the events appended after it was created (a lagging dispatcher
// does not send a new subscription older events).
func (s *Sink) render(ctx context.Context, ds []derivedEvent, subs map[storage.ActivityKey][]storage.ActivitySubscription) ([]rendered, error) {
	r := newPayloads(s.Store, s.Posts)
	var out []rendered
	seen := map[[2]int64]bool{} // (seq, subscription)
	for _, de := range ds {
		for _, sub := range subs[storage.ActivityKey{UserID: de.d.UserID, EventType: de.d.Type}] {
			if sub.Direction != "" && sub.Direction != de.d.Direction || seen[[2]int64{de.ev.Seq, sub.ID}] ||
				de.ev.CreatedAt.Before(sub.CreatedAt) || !de.d.accepts(sub) {
				continue // another direction, delivered already, from before the subscription, another app or keyword
			}
			p, err := r.payload(ctx, de.d)
			if err != nil {
				return nil, fmt.Errorf("activity: event %d: %w", de.ev.Seq, err)
			}
			if p == nil {
				continue // not shown: a protected or gone author, a post the public can not see
			}
			body, err := envelope(de.ev, de.d, sub, p)
			if err != nil {
				return nil, fmt.Errorf("activity: event %d: %w", de.ev.Seq, err)
			}
			seen[[2]int64{de.ev.Seq, sub.ID}] = true
			out = append(out, rendered{sub: sub, ev: de.ev, body: body})
		}
	}
	return out, nil
}

// record records the webhook deliveries of out (all of whose
// subscriptions have a webhook).
func (s *Sink) record(ctx context.Context, out []rendered) error {
	hooks := make([]storage.NewActivityDelivery, 0, len(out))
	for _, r := range out {
		hooks = append(hooks, storage.NewActivityDelivery{WebhookID: r.sub.WebhookID, AppID: r.sub.AppID,
			SubscriptionID: r.sub.ID, EventSeq: r.ev.Seq, EventAt: r.ev.CreatedAt, Body: r.body})
	}
	if _, err := s.Store.AddActivityDeliveries(ctx, hooks); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	return nil
}

// publish sends every envelope of out to the activity stream in (seq,
// subscription) order, the order the hubs' de-duplication relies on.
func (s *Sink) publish(ctx context.Context, out []rendered) error {
	stream := make([]events.Activity, 0, len(out))
	for _, r := range out {
		stream = append(stream, events.Activity{Seq: r.ev.Seq, AppID: r.sub.AppID, SubscriptionID: r.sub.ID, Body: r.body})
	}
	slices.SortStableFunc(stream, func(a, b events.Activity) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.SubscriptionID, b.SubscriptionID))
	})
	if err := s.Bus.PublishActivity(ctx, stream); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	return nil
}

func (s *Sink) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
