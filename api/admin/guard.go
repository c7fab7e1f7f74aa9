// Package admin guards the operator pages the API listener serves beside
// the API, today the asynq queue dashboard at /admin/queues/. Guard puts
// three checks in front of such a page, in this order:
//
//  1. Same origin: a request that may change something (any method but GET
//     and HEAD) must carry an Origin header, or a Referer when a client
//     sends no Origin, naming this server (the request's own host, or the
//     origin of AVIARY_PUBLIC_URL). A browser holding the admin's basic-auth
//     credential sends it to any page that asks, so without this check any
//     web site the admin visits could pause queues or delete tasks
//     (cross-site request forgery). Refused with 403.
//  2. Login throttle: after Limits.Failures wrong credentials from one
//     client address within Limits.Window, the address is locked out until
//     the window ends: 429 with Retry-After, even for the right password.
//     The counts live in a Throttle; RedisThrottle shares them between API
//     replicas.
//  3. HTTP basic auth against the configured user and password: 401 with a
//     Basic challenge.
//
// The client address is the connection's remote address (an IPv6 address
// counts by its /64 prefix, which one client usually holds whole).
// Forwarded-for headers are not trusted, since any client can send them:
// behind a reverse proxy every client shares the proxy's address, so a
// burst of wrong passwords locks everyone out for the window.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

// Options configure a Guard.
type Options struct {
	// User and Password are the credential; Password must not be empty.
	User, Password string
	// PublicURL is the server's public base URL (AVIARY_PUBLIC_URL); writes
	// whose Origin is its origin are accepted beside the request's own host.
	// Empty accepts only the request's host.
	PublicURL string
	// Throttle counts failed logins; nil counts them in this process only
	// (NewMemoryThrottle with DefaultLimits).
	Throttle Throttle
	// Realm names the basic-auth realm ("aviary admin" when empty).
	Realm string
	// Errors renders refusals (Problem JSON); the zero value will do.
	Errors apierr.Writer
	// Logger records lockouts and throttle failures (slog.Default when nil).
	Logger *slog.Logger
}

// Guard is the middleware described in the package documentation.
type Guard struct {
	user, password [sha256.Size]byte
	public         *url.URL
	throttle       Throttle
	challenge      string
	errors         apierr.Writer
	log            *slog.Logger
}

// New builds a Guard from o.
func New(o Options) (*Guard, error) {
	if o.Password == "" {
		return nil, errors.New("admin: an empty password guards nothing")
	}
	g := &Guard{
		user: sha256.Sum256([]byte(o.User)), password: sha256.Sum256([]byte(o.Password)),
		throttle: o.Throttle, errors: o.Errors, log: o.Logger,
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("admin: public URL %q is not an http(s) URL with a host", o.PublicURL)
		}
		g.public = u
	}
	if g.throttle == nil {
		g.throttle = NewMemoryThrottle(DefaultLimits, nil)
	}
	realm := o.Realm
	if realm == "" {
		realm = "aviary admin"
	}
	g.challenge = `Basic realm=` + strconv.Quote(realm) + `, charset="UTF-8"`
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

// Wrap returns next behind the guard.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.check(r); err != nil {
			g.errors.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// check runs the three checks; nil admits the request.
func (g *Guard) check(r *http.Request) error {
	if err := g.sameOrigin(r); err != nil {
		return err
	}
	client := ClientKey(r)
	ctx := r.Context()
	locked, err := g.throttle.Locked(ctx, client)
	if err != nil {
		return g.throttleDown(ctx, fmt.Errorf("admin: read login failures of %s: %w", client, err))
	}
	if locked > 0 {
		return tooManyFailures(locked)
	}
	user, password, ok := r.BasicAuth()
	if !ok {
		return g.unauthorized() // no attempt: a browser asks first without one
	}
	// Count the attempt before comparing, atomically: concurrent guesses
	// cannot all slip past the lock check above. A right password takes
	// its count back.
	locked, started, err := g.throttle.Fail(ctx, client)
	if err != nil {
		return g.throttleDown(ctx, fmt.Errorf("admin: count a login attempt of %s: %w", client, err))
	}
	if locked > 0 && !started {
		return tooManyFailures(locked) // locked by attempts counted before this one
	}
	if g.matches(user, password) {
		if err := g.throttle.Forgive(ctx, client); err != nil {
			g.log.WarnContext(ctx, "admin: take back a successful login's count", "client", client, "err", err)
		}
		return nil
	}
	if started {
		g.log.WarnContext(ctx, "admin login locked out after repeated failures", "client", client, "path", r.URL.Path, "retry_after", locked)
		return tooManyFailures(locked)
	}
	return g.unauthorized()
}

