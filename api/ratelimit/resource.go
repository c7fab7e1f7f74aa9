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

// resourceSubject is the resource a PerResource rule charges r to: r's
// path value rule.Resource, a core id (non-negative integer) or an opaque
// ads id (1 to 64 of [0-9A-Za-z_-]). Requests naming no such id (the
// handler refuses them anyway) share id 0.
func resourceSubject(rule Rule, r *http.Request) Subject {
	v := r.PathValue(rule.Resource)
	id, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil && id >= 0:
		return Subject{Kind: rule.Resource, ID: id}
	case err != nil && opaqueID(v):
		return Subject{Kind: rule.Resource, Name: v}
	}
	return Subject{Kind: rule.Resource}
}

// opaqueID reports whether s can be an ads id and so a counter name.
func opaqueID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
