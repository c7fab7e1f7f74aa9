package httpx

import (
	"context"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/ratelimit"
)

// Injector wraps an endpoint's handler with the faults on demand
// (api/faults, docs/faults.md). Stack calls it once per endpoint, inside
// authentication (so the caller's app is known) and outside the rate
// limit (a request failed on purpose costs no quota).
type Injector interface {
	// Wrap wraps next; limits, when the endpoint is rate limited, sets
	// its rate-limit headers on an answer (nil: none).
	Wrap(e Endpoint, limits LimitHeaders, next http.Handler) http.Handler
}

// LimitHeaders sets an endpoint's rate-limit headers (x-rate-limit-*, and
// its other limits' own) on h for r's counters as they stand, without
// charging r: what an answer given before the rate limit (an injected
// fault) carries, as the platform sends them on every answer of a
// rate-limited endpoint. Nothing is set when the counters cannot be read.
type LimitHeaders func(r *http.Request, h http.Header)

// HeaderPeeker is a Limiter that can report a rule's headers without
// charging a request (*ratelimit.Limiter).
type HeaderPeeker interface {
	Headers(r *http.Request, rule ratelimit.Rule, h http.Header) bool
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
