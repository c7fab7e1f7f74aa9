// Package httpx is the kit every API feature builds its endpoints with. An
// Endpoint states, with keyed fields, everything the server enforces before
// the handler runs: the caller's credentials (auth.Requirement), the rate
// limit, the query parameters it takes and its body rules (size cap and
// content types). Handlers then read the same way everywhere: decode and
// validate (Bind for bodies, ReadQuery for queries, PathID, Fields), store, enqueue, answer
// (WriteJSON). A handler returns an error and Stack renders it once, in the
// request's envelope, through the apierr catalogue.
package httpx

import (
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
)

// HandlerFunc is an endpoint body; a returned error is rendered by the
// apierr writer in the request's envelope.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Endpoint describes one API route.
type Endpoint struct {
	// Pattern is the net/http ServeMux pattern, "METHOD /path/{id}".
	Pattern string
	// Auth is what the caller must present (credential kinds, write access).
	Auth auth.Requirement
	// Limit is the endpoint's rate limit; the zero value means none.
	Limit Limit
	// Query lists the query parameters the endpoint takes; any other one,
	// or one of these given twice, is answered with invalid-request.
	Query []string
	// Body is what the endpoint accepts as a request body; the zero value
	// accepts none (the body is not read).
	Body Body
	// Response, if set, is a value of the endpoint's success response
	// type; the OpenAPI description Aviary serves (api/selfdoc) derives
	// the response schema from it by reflection where the platform's
	// description has none (docs/openapi.md).
	Response any
	// Handle is the handler.
	Handle HandlerFunc
}

// Window is the platform's standard rate-limit window.
const Window = 15 * time.Minute

// Rate-limit scopes, re-exported so features need not import ratelimit.
const (
	// PerApp counts all requests of a developer app together.
	PerApp = ratelimit.PerApp
	// PerUser counts the requests an app makes for each user separately.
	PerUser = ratelimit.PerUser
	// PerResource counts the requests for each resource separately (the id
	// in the path value Limit.Resource), whoever makes them; the scope of
	// public endpoints (auth.Signed), which have no caller to count. Their
	// Verify runs first, so forged requests cost a resource no quota.
	PerResource = ratelimit.PerResource
)

// Limit is an endpoint's rate limit: Requests per Window (default the
// platform's 15 minutes), counted per Scope. Endpoints that share a Name
// share one counter.
type Limit struct {
	Name     string
	Requests int
	Window   time.Duration
	Scope    ratelimit.Scope
	// Resource is the path wildcard naming the resource a PerResource limit
	// counts by (for example "id" in "/2/compliance/jobs/{id}/upload").
	Resource string
	// When, if set, limits only the requests it reports true for (the ads
	// lists' with_total_count=true); the others pass uncounted.
	When func(r *http.Request) bool
	// Headers is the prefix of the response headers reporting this count
	// (ratelimit.Rule.Headers); empty means x-rate-limit.
	Headers string
	// Also are further limits every request this one admits counts
	// against, checked after it in order, each with its own Name, Window,
	// Scope and Headers (the 24-hour limits of POST /2/tweets). Their own
	// When and Also are ignored.
	Also []Limit
}

// Response header prefixes of a Limit, re-exported from ratelimit.
const (
	// HeadersApp24Hour reports an app's 24-hour limit: x-app-limit-24hour-*.
	HeadersApp24Hour = ratelimit.HeadersApp24Hour
	// HeadersUser24Hour reports a user's 24-hour limit: x-user-limit-24hour-*.
	HeadersUser24Hour = ratelimit.HeadersUser24Hour
)

// Content types a Body may accept.
const (
	ContentJSON      = "application/json"
	ContentForm      = "application/x-www-form-urlencoded"
	ContentMultipart = "multipart/form-data"
)

// DefaultMaxBody is the body cap of JSON endpoints that do not set one.
const DefaultMaxBody = 1 << 20

// Body is an endpoint's request-body rule.
type Body struct {
	// MaxBytes caps the body; a larger one is answered with 413.
	MaxBytes int64
	// Types are the accepted media types, the first being assumed when the
	// request sends no Content-Type; another one is answered with 415.
	Types []string
}

// JSONBody accepts a JSON object of at most maxBytes.
func JSONBody(maxBytes int64) Body {
	return Body{MaxBytes: maxBytes, Types: []string{ContentJSON}}
}

// accepts reports whether the rule admits a request body at all.
func (b Body) accepts() bool { return len(b.Types) > 0 }
