package adsx

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
)

// Ads error codes (docs/ads-errors.md); the HTTP status of each is the
// platform's.
const (
	CodeInvalidParameter    = "INVALID_PARAMETER"
	CodeMissingParameter    = "MISSING_PARAMETER"
	CodeExclusiveParameters = "EXCLUSIVE_PARAMETERS"
	CodeAccountNotFound     = "ACCOUNT_NOT_FOUND"
	CodeNotFound            = "NOT_FOUND"
	CodeActionNotAllowed    = "ACTION_NOT_ALLOWED"
	CodeFeatureNotAvailable = "FEATURE_NOT_AVAILABLE"
)

// Invalid reports one invalid parameter (400 INVALID_PARAMETER).
func Invalid(name, message string, value ...string) *apierr.Error {
	return apierr.InvalidParam(name, message, value...)
}

// Missing reports a required parameter that was not sent (400
// MISSING_PARAMETER).
func Missing(name string) *apierr.Error {
	e := apierr.InvalidParam(name, fmt.Sprintf("%s is missing", name))
	e.AdsCode = CodeMissingParameter
	return e
}

// Exclusive reports two parameters that may not be sent together (400
// EXCLUSIVE_PARAMETERS), naming the second.
func Exclusive(first, second string) *apierr.Error {
	e := apierr.InvalidParam(second, fmt.Sprintf("%s and %s are exclusive parameters", first, second))
	e.AdsCode = CodeExclusiveParameters
	return e
}

// AccountNotFound is the answer for an account the caller may not use,
// whether it exists or not (403 ACCOUNT_NOT_FOUND, the platform's status).
func AccountNotFound(id string) *apierr.Error {
	e := &apierr.Error{Status: http.StatusForbidden, Title: "Account not found",
		Detail: fmt.Sprintf("Account %s was not found or is not accessible", id), AdsCode: CodeAccountNotFound}
	e.Params = []apierr.ParamError{apierr.Param("account_id", e.Detail, id)}
	return e
}

// NotFound reports a missing entity of the account: code is its
// *_NOT_FOUND code (404), param the parameter that named it.
func NotFound(code, param, id string) *apierr.Error {
	noun := strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(code, "_NOT_FOUND"), "_", " "))
	if code == CodeNotFound {
		noun = strings.ReplaceAll(strings.TrimSuffix(param, "_id"), "_", " ")
	}
	e := &apierr.Error{Status: http.StatusNotFound, Title: "Not Found",
		Detail: fmt.Sprintf("The %s %s does not exist", noun, id), AdsCode: code}
	e.Params = []apierr.ParamError{apierr.Param(param, e.Detail, id)}
	return e
}

// NotAllowed reports an action the entity's state forbids (403
// ACTION_NOT_ALLOWED).
func NotAllowed(message string) *apierr.Error {
	return &apierr.Error{Status: http.StatusForbidden, Title: "Forbidden", Detail: message, AdsCode: CodeActionNotAllowed}
}

// FeatureNotAvailable reports an account without a feature the request
// needs (400 FEATURE_NOT_AVAILABLE).
func FeatureNotAvailable(feature string) *apierr.Error {
	return &apierr.Error{Status: http.StatusBadRequest, Title: "Feature not available",
		Detail: fmt.Sprintf("The account does not have the %s feature", feature), AdsCode: CodeFeatureNotAvailable}
}

// RepeatedKeys refuses a JSON body in which an object gives a field name
// twice (httpx.RepeatedKey: names compared without regard to case), as
// every JSON body is refused: 400 INVALID_PARAMETER naming the second one
// under root ("operations" and `[0].operation_type` give
// `operations[0].operation_type`).
func RepeatedKeys(body []byte, root string) error {
	path, ok := httpx.RepeatedKey(body)
	if !ok {
		return nil
	}
	name := root + path
	if root != "" && !strings.HasPrefix(path, "[") {
		name = root + "." + path
	}
	return Invalid(name, fmt.Sprintf("%s is given more than once (field names are matched without regard to case)", name))
}

// ReadJSONBody reads a JSON request body for its decoder: valid UTF-8 and
// no repeated field name (RepeatedKeys), else 400 INVALID_PARAMETER on
// "body" (or the repeated name).
func ReadJSONBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, httpx.BodyReadError(r.Context(), err)
	}
	if !utf8.Valid(raw) {
		return nil, Invalid("body", "The request body must be valid UTF-8")
	}
	if err := RepeatedKeys(raw, ""); err != nil {
		return nil, err
	}
	return raw, nil
}
