package media

import (
	"fmt"

	"github.com/aviary-dev/aviary/storage"
)

// Names of the processing_info.error codes (storage.MediaError*), as the
// platform's v1.1 API spells them.
const (
	ErrorNameInvalidMedia  = "InvalidMedia"
	ErrorNameLimitExceeded = "LimitExceeded"
	ErrorNameInternal      = "InternalError"
)

// clientError is a failure caused by the uploaded bytes: they are not what
// media_type says, cannot be decoded, or break a limit. The media fails
// with code and message (shown to the client) and the task is not retried.
type clientError struct {
	code    int
	message string
}

func (e *clientError) Error() string { return e.message }

// name is the error name reported with code.
func (e *clientError) name() string {
	if e.code == storage.MediaErrorTooLarge {
		return ErrorNameLimitExceeded
	}
	return ErrorNameInvalidMedia
}

// invalid is a clientError for bytes that are not what media_type says or
// cannot be read.
func invalid(format string, args ...any) error {
	return &clientError{code: storage.MediaErrorInvalidMedia, message: fmt.Sprintf(format, args...)}
}

// tooLarge is a clientError for media over a size, duration or dimension
// limit.
func tooLarge(format string, args ...any) error {
	return &clientError{code: storage.MediaErrorTooLarge, message: fmt.Sprintf(format, args...)}
}

// failedAfterRetries is the client-facing message when every attempt
// failed; the cause is in the worker logs.
func failedAfterRetries(id int64, attempts int) string {
	return fmt.Sprintf("Processing failed after %d attempts. The operator can find the cause in the worker logs (media %d).", attempts, id)
}
