// Package streams serves the filtered stream (GET /2/tweets/search/stream),
// its rules (/2/tweets/search/stream/rules, rules.go; docs/streams-rules.md)
// and the streaming connections endpoints (/2/connections): docs/streams.md.
//
// One Hub per API process reads the dispatcher's matches from the bus and
// hands each to the local streams of the apps it concerns; the
// connection records in PostgreSQL carry the per-app limit and let any
// replica terminate a stream another replica holds.
package streams

import (
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/validation"
)

// ProblemRenderer renders a problem as embedded in a response's errors
// array (apierr.Writer).
type ProblemRenderer interface {
	ProblemJSON(e *apierr.Error) map[string]any
}

// Defaults of Deps.
const (
	// DefaultRulesMax is how many rules an app may hold: the platform's
	// pay-per-use access.
	DefaultRulesMax = 1000
	// DefaultConnections is the platform's connection limit per app.
	DefaultConnections = 1
	// DefaultKeepAlive is how often an idle stream sends "\r\n".
	DefaultKeepAlive = 20 * time.Second
)

// Deps is what the streaming endpoints need.
type Deps struct {
	// Store keeps the rules and the connection records and hydrates posts.
	Store Store
	// Hub is the process's hub (NewHub, started by cmd); without one the
	// stream endpoint answers operational-disconnect.
	Hub *Hub
	// Log and Rules serve backfill_minutes (events.Log: storage/postgres.DB;
	// RuleSource: the stream rules' store).
	Log   events.Log
	Rules RuleSource
	// Errors renders problems (its ProblemsBase names in-stream errors);
	// Problems renders those embedded in a rules answer's errors.
	Errors    apierr.Writer
	Problems  ProblemRenderer
	Validator *validation.Validator
	Logger    *slog.Logger
	Clock     func() time.Time
	// RulesMax is how many rules an app may hold (AVIARY_STREAM_RULES_MAX;
	// 0: DefaultRulesMax).
	RulesMax int
	// RuleMaxLength is the longest rule value in characters
	// (AVIARY_STREAM_RULE_MAX_LENGTH; 0: streamrules.MaxRuleLength).
	RuleMaxLength int
	// Connections is the open streams an app may hold (AVIARY_STREAM_CONNECTIONS).
	Connections int
	// KeepAlive is the idle interval of "\r\n" (AVIARY_STREAM_KEEPALIVE).
	KeepAlive time.Duration
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the streams feature.
type Module struct {
	Deps
	Hydrator *render.Hydrator
	renders  *renderCache
}

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Problems == nil {
		d.Problems = d.Errors
	}
	if d.Validator == nil {
		d.Validator = validation.New()
	}
	if d.RulesMax <= 0 {
		d.RulesMax = DefaultRulesMax
	}
	if d.RuleMaxLength <= 0 {
		d.RuleMaxLength = streamrules.MaxRuleLength
	}
	if d.Connections <= 0 {
		d.Connections = DefaultConnections
	}
	if d.KeepAlive <= 0 {
		d.KeepAlive = DefaultKeepAlive
	}
	return &Module{Deps: d, Hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}, renders: newRenderCache()}
}

// Routes lists the streaming endpoints: the rules, the stream and the
// connections.
func (m *Module) Routes() []httpx.Endpoint {
	return append(append(append(m.ruleRoutes(), m.streamRoutes()...), m.connectionRoutes()...), m.activityRoutes()...)
}
