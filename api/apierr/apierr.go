// Package apierr is Aviary's single catalogue of API errors and the single
// writer that renders them. One *Error value carries everything either
// envelope needs: the core API renders it as RFC 7807 Problem JSON, the
// advertising API as its {errors:[{code,message,parameter}], request} envelope.
// Handlers return or pass an *Error; anything else is logged and rendered as
// an internal error, so a client never sees a raw Go error.
package apierr

import (
	"fmt"
	"net/http"
	"strings"
)

// Problem slugs from the spec ("Errors"). The type URI is {base}/{slug}.
const (
	SlugClientDisconnected        = "client-disconnected"
	SlugClientForbidden           = "client-forbidden"
	SlugConflict                  = "conflict"
	SlugDisallowedResource        = "disallowed-resource"
	SlugDuplicateRules            = "duplicate-rules"
	SlugInvalidRequest            = "invalid-request"
	SlugInvalidRules              = "invalid-rules"
	SlugNoncompliantRules         = "noncompliant-rules"
	SlugNotAuthorizedForField     = "not-authorized-for-field"
	SlugNotAuthorizedForResource  = "not-authorized-for-resource"
	SlugOperationalDisconnect     = "operational-disconnect"
	SlugResourceNotFound          = "resource-not-found"
	SlugResourceUnavailable       = "resource-unavailable"
	SlugRuleCap                   = "rule-cap"
	SlugStreamingConnection       = "streaming-connection"
	SlugUnsupportedAuthentication = "unsupported-authentication"
	SlugUsageCapped               = "usage-capped"
)

// DefaultProblemsBase is the public platform's problems base, so existing
// clients recognise the type URIs.
const DefaultProblemsBase = "https://api.x.com/2/problems"

// ParamError is one entry of an invalid-request problem's errors array.
type ParamError struct {
	Message    string              `json:"message"`
	Parameters map[string][]string `json:"parameters"`
	// Code is the ads error code of this entry when it differs from the
	// error's AdsCode (a missing parameter next to an invalid one).
	Code string `json:"-"`
}

// Error is one API failure. Slug empty means the generic about:blank type.
type Error struct {
	Status int
	Slug   string
	Title  string
	Detail string
	// Extra holds the slug's own fields (resource_id, resource_type, ...).
	Extra map[string]any
	// Params holds invalid-request entries (core) / per-parameter errors (ads).
	Params []ParamError
	// AdsCode is the advertising API's CAPS_CASE error code.
	AdsCode string
	// Header holds response headers to set (for example Retry-After).
	Header http.Header
	// OmitStatus leaves the status member out of the Problem body, for the
	// problems the platform sends without one (usage-capped, credits).
	OmitStatus bool
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Title)
}

// With returns a copy of e with extra slug fields set.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = make(map[string]any, len(e.Extra)+1)
	for k, v := range e.Extra {
		c.Extra[k] = v
	}
	c.Extra[key] = value
	return &c
}

// InvalidRequest reports one or more invalid parameters (HTTP 400).
func InvalidRequest(errs ...ParamError) *Error {
	return &Error{
		Status:  http.StatusBadRequest,
		Slug:    SlugInvalidRequest,
		Title:   "Invalid Request",
		Detail:  "One or more parameters to your request was invalid.",
		Params:  errs,
		AdsCode: "INVALID_PARAMETER",
	}
}

// Param builds a ParamError naming one parameter and the values it had.
func Param(name, message string, values ...string) ParamError {
	if values == nil {
		values = []string{}
	}
	return ParamError{Message: message, Parameters: map[string][]string{name: values}}
}

// InvalidParam is InvalidRequest for a single parameter.
func InvalidParam(name, message string, values ...string) *Error {
	return InvalidRequest(Param(name, message, values...))
}

// MissingParam reports a required parameter that was not sent.
func MissingParam(name string) *Error {
	e := InvalidParam(name, fmt.Sprintf("The `%s` query parameter can not be empty", name))
	e.AdsCode = "MISSING_PARAMETER"
	return e
}

// UnknownParam is the invalid-request entry of a query parameter the
// endpoint does not take; allowed lists the ones it does.
func UnknownParam(name string, allowed []string) ParamError {
	return Param(name, fmt.Sprintf("The query parameter [%s] is not one of [%s]", name, strings.Join(allowed, ",")))
}

// RepeatedParam is the invalid-request entry of a query parameter sent more
// than once; values are the values it was given.
func RepeatedParam(name string, values []string) ParamError {
	return Param(name, fmt.Sprintf("The query parameter [%s] may be given only once", name), values...)
}

// NotFound reports a missing resource (HTTP 404).
func NotFound(resourceType, parameter, value string) *Error {
	return &Error{
		Status:  http.StatusNotFound,
		Slug:    SlugResourceNotFound,
		Title:   "Not Found Error",
		Detail:  fmt.Sprintf("Could not find %s with %s: [%s].", strings.ReplaceAll(resourceType, "_", " "), parameter, value),
		Extra:   map[string]any{"resource_type": resourceType, "resource_id": value, "parameter": parameter, "value": value},
		AdsCode: "NOT_FOUND",
	}
}

// RouteNotFound reports a path no endpoint serves.
func RouteNotFound(path string) *Error {
	return &Error{Status: http.StatusNotFound, Title: "Not Found", Detail: fmt.Sprintf("No endpoint serves %s.", path), AdsCode: "ROUTE_NOT_FOUND"}
}

