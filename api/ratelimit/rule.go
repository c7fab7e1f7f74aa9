package ratelimit

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Scope selects whose requests a rule counts together.
type Scope int

const (
	// PerApp counts all requests of a developer app together.
	PerApp Scope = iota
	// PerUser counts the requests an app makes for each user separately;
	// app-only requests (no user) are counted per app.
	PerUser
	// PerResource counts the requests for each resource separately, whoever
	// makes them: the resource is the numeric id in the request's path value
	// Rule.Resource (requests naming no valid id share one count). It needs
	// no Principal, so public endpoints (signed URLs) use it.
	PerResource
)

// String returns "app", "user" or "resource".
func (s Scope) String() string {
	switch s {
	case PerUser:
		return "user"
	case PerResource:
		return "resource"
	}
	return "app"
}

// Rule is one endpoint's limit: at most Limit requests per Window.
type Rule struct {
	// Name identifies the counter; rules with the same name share counts.
	// It must be non-empty and must not contain ':' or whitespace.
	Name string
	// Limit is the number of requests allowed per window (at least 1).
	Limit int
	// Window is the window length, a whole number of seconds.
	Window time.Duration
	// Scope is PerApp, PerUser or PerResource.
	Scope Scope
	// Resource names the path value holding the resource id of a
	// PerResource rule (for example "id"); empty for the other scopes.
	Resource string
	// Headers is the prefix of the response headers reporting the rule's
	// count: {Headers}-Limit, -Remaining and -Reset. Empty means
	// x-rate-limit (HeadersRateLimit); the 24-hour limits of post
	// creation use HeadersApp24Hour and HeadersUser24Hour.
	Headers string
}

// Response header prefixes of a Rule (Rule.Headers).
const (
	// HeadersRateLimit: x-rate-limit-limit, -remaining, -reset (the default).
	HeadersRateLimit = "X-Rate-Limit"
	// HeadersApp24Hour: x-app-limit-24hour-limit, -remaining, -reset, an
	// app's 24-hour limit as the platform reports it (twitter-api-v2 reads
	// them into rateLimit.day).
	HeadersApp24Hour = "X-App-Limit-24hour"
	// HeadersUser24Hour: x-user-limit-24hour-limit, -remaining, -reset, a
	// user's 24-hour limit (twitter-api-v2: rateLimit.userDay).
	HeadersUser24Hour = "X-User-Limit-24hour"
)

// headerPrefix is r's header prefix (HeadersRateLimit when unset).
func (r Rule) headerPrefix() string {
	if r.Headers == "" {
		return HeadersRateLimit
	}
	return r.Headers
}

// Validate reports why r cannot be enforced, if it cannot.
func (r Rule) Validate() error {
	switch {
	case r.Name == "" || strings.ContainsAny(r.Name, ": \t\r\n"):
		return fmt.Errorf("ratelimit: rule name %q must be non-empty without ':' or spaces", r.Name)
	case r.Limit < 1:
		return fmt.Errorf("ratelimit: rule %s: limit %d must be at least 1", r.Name, r.Limit)
	case r.Window < time.Second || r.Window%time.Second != 0:
		return fmt.Errorf("ratelimit: rule %s: window %v must be a whole number of seconds", r.Name, r.Window)
	case r.Scope != PerApp && r.Scope != PerUser && r.Scope != PerResource:
		return fmt.Errorf("ratelimit: rule %s: unknown scope %d", r.Name, r.Scope)
	case (r.Scope == PerResource) != (r.Resource != ""):
		return fmt.Errorf("ratelimit: rule %s: a per-resource rule, and only one, names its resource path value", r.Name)
	case strings.ContainsAny(r.Resource, ": \t\r\n"):
		return fmt.Errorf("ratelimit: rule %s: resource %q must not contain ':' or spaces", r.Name, r.Resource)
	case !headerToken(r.Headers):
		return fmt.Errorf("ratelimit: rule %s: header prefix %q must be letters, digits and '-'", r.Name, r.Headers)
	}
	return nil
}

// errConflict is returned when a name is registered with two different rules.
var errConflict = errors.New("ratelimit: rule registered twice with different settings")

// headerToken reports whether s is empty or can start a header name:
// letters, digits and '-'.
func headerToken(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
