// Package ratelimit enforces per-endpoint request limits shared by every API
// replica through Redis.
//
// Algorithm: fixed windows aligned to the Unix epoch. A rule with Window W
// counts requests in [k·W, (k+1)·W); the counter lives at
//
//	{prefix}rl:{rule}:app:{app-id}:{window-start-unix-seconds}               (per app)
//	{prefix}rl:{rule}:app:{app-id}:user:{user-id}:{window-start-unix-seconds} (per user)
//
// and is created with a TTL of the rest of the window plus a grace period.
// Per-user limits count each user and app pair, as the platform's do: a
// user's requests through two apps never share a window.
// A Lua script reads the counter and increments it only while it is below
// the limit, atomically, so concurrent replicas never admit more than Limit
// requests per window and rejected requests do not inflate the count. A
// replica takes a busy counter's requests a few at a time (lease.go: about
// 50 ms of its recent traffic, at most a sixteenth of what is left) and
// admits them from memory; Run gives back what a replica took and did not
// use. Remaining is exact with one replica and off by at most a lease per
// other replica with several. Fixed
// windows are what the platform's x-rate-limit-reset header describes (one
// reset instant per window); the trade-off is that a client can burst up to
// 2·Limit across a window boundary.
//
// Responses carry x-rate-limit-limit, x-rate-limit-remaining and
// x-rate-limit-reset (Unix seconds when the window ends), or the rule's own
// headers (Rule.Headers: x-app-limit-24hour-* and x-user-limit-24hour-*
// for the 24-hour limits of post creation). An exhausted limit
// is answered with apierr.TooManyRequests (429), with Retry-After (seconds
// until the window resets, rounded up), without calling the handler.
//
// When Redis cannot be reached the limiter fails OPEN: the request is served
// without rate-limit headers and a warning is logged at most once a minute.
// An outage of the limiter's store should degrade protection, not take the
// whole API down with it.
package ratelimit
