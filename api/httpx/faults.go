package httpx

import (
	"context"
	"net/http"
	"time"
)

// Injector wraps an endpoint's handler with the faults on demand
// (api/faults, docs/faults.md). Stack calls it once per endpoint, inside
// authentication (so the caller's app is known) and outside the rate
// limit (a request failed on purpose costs no quota).
type Injector interface {
	Wrap(e Endpoint, next http.Handler) http.Handler
}

type streamEndKey struct{}

// WithStreamEnd marks a streaming request to be ended with the
// operational-disconnect message after the stream was served for after
// (a fault, docs/faults.md).
func WithStreamEnd(ctx context.Context, after time.Duration) context.Context {
	return context.WithValue(ctx, streamEndKey{}, after)
}

// StreamEnd reports whether a fault asks the request's stream to be ended
// with operational-disconnect, and after how long.
func StreamEnd(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(streamEndKey{}).(time.Duration)
	return d, ok
}
