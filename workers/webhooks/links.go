package webhooks

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Renderer renders a post as a link's webhook receives it: the filtered
// stream's line without its "\r\n" ({data, includes, matching_rules})
// with the fields and expansions of query and the app's matched rules.
// A nil body means the post is not shown (the public can not see it).
type Renderer interface {
	Render(ctx context.Context, postID int64, query string, rules []events.RuleHit) ([]byte, error)
}

// LinkStore is the link sink's record access (storage/postgres.DB).
type LinkStore interface {
	DeliveryLinks(ctx context.Context, apps []int64) ([]storage.DeliveryLink, error)
	AddWebhookDeliveries(ctx context.Context, ds []storage.NewDelivery) (int64, error)
}

// LinkSink is the sink of the "webhooks" dispatcher (a
// workers/dispatch.Sink): it matches each batch's post.create events
// against every app's filtered-stream rules (a streamrules.Cache, as the
// stream matcher does) and records, for each stream link of a matched
// app, one delivery of each matching post created at or after the link,
// rendered with the link's query. A batch's deliveries are recorded in one
// transaction; a re-offered batch adds nothing (docs/webhooks.md,
// "Deliveries").
type LinkSink struct {
	Rules  *streamrules.Cache
	Store  LinkStore
	Render Renderer
	Logger *slog.Logger
}

// NewLinkSink returns a link sink reading rules from rules.
func NewLinkSink(rules streamrules.Source, store LinkStore, render Renderer, log *slog.Logger) *LinkSink {
	if log == nil {
		log = slog.Default()
	}
	return &LinkSink{Rules: streamrules.NewCache(rules, log), Store: store, Render: render, Logger: log}
}

// Name names the sink (its metrics).
func (s *LinkSink) Name() string { return "webhook-links" }

type matched struct {
	ev   events.Event
	post int64
	hits map[int64][]events.RuleHit // by app
}

// Handle records the batch's deliveries. An error (rules, links, render or
// the record failing) leaves the batch to be offered again whole.
func (s *LinkSink) Handle(ctx context.Context, batch []events.Event) error {
	set, err := s.Rules.Set(ctx)
	if err != nil {
		return fmt.Errorf("webhook links: %w", err)
	}
	var ms []matched
	apps := map[int64]bool{}
	for _, e := range batch {
		m, ok, err := set.MatchEvent(e)
		if err != nil {
			s.Logger.ErrorContext(ctx, "webhook links: undecodable post.create payload skipped", "seq", e.Seq, "err", err)
			continue
		}
		if !ok {
			continue
		}
		byApp := map[int64][]events.RuleHit{}
		for _, h := range m.Rules {
			byApp[h.AppID] = append(byApp[h.AppID], h)
			apps[h.AppID] = true
		}
		ms = append(ms, matched{ev: e, post: m.PostID, hits: byApp})
	}
	if len(ms) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(apps))
	for id := range apps {
		ids = append(ids, id)
	}
	links, err := s.Store.DeliveryLinks(ctx, ids)
	if err != nil {
		return fmt.Errorf("webhook links: %w", err)
	}
	if len(links) == 0 {
		return nil
	}
	byApp := map[int64][]storage.DeliveryLink{}
	for _, l := range links {
		byApp[l.AppID] = append(byApp[l.AppID], l)
	}
	type key struct {
		post, app int64
		query     string
	}
	bodies := map[key][]byte{}
	var out []storage.NewDelivery
	for _, m := range ms {
		for app, hits := range m.hits {
			for _, l := range byApp[app] {
				if m.ev.CreatedAt.Before(l.CreatedAt) {
					continue // the link applies to posts after it
				}
				k := key{m.post, app, l.Query}
				body, seen := bodies[k]
				if !seen {
					if body, err = s.Render.Render(ctx, m.post, l.Query, hits); err != nil {
						return fmt.Errorf("webhook links: render post %d: %w", m.post, err)
					}
					bodies[k] = body
				}
				if body == nil {
					continue // not shown
				}
				out = append(out, storage.NewDelivery{WebhookID: l.WebhookID, AppID: app, EventSeq: m.ev.Seq,
					EventAt: m.ev.CreatedAt, Body: body})
			}
		}
	}
	if _, err := s.Store.AddWebhookDeliveries(ctx, out); err != nil {
		return fmt.Errorf("webhook links: %w", err)
	}
	return nil
}
