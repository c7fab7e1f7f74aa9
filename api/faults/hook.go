// Package faults serves Aviary's faults on demand (docs/faults.md): the
// /_aviary/faults endpoints that create, list, delete and clear them, and
// the hook (httpx.Injector) that makes matching requests fail the way the
// platform fails. The faults live in a Store every replica and worker
// shares (storage/faultsredis); each process keeps a snapshot of them for
// a short while, so a request costs one atomic load and a clock read when
// no fault is set.
package faults

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/faults"
)

// Store keeps the faults where every process sees them
// (storage/faultsredis.Store).
type Store interface {
	Create(ctx context.Context, f faults.Fault) (faults.Fault, error)
	List(ctx context.Context) ([]faults.Fault, error)
	Delete(ctx context.Context, id string) (bool, error)
	Clear(ctx context.Context, appID int64) (int, error)
	// Hit counts one application of f; false when it may no longer apply
	// (deleted, or its count used up elsewhere).
	Hit(ctx context.Context, f faults.Fault) (bool, error)
}

// DefaultRefresh is how long a process uses its snapshot of the faults
// before reading them again.
const DefaultRefresh = time.Second

// refreshTimeout bounds one read of the faults.
const refreshTimeout = 2 * time.Second

// Deps is what the faults module needs.
type Deps struct {
	Store Store
	// Auth verifies the app-scoped callers' bearer tokens.
	Auth httpx.Authorizer
	// Admin guards the admin callers (api/admin.Guard.Wrap: basic auth
	// with AVIARY_ADMIN_PASSWORD); nil serves no admin callers.
	Admin  func(http.Handler) http.Handler
	Errors apierr.Writer
	Logger *slog.Logger
	Clock  func() time.Time
	// Refresh is how long a snapshot of the faults is used (DefaultRefresh
	// when 0).
	Refresh time.Duration
	// Random draws a number in [0, 1) for a fault's probability
	// (math/rand/v2 when nil).
	Random func() float64
}

// snapshot is the process's copy of the request faults.
type snapshot struct {
	faults []faults.Fault
}

// Module is the faults feature and hook.
type Module struct {
	Deps
	snap       atomic.Pointer[snapshot]
	refreshing atomic.Bool
	// stale is set by a timer Refresh after the snapshot was read (no
	// clock read per request: the hook's cost when no fault is set is
	// two atomic loads).
	stale atomic.Bool
}

// New builds the module.
func New(d Deps) *Module {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Refresh <= 0 {
		d.Refresh = DefaultRefresh
	}
	if d.Random == nil {
		d.Random = rand.Float64
	}
	return &Module{Deps: d}
}

// Clear removes every fault (a state reset calls it).
func (m *Module) Clear(ctx context.Context) (int, error) {
	n, err := m.Store.Clear(ctx, 0)
	m.Reload(ctx)
	return n, err
}

// Reload reads the faults now (after this process changed them).
func (m *Module) Reload(ctx context.Context) {
	all, err := m.Store.List(ctx)
	if err != nil {
		m.Logger.WarnContext(ctx, "faults: reading the faults failed; keeping the last ones", "err", err)
		return
	}
	var req []faults.Fault
	for _, f := range all {
		if f.ForRequests() {
			req = append(req, f)
		}
	}
	m.snap.Store(&snapshot{faults: req})
	m.stale.Store(false)
	time.AfterFunc(m.Refresh, func() { m.stale.Store(true) })
}

// current is the snapshot of the request faults; a stale one is used
// while one goroutine reads them again.
func (m *Module) current() []faults.Fault {
	s := m.snap.Load()
	if s == nil || m.stale.Load() {
		m.refresh()
	}
	if s == nil {
		return nil
	}
	return s.faults
}

// refresh reads the faults in the background, once at a time.
func (m *Module) refresh() {
	if !m.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer m.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		m.Reload(ctx)
	}()
}

// Wrap is the hook (httpx.Injector): next unless a fault applies to the
// request. Aviary's own endpoints (/_aviary/) are never faulted.
func (m *Module) Wrap(e httpx.Endpoint, limits httpx.LimitHeaders, next http.Handler) http.Handler {
	method, pattern := faults.SplitPattern(e.Pattern)
	if strings.HasPrefix(pattern, "/_aviary/") {
		return next
	}
	limit := e.Limit.Requests
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs := m.current()
		if len(fs) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		f, ok := m.pick(r, fs, faults.Request{Method: method, Pattern: pattern, Path: r.URL.Path})
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		m.apply(w, r, f, limit, limits, next)
	})
}

// pick is the first fault that applies to the request, its hit counted.
func (m *Module) pick(r *http.Request, fs []faults.Fault, req faults.Request) (faults.Fault, bool) {
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		req.AppID = p.App.ID
	}
	now := m.Clock()
	for _, f := range fs {
		if !f.MatchesRequest(req) || !f.Active(now) || m.Random() >= f.Probability {
			continue
		}
		ok, err := m.Store.Hit(r.Context(), f)
		if err != nil {
			m.Logger.WarnContext(r.Context(), "faults: counting a hit failed; the request is served", "fault", f.ID, "err", err)
			return faults.Fault{}, false
		}
		if ok {
			return f, true
		}
	}
	return faults.Fault{}, false
}

