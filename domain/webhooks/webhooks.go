// Package webhooks holds the platform's webhook rules that the API (at
// registration and on PUT) and the workers (the CRC sweeper, later the
// deliveries) share: which URLs may be registered, how a CRC check is made
// and judged, and when a webhook stops being valid (docs/webhooks.md).
// Requests go through whatever Doer the caller gives, in Aviary always the
// guarded internal/outbound client.
package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Platform figures (docs/webhooks.md).
const (
	// MaxURLLength is the longest URL POST /2/webhooks takes (OpenAPI
	// CreateWebhooksRequest.url).
	MaxURLLength = 200
	// CRCTimeout is how long a receiver has to answer a CRC check.
	CRCTimeout = 10 * time.Second
	// MaxWithoutPass is how long a webhook stays valid through transient
	// failures after its last pass: 24 h plus the platform's 4 h grace.
	MaxWithoutPass = 28 * time.Hour
)

// ErrURL is a URL the rules refuse (the platform's UrlValidationFailed);
// the wrapping error says why.
var ErrURL = errors.New("webhook URL refused")

// Allowed reports whether host:port is on the development allow-list
// (AVIARY_WEBHOOK_ALLOW); nil allows nothing.
type Allowed func(hostPort string) bool

// CheckURL applies the platform's URL rule: an absolute https URL without
// a port, user info or fragment, at most MaxURLLength long. A URL whose
// host:port is allowed may also be http and name a port (a receiver on the
// developer's machine, e.g. http://localhost:3000/webhook).
func CheckURL(raw string, allowed Allowed) error {
	if raw == "" || len(raw) > MaxURLLength {
		return fmt.Errorf("%w: the URL must be 1 to %d characters long", ErrURL, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: the URL is not an absolute URL", ErrURL)
	}
	if u.User != nil || u.Fragment != "" || strings.ContainsAny(raw, " \t\r\n") {
		return fmt.Errorf("%w: the URL may not carry user info, a fragment or white space", ErrURL)
	}
	if allowed != nil && (u.Scheme == "http" || u.Scheme == "https") && allowed(hostPort(u)) {
		return nil
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%w: the URL must use https", ErrURL)
	}
	if u.Port() != "" {
		return fmt.Errorf("%w: the URL may not specify a port", ErrURL)
	}
	return nil
}

// hostPort is the URL's host and port, the scheme's default port when it
// names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// EffectiveValid is whether w is valid at now: stored valid and passed
// within MaxWithoutPass, whether or not a sweeper has run since.
func EffectiveValid(w storage.Webhook, now time.Time) bool {
	return w.Valid && w.LastCRCOKAt != nil && now.Sub(*w.LastCRCOKAt) <= MaxWithoutPass
}

// Record is the storage record of outcome o of a check of w at at: a pass
// makes w valid; a permanent failure makes it invalid; a transient one
// does once w has not passed for MaxWithoutPass.
func Record(w storage.Webhook, o Outcome, at time.Time) storage.WebhookCRC {
	rec := storage.WebhookCRC{ID: w.ID, At: at, OK: o.OK, Failure: o.Failure}
	if !o.OK {
		rec.Invalidate = o.Permanent || w.LastCRCOKAt == nil || at.Sub(*w.LastCRCOKAt) > MaxWithoutPass
	}
	return rec
}
