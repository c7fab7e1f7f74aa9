package ratelimit

import (
	"fmt"
	"sort"
	"sync"
)

// Registry is the catalogue of rules routes enforce. Features register their
// rules as they wire their routes; the catalogue can then be listed (for
// documentation or an operator endpoint) and guarantees one name means one
// rule.
type Registry struct {
	mu    sync.RWMutex
	rules map[string]Rule
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{rules: make(map[string]Rule)}
}

// Register validates rule and adds it. Registering an identical rule again
// is a no-op; the same name with different settings is an error.
func (g *Registry) Register(rule Rule) error {
	if err := rule.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.rules[rule.Name]; ok && old != rule {
		return fmt.Errorf("%w: %s is %+v, not %+v", errConflict, rule.Name, old, rule)
	}
	g.rules[rule.Name] = rule
	return nil
}

// MustRegister is Register for route wiring at start-up: it panics on error
// and returns rule so it can be passed straight to Limiter.Middleware.
func (g *Registry) MustRegister(rule Rule) Rule {
	if err := g.Register(rule); err != nil {
		panic(err)
	}
	return rule
}

// Lookup returns the rule registered under name.
func (g *Registry) Lookup(name string) (Rule, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r, ok := g.rules[name]
	return r, ok
}

// Rules returns every registered rule sorted by name.
func (g *Registry) Rules() []Rule {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]Rule, 0, len(g.rules))
	for _, r := range g.rules {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