// apply does what f says to the request.
func (m *Module) apply(w http.ResponseWriter, r *http.Request, f faults.Fault, limit int, limits httpx.LimitHeaders, next http.Handler) {
	m.Logger.InfoContext(r.Context(), "fault applied", "fault", f.ID, "type", f.Effect.Kind, "path", r.URL.Path)
	if d := time.Duration(f.Effect.LatencyMS) * time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the client went
		}
	}
	switch f.Effect.Kind {
	case faults.Latency:
		next.ServeHTTP(w, r)
	case faults.Disconnect:
		after := time.Duration(f.Effect.AfterMS) * time.Millisecond
		next.ServeHTTP(w, r.WithContext(httpx.WithStreamEnd(r.Context(), after)))
	default:
		m.Errors.Write(w, r, withLimits(r, Answer(f, limit, m.Clock(), appOf(r)), limits))
	}
}

// withLimits adds the endpoint's rate-limit headers as they stand (the
// platform sends them on every answer of a rate-limited endpoint, its
// failures too) to e; an injected 429's own x-rate-limit-* win.
func withLimits(r *http.Request, e *apierr.Error, limits httpx.LimitHeaders) *apierr.Error {
	if limits == nil {
		return e
	}
	h := http.Header{}
	limits(r, h)
	for k, v := range e.Header {
		h[k] = v
	}
	e.Header = h
	return e
}

func appOf(r *http.Request) int64 {
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		return p.App.ID
	}
	return 0
}

// Answer is the error a fault's request is answered with, as the platform
// answers it: limit is the endpoint's rate limit (a 429's
// x-rate-limit-limit), app the caller's app.
func Answer(f faults.Fault, limit int, now time.Time, app int64) *apierr.Error {
	switch f.Effect.Kind {
	case faults.UsageCapped:
		return usageCapped()
	case faults.CreditsDepleted:
		return creditsDepleted(app)
	case faults.TooManyConnections:
		return apierr.StreamingConnection("This stream is currently at the maximum allowed connection limit.").
			With("connection_issue", "TooManyConnections")
	}
	switch f.Effect.Status {
	case http.StatusTooManyRequests:
		return rateLimited(limit, now, f.Effect.ResetSeconds)
	case http.StatusServiceUnavailable:
		return &apierr.Error{Status: http.StatusServiceUnavailable, Title: "Service Unavailable", Detail: "Service Unavailable",
			AdsCode: "SERVICE_UNAVAILABLE"}
	case http.StatusInternalServerError:
		return internalError()
	}
	text := faults.StatusText(f.Effect.Status)
	return &apierr.Error{Status: f.Effect.Status, Title: text, Detail: text, AdsCode: adsCode(f.Effect.Status)}
}

// rateLimited is the platform's 429 with its x-rate-limit headers: the
// endpoint's limit, nothing remaining, reset after resetSeconds (the
// platform's 15-minute window when 0).
func rateLimited(limit int, now time.Time, resetSeconds int) *apierr.Error {
	if limit <= 0 {
		limit = 1
	}
	if resetSeconds <= 0 {
		resetSeconds = int(httpx.Window / time.Second)
	}
	e := apierr.TooManyRequests()
	e.Header = http.Header{
		"X-Rate-Limit-Limit":     {strconv.Itoa(limit)},
		"X-Rate-Limit-Remaining": {"0"},
		"X-Rate-Limit-Reset":     {strconv.FormatInt(now.Add(time.Duration(resetSeconds)*time.Second).Unix(), 10)},
	}
	return e
}

// usageCapped is the platform's 429 usage-capped problem.
func usageCapped() *apierr.Error {
	return &apierr.Error{Status: http.StatusTooManyRequests, Slug: apierr.SlugUsageCapped, Title: "UsageCapExceeded",
		Detail: "Usage cap exceeded: Monthly product cap", AdsCode: "TOO_MANY_REQUESTS",
		Extra: map[string]any{"period": "Monthly", "scope": "Product"}}
}

// slugInternalError is the type of the platform's 500 problem
// (InternalErrorProblem in the OpenAPI description).
const slugInternalError = "internal-error"

// internalError is the platform's 500 problem: Aviary's own internal
// error answer, typed as the platform types it.
func internalError() *apierr.Error {
	e := apierr.Internal()
	e.Slug = slugInternalError
	return e
}

// slugCredits is the problem type of the platform's 402 answer.
const slugCredits = "credits"

// creditsDepleted is the platform's 402 CreditsDepleted problem.
func creditsDepleted(app int64) *apierr.Error {
	id := strconv.FormatInt(app, 10)
	return &apierr.Error{Status: http.StatusPaymentRequired, Slug: slugCredits, Title: "CreditsDepleted",
		Detail:  "Your enrolled account [" + id + "] does not have any credits to fulfill this request.",
		AdsCode: "PAYMENT_REQUIRED", Extra: map[string]any{"account_id": app}}
}

// adsCode is the ads envelope's code of an injected status.
func adsCode(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "UNAUTHORIZED_ACCESS"
	case status == http.StatusForbidden:
		return "UNAUTHORIZED_ACCESS"
	case status == http.StatusNotFound:
		return "NOT_FOUND"
	case status >= 500:
		return "INTERNAL_ERROR"
	}
	return "INVALID_PARAMETER"
}
