// Package streams serves the filtered stream: its rules
// (/2/tweets/search/stream/rules, rules.go; docs/streams-rules.md) and,
// beside them, the stream itself and its connections (docs/streams.md).
package streams

import (
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/validation"
)

// ProblemRenderer renders a problem as embedded in a response's errors
// array (apierr.Writer).
type ProblemRenderer interface {
	ProblemJSON(e *apierr.Error) map[string]any
}

// Store is the record access of the feature (storage/postgres.DB).
type Store interface {
	RulesStore
}

// Default caps of an app's rules: the platform's pay-per-use access.
const (
	DefaultRulesMax = 1000
)

// Deps is what the stream endpoints need.
type Deps struct {
	Store     Store
	Validator *validation.Validator
	Problems  ProblemRenderer
	Logger    *slog.Logger
	Clock     func() time.Time
	// RulesMax is how many rules an app may hold (AVIARY_STREAM_RULES_MAX;
	// 0: DefaultRulesMax).
	RulesMax int
	// RuleMaxLength is the longest rule value in characters
	// (AVIARY_STREAM_RULE_MAX_LENGTH; 0: streamrules.MaxRuleLength).
	RuleMaxLength int
}

// Module is the filtered-stream feature.
type Module struct{ Deps }

// New builds the module.
func New(d Deps) *Module {
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.RulesMax <= 0 {
		d.RulesMax = DefaultRulesMax
	}
	if d.RuleMaxLength <= 0 {
		d.RuleMaxLength = streamrules.MaxRuleLength
	}
	return &Module{Deps: d}
}

// Routes lists the feature's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return m.ruleRoutes()
}
