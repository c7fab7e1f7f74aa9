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
)

// String returns "app" or "user".
func (s Scope) String() string {
	if s == PerUser {
		return "user"
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
	// Scope is PerApp or PerUser.
	Scope Scope
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
	case r.Scope != PerApp && r.Scope != PerUser:
		return fmt.Errorf("ratelimit: rule %s: unknown scope %d", r.Name, r.Scope)
	}
	return nil
}

// errConflict is returned when a name is registered with two different rules.
var errConflict = errors.New("ratelimit: rule registered twice with different settings")
