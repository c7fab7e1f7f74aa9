package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// StreamRuleSource is where the matcher reads the filtered-stream rules
// (storage/postgres.DB).
type StreamRuleSource interface {
	// AllStreamRules returns every rule with the rules version they make
	// up, read in one snapshot.
	AllStreamRules(ctx context.Context) ([]storage.StreamRule, int64, error)
	// StreamRulesVersion moves whenever a rule is added or deleted.
	StreamRulesVersion(ctx context.Context) (int64, error)
}

// MatchPublisher sends matches to the API replicas (events/bus.Bus).
type MatchPublisher interface {
	PublishMatches(ctx context.Context, ms []events.Match) error
}

// StreamMatcher is the dispatcher's filtered-stream sink: it matches every
// created post against the rules of every app and publishes one
// events.Match per post that matched a rule (docs/streams-rules.md).
//
// It keeps the compiled rule set and reloads it when the rules version has
// moved. The version is read after the dispatcher has read the batch: a
// rule change committed before a post of the batch is then always seen
// (the post is matched against the rules of its commit time or later).
type StreamMatcher struct {
	Rules  StreamRuleSource
	Bus    MatchPublisher
	Logger *slog.Logger

	mu      sync.Mutex
	set     *streamrules.Set
	version int64
	loads   int
}

// NewStreamMatcher returns a matcher reading rules from rules and
// publishing to bus.
func NewStreamMatcher(rules StreamRuleSource, bus MatchPublisher, log *slog.Logger) *StreamMatcher {
	if log == nil {
		log = slog.Default()
	}
	return &StreamMatcher{Rules: rules, Bus: bus, Logger: log}
}

// Name names the sink (its cursor and metrics).
func (m *StreamMatcher) Name() string { return "stream-matcher" }

// Loads is how many times the rule set was (re)loaded.
func (m *StreamMatcher) Loads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads
}

// Handle matches the batch's post.create events and publishes their
// matches in Seq order. An error (rules or Redis unavailable) leaves the
// batch to be retried whole; receivers de-duplicate on Seq. A payload that
// does not decode is logged and skipped, so one bad event cannot stop the
// stream.
func (m *StreamMatcher) Handle(ctx context.Context, batch []events.Event) error {
	set, err := m.rules(ctx)
	if err != nil {
		return err
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

// rules returns the rule set, reloaded if the version moved since it was
// loaded.
func (m *StreamMatcher) rules(ctx context.Context) (*streamrules.Set, error) {
	version, err := m.Rules.StreamRulesVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream matcher: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set != nil && version == m.version {
		return m.set, nil
	}
	rules, loaded, err := m.Rules.AllStreamRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream matcher: %w", err)
	}
	m.set, m.version = streamrules.NewSet(rules), loaded
	m.loads++
	m.Logger.InfoContext(ctx, "stream rules loaded", "rules", m.set.Len(), "version", loaded)
	return m.set, nil
}
