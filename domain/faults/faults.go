// Package faults is the model of Aviary's faults on demand
// (docs/faults.md): a fault names the requests or the work it applies to
// (an endpoint, an app, a probability, a count, an expiry) and what goes
// wrong with them (an error answer as the platform gives it, added
// latency, a stream ended with operational-disconnect, a failed webhook
// CRC check, a failed media upload). Both tiers share it: the API's hook
// matches requests, the workers match their work; the store keeps the
// faults and their hit counts where every process sees them.
package faults

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind is what a fault does.
type Kind string

// The kinds of fault.
const (
	// Status answers the request with Effect.Status and the platform's
	// body for it (429 with rate-limit headers, 503, 500, any other).
	Status Kind = "status"
	// UsageCapped answers 429 usage-capped (UsageCapExceeded).
	UsageCapped Kind = "usage_capped"
	// CreditsDepleted answers 402 CreditsDepleted.
	CreditsDepleted Kind = "credits_depleted"
	// TooManyConnections answers a stream connect 429 streaming-connection
	// (TooManyConnections).
	TooManyConnections Kind = "too_many_connections"
	// Latency only delays the request by Effect.LatencyMS.
	Latency Kind = "latency"
	// Disconnect serves a stream, then ends it after Effect.AfterMS with
	// the operational-disconnect message.
	Disconnect Kind = "operational_disconnect"
	// CRCFailure makes the next webhook CRC check fail (a wrong answer).
	CRCFailure Kind = "crc_failure"
	// CRCTimeout makes the next webhook CRC check time out.
	CRCTimeout Kind = "crc_timeout"
	// MediaFailure makes the media worker fail the next upload it processes.
	MediaFailure Kind = "media_failure"
)

// kinds are the valid kinds; request says which apply to API requests
// (the others apply to work: a CRC check, a media upload).
var kinds = map[Kind]bool{Status: true, UsageCapped: true, CreditsDepleted: true, TooManyConnections: true,
	Latency: true, Disconnect: true, CRCFailure: false, CRCTimeout: false, MediaFailure: false}

// Kinds lists the valid kinds, for messages.
func Kinds() []string {
	return []string{string(Status), string(UsageCapped), string(CreditsDepleted), string(TooManyConnections),
		string(Latency), string(Disconnect), string(CRCFailure), string(CRCTimeout), string(MediaFailure)}
}

// Limits of a fault's numbers.
const (
	MaxLatency = 60 * time.Second
	MaxAfter   = 10 * time.Minute
	MaxCount   = 1_000_000
)

// Match says which requests (or work) a fault applies to. The zero value
// matches everything of the fault's app.
type Match struct {
	// Method is an HTTP method ("" any).
	Method string `json:"method,omitempty"`
	// Route is a route pattern as the endpoint is declared, without the
	// method ("/2/tweets/{id}"); "" any.
	Route string `json:"route,omitempty"`
	// PathPrefix matches request paths starting with it; "" any.
	PathPrefix string `json:"path_prefix,omitempty"`
}

// Effect is what a fault does.
type Effect struct {
	Kind Kind `json:"type"`
	// Status is the answer's status of a Status fault.
	Status int `json:"status,omitempty"`
	// LatencyMS delays the request before the effect (any request kind).
	LatencyMS int `json:"latency_ms,omitempty"`
	// AfterMS is how long a Disconnect fault's stream is served first.
	AfterMS int `json:"after_ms,omitempty"`
	// ResetSeconds is how far in the future a 429's x-rate-limit-reset
	// lies (default 900, the platform's window).
	ResetSeconds int `json:"reset_seconds,omitempty"`
}

