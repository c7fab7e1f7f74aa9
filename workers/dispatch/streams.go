package dispatch

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
)

// StreamRuleSource is where the matcher reads the filtered-stream rules
// (storage/postgres.DB).
type StreamRuleSource = streamrules.Source

// MatchPublisher sends matches to the API replicas (events/bus.Bus).
type MatchPublisher interface {
	PublishMatches(ctx context.Context, ms []events.Match) error
}

// StreamMatcher is the dispatcher's filtered-stream sink: it matches every
// created post against the rules of every app and publishes one
// events.Match per post that matched a rule (docs/streams-rules.md).
//
// It keeps the compiled rule set in a streamrules.Cache (reloaded when the
// rules version has moved, read after the dispatcher has read the batch).
type StreamMatcher struct {
	Rules  *streamrules.Cache
	Bus    MatchPublisher
	Logger *slog.Logger
}

// NewStreamMatcher returns a matcher reading rules from rules and
// publishing to bus.
func NewStreamMatcher(rules StreamRuleSource, bus MatchPublisher, log *slog.Logger) *StreamMatcher {
	if log == nil {
		log = slog.Default()
	}
	return &StreamMatcher{Rules: streamrules.NewCache(rules, log), Bus: bus, Logger: log}
}

// Name names the sink (its cursor and metrics).
func (m *StreamMatcher) Name() string { return "stream-matcher" }

// Loads is how many times the rule set was (re)loaded.
func (m *StreamMatcher) Loads() int { return m.Rules.Loads() }

// Handle matches the batch's post.create events and publishes their
// matches in Seq order. An error (rules or Redis unavailable) leaves the
// batch to be retried whole; receivers de-duplicate on Seq. A payload that
// does not decode is logged and skipped, so one bad event cannot stop the
// stream.
func (m *StreamMatcher) Handle(ctx context.Context, batch []events.Event) error {
	set, err := m.Rules.Set(ctx)
	if err != nil {
		return fmt.Errorf("stream matcher: %w", err)
	}
	var out []events.Match
	for _, e := range batch {
		match, ok, err := set.MatchEvent(e)
		if err != nil {
			m.Logger.ErrorContext(ctx, "stream matcher: undecodable post.create payload skipped", "seq", e.Seq, "err", err)
			continue
		}
		if ok {
			out = append(out, match)
		}
	}
	if err := m.Bus.PublishMatches(ctx, out); err != nil {
		return fmt.Errorf("stream matcher: %w", err)
	}
	return nil
}
