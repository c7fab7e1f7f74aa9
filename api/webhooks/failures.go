package webhooks

import (
	"github.com/aviary-dev/aviary/api/apierr"
)

// Failure reasons, as the platform names them.
const (
	ReasonCRC       = "CrcValidationFailed"
	ReasonURL       = "UrlValidationFailed"
	ReasonDuplicate = "DuplicateUrlFailed"
	ReasonLimit     = "WebhookLimitExceeded"
	ReasonIDInvalid = "WebhookIdInvalid"
	// Replay (POST /2/webhooks/replay).
	ReasonQueryParam     = "QueryParamInvalid"
	ReasonReplayConflict = "ReplayConflictError"
)

// failure is a webhook failure: an invalid-request problem (400) whose
// errors entry names the parameter and whose reason field and message name
// the platform's failure reason (docs/webhooks.md, "Failures").
func failure(reason, param, message, value string) error {
	e := apierr.InvalidRequest(apierr.Param(param, reason+": "+message, value))
	e.Detail = reason + ": " + message
	return e.With("reason", reason)
}
