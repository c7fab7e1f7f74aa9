// Package streamrules is the filtered stream's rule language: the search
// query language (domain/searchquery) with the stream's own constraints,
// and the matcher that decides which rules a new post satisfies.
package streamrules

import (
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Set is a compiled set of rules of any number of apps.
// CONTRACT PLACEHOLDER: replaced by the real matcher (helper "rules").
type Set struct {
	rules []storage.StreamRule
}

// NewSet compiles rules; a rule whose value does not parse is left out.
func NewSet(rules []storage.StreamRule) *Set { return &Set{rules: rules} }

// Match returns the rules p satisfies, ordered by app then rule id.
func (s *Set) Match(p events.Post) []events.RuleHit { return nil }
