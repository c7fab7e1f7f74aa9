package ratelimit

import (
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/api/auth"
)

// subjectOf returns whose counter r is charged to under rule: the resource
// named by r's path value for a PerResource rule, else the caller (false
// when r carries no auth.Principal).
func subjectOf(rule Rule, r *http.Request) (Subject, bool) {
	if rule.Scope == PerResource {
		return resourceSubject(rule, r), true
	}
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		return Subject{}, false
	}
	return SubjectOf(rule, p), true
}

// resourceSubject is the resource a PerResource rule charges r to: the
// non-negative integer in r's path value rule.Resource. Requests naming no
// such id (the handler refuses them anyway) share id 0.
func resourceSubject(rule Rule, r *http.Request) Subject {
	id, err := strconv.ParseInt(r.PathValue(rule.Resource), 10, 64)
	if err != nil || id < 0 {
		id = 0
	}
	return Subject{Kind: rule.Resource, ID: id}
}
