package apierr

import "net/http"

// Constructors for the remaining slugs of the spec, each with the fields
// the spec requires of it. Streaming, rules and field-level slugs are used by
// later features; they live here so every envelope shares one catalogue.

// ClientForbidden reports a client that may not make the request (HTTP 403);
// reason is official-client-forbidden or client-not-enrolled.
func ClientForbidden(reason, registrationURL string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugClientForbidden, Title: "Client Forbidden",
		Detail: "This request must be made using an approved developer account that is enrolled in the requested endpoint.",
		Extra:  map[string]any{"reason": reason, "registration_url": registrationURL}, AdsCode: "UNAUTHORIZED_CLIENT_APPLICATION"}
}

// DisallowedResource reports a resource that violates the API's rules;
// resourceType is user, tweet, media, list or space and section data or includes.
func DisallowedResource(resourceID, resourceType, section string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugDisallowedResource, Title: "Disallowed Resource",
		Detail: "The requested resource violates one or more rules of this API.",
		Extra:  map[string]any{"resource_id": resourceID, "resource_type": resourceType, "section": section}, AdsCode: "ACTION_NOT_ALLOWED"}
}

// DuplicateRules reports a submitted rule that duplicates an existing one.
func DuplicateRules(id, value string) *Error {
	return &Error{Status: http.StatusBadRequest, Slug: SlugDuplicateRules, Title: "Duplicate Rules",
		Detail: "A rule with this value already exists.", Extra: map[string]any{"id": id, "value": value}, AdsCode: "INVALID_PARAMETER"}
}

// InvalidRules reports a rule or rule set that is invalid.
func InvalidRules(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Slug: SlugInvalidRules, Title: "Invalid Rules", Detail: detail, AdsCode: "INVALID_PARAMETER"}
}

// NoncompliantRules reports rules that break the product's limits.
func NoncompliantRules(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Slug: SlugNoncompliantRules, Title: "Noncompliant Rules", Detail: detail, AdsCode: "INVALID_PARAMETER"}
}

// RuleCap reports that the rule limit is reached.
func RuleCap(detail string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugRuleCap, Title: "Rule Cap", Detail: detail, AdsCode: "ACTION_NOT_ALLOWED"}
}

// NotAuthorizedForField reports a field the caller may not see.
func NotAuthorizedForField(field, resourceType, section string) *Error {
	return &Error{Status: http.StatusForbidden, Slug: SlugNotAuthorizedForField, Title: "Field Authorization Error",
		Detail: "Sorry, you are not authorized to access the '" + field + "' field.",
		Extra:  map[string]any{"field": field, "resource_type": resourceType, "section": section}, AdsCode: "ACTION_NOT_ALLOWED"}
}

// ResourceUnavailable reports a resource that exists but cannot be served now.
func ResourceUnavailable(resourceType, resourceID, detail string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Slug: SlugResourceUnavailable, Title: "Resource Unavailable", Detail: detail,
		Extra: map[string]any{"resource_type": resourceType, "resource_id": resourceID}, AdsCode: "SERVICE_UNAVAILABLE"}
}

// StreamingConnection reports too many open streaming connections (HTTP 429);
// the connections endpoints clear them.
func StreamingConnection(detail string) *Error {
	return &Error{Status: http.StatusTooManyRequests, Slug: SlugStreamingConnection, Title: "ConnectionException", Detail: detail, AdsCode: "TOO_MANY_REQUESTS"}
}

// OperationalDisconnect reports a stream closed by the service (maintenance, deploys).
func OperationalDisconnect(detail string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Slug: SlugOperationalDisconnect, Title: "Operational Disconnect", Detail: detail, AdsCode: "SERVICE_UNAVAILABLE"}
}

// ClientDisconnected records that the client went away (logged, rarely sent).
func ClientDisconnected() *Error {
	return &Error{Status: 499, Slug: SlugClientDisconnected, Title: "Client Disconnected",
		Detail: "The client disconnected before the response was sent.", AdsCode: "CANCELLED_REQUEST"}
}
