package adsx

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
)

// Route is one ads endpoint. Parameters may come in the query string or,
// on POST and PUT, a form body; Params lists every name the endpoint takes.
type Route struct {
	Pattern string
	// Params are the parameter names the endpoint takes (not path values).
	Params []string
	// Write marks an endpoint that changes data (read-only tokens refused).
	Write bool
	// Limit is a rate limit of the endpoint's own, if any.
	Limit httpx.Limit
	// Body overrides the form body rule (the JSON batch endpoints).
	Body *httpx.Body
	// Handle serves the request with its parsed parameters.
	Handle func(w http.ResponseWriter, r *http.Request, p *Params) error
}

// MaxFormBody caps an ads form body.
const MaxFormBody = 64 << 10

// TotalCountLimit limits list requests with with_total_count=true: 200 per
// 15 minutes per user, as the platform does.
var TotalCountLimit = httpx.Limit{Name: "ads_with_total_count", Requests: 200, Scope: httpx.PerUser, When: wantsTotalCount}

func wantsTotalCount(r *http.Request) bool {
	return strings.EqualFold(r.URL.Query().Get("with_total_count"), "true")
}

// Endpoint builds rt's httpx.Endpoint: OAuth 1.0a user context, the
// parameter list checked on query and form, and the with_total_count
// limit when the endpoint takes that parameter.
func (k Kit) Endpoint(rt Route) httpx.Endpoint {
	req := auth.OAuth1Only
	if rt.Write {
		req = req.Writes()
	}
	e := httpx.Endpoint{Pattern: rt.Pattern, Auth: req, Limit: rt.Limit, Query: rt.Params}
	if e.Limit.Name == "" && slices.Contains(rt.Params, "with_total_count") {
		e.Limit = TotalCountLimit
	}
	if e.Limit.Scope == httpx.PerResource && e.Limit.Resource == "account_id" && e.Limit.When == nil {
		// Charge an account's quota only to callers who may use it, or
		// anyone could use up another account's.
		e.Limit.When = k.mayUseAccount
	}
	method := methodOf(rt.Pattern)
	switch {
	case rt.Body != nil:
		e.Body = *rt.Body
	case method == http.MethodPost || method == http.MethodPut:
		e.Body = httpx.Body{MaxBytes: MaxFormBody, Types: []string{httpx.ContentForm}}
	}
	e.Handle = func(w http.ResponseWriter, r *http.Request) error {
		p, err := readParams(r, rt.Params)
		if err != nil {
			return err
		}
		return rt.Handle(w, r, p)
	}
	return e
}

func methodOf(pattern string) string {
	for i, c := range pattern {
		if c == ' ' {
			return pattern[:i]
		}
	}
	return ""
}

// Endpoints builds the endpoints of routes (see Endpoint).
func (k Kit) Endpoints(routes []Route) []httpx.Endpoint {
	out := make([]httpx.Endpoint, len(routes))
	for i, rt := range routes {
		out[i] = k.Endpoint(rt)
	}
	return out
}

// mayUseAccount reports whether the caller may use the path's account on
// this listener. A store failure counts the request (the limit holds when
// the check cannot be made).
func (k Kit) mayUseAccount(r *http.Request) bool {
	_, err := k.Account(r)
	var refused *apierr.Error
	return err == nil || !errors.As(err, &refused)
}