// throttleDown logs err and refuses the request: without its failure
// counts the guard fails closed (the dashboard needs the same Redis anyway).
func (g *Guard) throttleDown(ctx context.Context, err error) error {
	g.log.ErrorContext(ctx, "admin login throttle unavailable", "err", err)
	return apierr.Unavailable("The admin login throttle is unavailable; try again shortly.")
}

// matches compares the credential in constant time (digests, so neither
// length leaks either).
func (g *Guard) matches(user, password string) bool {
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
	return subtle.ConstantTimeCompare(u[:], g.user[:])&subtle.ConstantTimeCompare(p[:], g.password[:]) == 1
}

func (g *Guard) unauthorized() error {
	return &apierr.Error{Status: http.StatusUnauthorized, Title: "Unauthorized", Detail: "The admin credential is required.",
		AdsCode: "UNAUTHORIZED_ACCESS", Header: http.Header{"Www-Authenticate": {g.challenge}}}
}

func tooManyFailures(wait time.Duration) error {
	e := apierr.TooManyRequests()
	e.Detail = "Too many failed admin logins from this address; try again later."
	e.Header = http.Header{"Retry-After": {strconv.Itoa(int(math.Ceil(wait.Seconds())))}}
	return e
}

// sameOrigin refuses a write whose Origin (else Referer) does not name this
// server, or that names no origin at all.
func (g *Guard) sameOrigin(r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	header, source := "Origin", r.Header.Get("Origin")
	if source == "" {
		header, source = "Referer", r.Header.Get("Referer")
	}
	if source == "" {
		return apierr.Forbidden("A request that changes something must carry an Origin or Referer header naming this server.")
	}
	u, err := url.Parse(source)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return apierr.Forbidden(fmt.Sprintf("The %s header does not name an http(s) origin; cross-site requests are refused.", header))
	}
	if g.sameHost(u, r) || (g.public != nil && sameOrigin(u, g.public)) {
		return nil
	}
	return apierr.Forbidden(fmt.Sprintf("The %s header names another site; cross-site requests are refused.", header))
}

// sameHost reports whether u names the host the request was sent to; over
// TLS it must also be an https origin.
func (g *Guard) sameHost(u *url.URL, r *http.Request) bool {
	if r.TLS != nil && u.Scheme != "https" {
		return false
	}
	return hostPort(u.Scheme, u.Host) == hostPort(u.Scheme, r.Host)
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && hostPort(a.Scheme, a.Host) == hostPort(b.Scheme, b.Host)
}

// hostPort lowercases host and drops the scheme's default port.
func hostPort(scheme, host string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil &&
		((strings.EqualFold(scheme, "http") && port == "80") || (strings.EqualFold(scheme, "https") && port == "443")) {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// ClientKey is the address login failures are counted by: the connection's
// remote IP, an IPv6 one by its /64 prefix.
func ClientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap()
	if addr.Is6() {
		if p, err := addr.Prefix(64); err == nil {
			return p.String()
		}
	}
	return addr.String()
}

// Throttle counts failed logins per client key. Implementations are safe
// for concurrent use.
type Throttle interface {
	// Locked reports how long key stays locked out; 0 when it is not.
	Locked(ctx context.Context, key string) (time.Duration, error)
	// Fail records one login attempt of key, counted as failed until
	// Forgive takes it back, and reports how long key is now locked out (0
	// when it is not, yet) and whether this attempt started the lockout.
	Fail(ctx context.Context, key string) (locked time.Duration, started bool, err error)
	// Forgive takes back one attempt Fail counted (the password was right).
	Forgive(ctx context.Context, key string) error
}

// Limits are a Throttle's rule: Failures failed logins within Window lock
// the client out until the window ends. The window starts at the first
// failure.
type Limits struct {
	Failures int
	Window   time.Duration
}

// DefaultLimits allow five failed logins per client in 15 minutes.
var DefaultLimits = Limits{Failures: 5, Window: 15 * time.Minute}

func (l Limits) orDefault() Limits {
	if l.Failures <= 0 {
		l.Failures = DefaultLimits.Failures
	}
	if l.Window <= 0 {
		l.Window = DefaultLimits.Window
	}
	return l
}