// MethodNotAllowed reports a known path called with the wrong method.
func MethodNotAllowed(method string, allowed []string) *Error {
	return &Error{
		Status:  http.StatusMethodNotAllowed,
		Title:   "Method Not Allowed",
		Detail:  fmt.Sprintf("%s is not allowed here; use %s.", method, strings.Join(allowed, ", ")),
		AdsCode: "METHOD_NOT_ALLOWED",
		Header:  http.Header{"Allow": {strings.Join(allowed, ", ")}},
	}
}

// Conflict reports a state conflict such as a job already in progress (HTTP 409).
func Conflict(detail string) *Error {
	return &Error{Status: http.StatusConflict, Slug: SlugConflict, Title: "Conflict", Detail: detail, AdsCode: "ACTION_NOT_ALLOWED"}
}

// Unauthorized reports missing or invalid credentials (HTTP 401).
func Unauthorized(detail string) *Error {
	return &Error{Status: http.StatusUnauthorized, Title: "Unauthorized", Detail: detail, AdsCode: "UNAUTHORIZED_ACCESS",
		Header: http.Header{"Www-Authenticate": {`Bearer realm="aviary", OAuth realm="aviary"`}}}
}

// UnsupportedAuthentication reports credentials of the wrong kind for the
// endpoint, for example app-only auth where user context is required (HTTP 403).
func UnsupportedAuthentication(detail string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugUnsupportedAuthentication, Title: "Unsupported Authentication", Detail: detail, AdsCode: "UNAUTHORIZED_ACCESS"}
}

// Forbidden reports an authenticated caller whose app may not use the
// endpoint, for example a read-only access token on an endpoint that writes
// (HTTP 403).
func Forbidden(detail string) *Error {
	return &Error{Status: http.StatusForbidden, Title: "Forbidden", Detail: detail, AdsCode: "READONLY_CLIENT_APPLICATION"}
}

// AccountSuspended reports a request made for a suspended user (HTTP 403).
func AccountSuspended() *Error {
	e := Forbidden("Your account is suspended and is not permitted to access this feature.")
	e.AdsCode = "UNAUTHORIZED_ACCESS"
	return e
}

// NotAuthorizedForResource reports access to a resource the caller may not
// act on (HTTP 403).
func NotAuthorizedForResource(resourceType, id, detail string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugNotAuthorizedForResource, Title: "Forbidden", Detail: detail,
		Extra: map[string]any{"resource_type": resourceType, "resource_id": id}, AdsCode: "ACTION_NOT_ALLOWED"}
}

// TooManyRequests reports an exhausted rate limit (HTTP 429).
func TooManyRequests() *Error {
	return &Error{Status: http.StatusTooManyRequests, Title: "Too Many Requests", Detail: "Too Many Requests", AdsCode: "TOO_MANY_REQUESTS"}
}

// Usage cap periods and scopes of a usage-capped problem, as the platform
// names them.
const (
	PeriodDaily    = "Daily"
	PeriodMonthly  = "Monthly"
	ScopeAccount   = "Account"
	ScopeProduct   = "Product"
	SlugCredits    = "credits"
	productNameTag = "product_name"
)

// UsageCapped reports that the app's monthly usage cap is exhausted (HTTP
// 429), as UsageCappedFor(PeriodMonthly, ScopeProduct, "", "").
func UsageCapped() *Error {
	return UsageCappedFor(PeriodMonthly, ScopeProduct, "", "")
}

// UsageCappedFor is the platform's usage-capped problem (HTTP 429): title
// UsageCapExceeded, the period and scope of the exhausted cap, and, when
// given, the account and product it belongs to. Like the platform's, the
// body carries no status member.
func UsageCappedFor(period, scope, accountID, product string) *Error {
	extra := map[string]any{"period": period, "scope": scope}
	if accountID != "" {
		extra["account_id"] = accountID
	}
	if product != "" {
		extra[productNameTag] = product
	}
	return &Error{Status: http.StatusTooManyRequests, Slug: SlugUsageCapped, Title: "UsageCapExceeded",
		Detail: fmt.Sprintf("Usage cap exceeded: %s %s cap", period, strings.ToLower(scope)), Extra: extra,
		AdsCode: "TOO_MANY_REQUESTS", OmitStatus: true}
}

// CreditsDepleted is the platform's answer to a request of an account
// whose credit balance is used up (HTTP 402 Payment Required, type
// {base}/credits, no status member).
func CreditsDepleted(accountID string) *Error {
	return &Error{Status: http.StatusPaymentRequired, Slug: SlugCredits, Title: "CreditsDepleted",
		Detail:  fmt.Sprintf("Your enrolled account [%s] does not have any credits to fulfill this request.", accountID),
		AdsCode: "PAYMENT_REQUIRED", OmitStatus: true}
}

// PayloadTooLarge reports a request body over the endpoint's cap (HTTP 413).
func PayloadTooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Title: "Payload Too Large",
		Detail: fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit), AdsCode: "INVALID_PARAMETER"}
}

// UnsupportedMediaType reports a body in a content type the endpoint does not take (HTTP 415).
func UnsupportedMediaType(want ...string) *Error {
	return &Error{Status: http.StatusUnsupportedMediaType, Title: "Unsupported Media Type",
		Detail: fmt.Sprintf("The request body must be sent as %s.", strings.Join(want, " or ")), AdsCode: "INVALID_PARAMETER"}
}

// Unavailable reports a dependency outage (HTTP 503); clients should retry.
func Unavailable(detail string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "Service Unavailable", Detail: detail, AdsCode: "SERVICE_UNAVAILABLE",
		Header: http.Header{"Retry-After": {"5"}}}
}

// Internal is the rendering of any unexpected error (HTTP 500).
func Internal() *Error {
	return &Error{Status: http.StatusInternalServerError, Title: "Internal Error", Detail: "Something went wrong. Try again later.", AdsCode: "INTERNAL_ERROR"}
}
