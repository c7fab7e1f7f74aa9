package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aviary-dev/aviary/storage"
)

// Source is where a Cache reads the filtered-stream rules
// (storage/postgres.DB).
type Source interface {
	// AllStreamRules returns every rule with the rules version they make
	// up, read in one snapshot.
	AllStreamRules(ctx context.Context) ([]storage.StreamRule, int64, error)
	// StreamRulesVersion moves whenever a rule is added or deleted.
	StreamRulesVersion(ctx context.Context) (int64, error)
}

// Cache keeps the compiled Set of every app's rules and reloads it when
// the rules version has moved. The dispatcher's sinks (the stream matcher
// and the webhook link sink) each hold one and call Set once per batch,
// after the dispatcher has read the batch: a rule change committed before
// a post of the batch is then always seen (the post is matched against the
// rules of its commit time or later). Safe for concurrent use.
type Cache struct {
	Source Source
	Logger *slog.Logger

	mu      sync.Mutex
	set     *Set
	version int64
	loads   int
}

// NewCache returns a cache reading src.
func NewCache(src Source, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.Default()
	}
	return &Cache{Source: src, Logger: log}
}

// Set returns the rule set, reloaded if the version moved since it was
// loaded.
func (c *Cache) Set(ctx context.Context) (*Set, error) {
	version, err := c.Source.StreamRulesVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream rules version: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set != nil && version == c.version {
		return c.set, nil
	}
	rules, loaded, err := c.Source.AllStreamRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("load stream rules: %w", err)
	}
	c.set, c.version = NewSet(rules), loaded
	c.loads++
	c.Logger.InfoContext(ctx, "stream rules loaded", "rules", c.set.Len(), "version", loaded)
	return c.set, nil
}

// Loads is how many times the rule set was (re)loaded.
func (c *Cache) Loads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads
}