// Fault is one fault and its counts.
type Fault struct {
	ID string `json:"id"`
	// AppID is the app whose requests it applies to; 0 for every app
	// (admin only).
	AppID  int64  `json:"app_id,string,omitempty"`
	Match  Match  `json:"match"`
	Effect Effect `json:"effect"`
	// Probability is the chance a matching request is hit (0 < p <= 1).
	Probability float64 `json:"probability"`
	// Count limits the fault to the next Count matching requests (0: no
	// limit); Remaining is how many are left.
	Count     int64     `json:"count,omitempty"`
	Remaining int64     `json:"remaining,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	CreatedAt time.Time `json:"created_at"`
	// Hits counts the requests (or work) the fault was applied to.
	Hits int64 `json:"hits"`
}

// ErrInvalid marks a fault that can not be created; its message says why.
var ErrInvalid = errors.New("invalid fault")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Normalize checks f and fills its defaults (probability 1, method upper
// case, remaining = count).
func (f *Fault) Normalize() error {
	request, ok := kinds[f.Effect.Kind]
	if !ok {
		return invalid("effect.type %q is not one of %s", f.Effect.Kind, strings.Join(Kinds(), ", "))
	}
	if err := f.Effect.check(); err != nil {
		return err
	}
	if !request && (f.Match != Match{}) {
		return invalid("effect.type %q applies to work, not requests: it takes no match", f.Effect.Kind)
	}
	f.Match.Method = strings.ToUpper(f.Match.Method)
	if f.Match.Route != "" && !strings.HasPrefix(f.Match.Route, "/") {
		return invalid("match.route must start with /")
	}
	if f.Match.PathPrefix != "" && !strings.HasPrefix(f.Match.PathPrefix, "/") {
		return invalid("match.path_prefix must start with /")
	}
	if f.Probability == 0 {
		f.Probability = 1
	}
	if f.Probability < 0 || f.Probability > 1 {
		return invalid("probability must be above 0 and at most 1")
	}
	if f.Count < 0 || f.Count > MaxCount {
		return invalid("count must be between 0 and %d", MaxCount)
	}
	f.Remaining = f.Count
	return nil
}

func (e Effect) check() error {
	switch {
	case e.Kind == Status && (e.Status < 400 || e.Status > 599):
		return invalid("effect.status must be between 400 and 599")
	case e.Kind != Status && e.Status != 0:
		return invalid("effect.status is for effect.type status only")
	case e.LatencyMS < 0 || time.Duration(e.LatencyMS)*time.Millisecond > MaxLatency:
		return invalid("effect.latency_ms must be between 0 and %d", MaxLatency.Milliseconds())
	case e.Kind == Latency && e.LatencyMS == 0:
		return invalid("effect.type latency needs effect.latency_ms")
	case e.AfterMS < 0 || time.Duration(e.AfterMS)*time.Millisecond > MaxAfter:
		return invalid("effect.after_ms must be between 0 and %d", MaxAfter.Milliseconds())
	case e.ResetSeconds < 0 || e.ResetSeconds > 86400:
		return invalid("effect.reset_seconds must be between 0 and 86400")
	}
	return nil
}

// ForRequests reports whether the fault applies to API requests (else to
// work: CRC checks, media uploads).
func (f Fault) ForRequests() bool { return kinds[f.Effect.Kind] }

// Active reports whether the fault may still apply at now: not expired
// and, when counted, not used up.
func (f Fault) Active(now time.Time) bool {
	if !f.ExpiresAt.IsZero() && !now.Before(f.ExpiresAt) {
		return false
	}
	return f.Count == 0 || f.Remaining > 0
}

// Request is what a request fault is matched against.
type Request struct {
	AppID int64
	// Method and Pattern are the endpoint's route pattern split
	// ("GET", "/2/tweets/{id}").
	Method, Pattern string
	Path            string
}

// MatchesRequest reports whether f applies to req (ignoring probability,
// expiry and count).
func (f Fault) MatchesRequest(req Request) bool {
	if !f.ForRequests() || (f.AppID != 0 && f.AppID != req.AppID) {
		return false
	}
	m := f.Match
	if m.Method != "" && m.Method != req.Method {
		return false
	}
	if m.Route != "" && m.Route != req.Pattern {
		return false
	}
	return m.PathPrefix == "" || strings.HasPrefix(req.Path, m.PathPrefix)
}

// MatchesWork reports whether f is a fault of kind for work of appID.
func (f Fault) MatchesWork(kind Kind, appID int64) bool {
	return f.Effect.Kind == kind && (f.AppID == 0 || f.AppID == appID)
}

// SplitPattern splits a ServeMux pattern "GET /2/tweets/{id}" into its
// method and path ("" method when it names none).
func SplitPattern(pattern string) (method, path string) {
	if m, p, ok := strings.Cut(pattern, " "); ok {
		return m, strings.TrimSpace(p)
	}
	return "", pattern
}

// StatusText is the title the platform gives an error status.
func StatusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "Error"
}
