package httpx

import "net/http"

// Meter meters endpoints' responses (api/usage: usage caps and credits,
// docs/usage-and-credits.md). For each Endpoint the Stack asks it for a
// middleware, placed after authentication and before the rate limit (a
// refused request costs no rate-limit quota); nil leaves the endpoint
// unmetered.
type Meter interface {
	Middleware(e Endpoint) func(http.Handler) http.Handler
}

// BodyObserver is a ResponseWriter that wants to see the value WriteJSON
// encodes, before it is encoded (a Meter's writer counts the posts in it).
type BodyObserver interface {
	ObserveJSON(status int, body any)
}

// observe hands body to the first BodyObserver among w and the writers it
// wraps (Unwrap, as http.ResponseController follows them).
func observe(w http.ResponseWriter, status int, body any) {
	for w != nil {
		if o, ok := w.(BodyObserver); ok {
			o.ObserveJSON(status, body)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}
