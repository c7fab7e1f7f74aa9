package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
)

// Doer sends a request (the guarded *outbound.Client). It must not follow
// redirects: a redirect is an answer, and a failing one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// maxCRCBody is the most of a CRC answer that is read.
const maxCRCBody = 64 << 10

// Outcome is the result of one CRC check.
type Outcome struct {
	OK bool
	// Failure says why it failed (stored, logged; never the resolved
	// address of a name).
	Failure string
	// Permanent: a wrong token, a redirect or a TLS error invalidate the
	// webhook at once; other failures (4xx, 5xx, timeouts, connections
	// that fail or close) are transient.
	Permanent bool
}

// Sign is "sha256=" + base64(HMAC-SHA256(key, message)): the CRC's
// response_token of a crc_token under the consumer secret, and (later) a
// delivery's x-twitter-webhooks-signature of its body.
func Sign(key string, message []byte) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(message)
	return "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// NewToken returns a fresh random crc_token.
func NewToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Check sends one CRC check to rawURL, GET with a fresh crc_token, and
// judges the answer against the consumer secret within CRCTimeout.
func Check(ctx context.Context, d Doer, rawURL, consumerSecret string) Outcome {
	ctx, cancel := context.WithTimeout(ctx, CRCTimeout)
	defer cancel()
	token := NewToken()
	req, err := crcRequest(ctx, rawURL, token)
	if err != nil {
		return Outcome{Failure: "the URL cannot be requested", Permanent: true}
	}
	resp, err := d.Do(req)
	if err != nil {
		return transportFailure(err)
	}
	defer resp.Body.Close()
	return judge(resp, Sign(consumerSecret, []byte(token)))
}

// crcRequest is GET rawURL with crc_token added to its query.
func crcRequest(ctx context.Context, rawURL, token string) (*http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("crc_token", token)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// judge checks a CRC answer: 2xx with the right response_token passes;
// 3xx and a 2xx with a wrong or missing token fail for good; other
// statuses are transient.
func judge(resp *http.Response, want string) Outcome {
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		return Outcome{Failure: fmt.Sprintf("the URL redirected (HTTP %d)", resp.StatusCode), Permanent: true}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Outcome{Failure: fmt.Sprintf("the URL answered HTTP %d", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCRCBody))
	if err != nil {
		return transportFailure(err)
	}
	var answer struct {
		ResponseToken string `json:"response_token"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.ResponseToken == "" {
		return Outcome{Failure: "the answer has no response_token", Permanent: true}
	}
	if !hmac.Equal([]byte(answer.ResponseToken), []byte(want)) {
		return Outcome{Failure: "the response_token is wrong", Permanent: true}
	}
	return Outcome{OK: true}
}

// transportFailure judges a request that got no answer: TLS errors are
// permanent, anything else (timeouts, refused or closed connections,
// names that do not resolve or resolve to refused addresses) transient.
func transportFailure(err error) Outcome {
	if isTLS(err) {
		return Outcome{Failure: "TLS error", Permanent: true}
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
		return Outcome{Failure: fmt.Sprintf("no answer within %s", CRCTimeout)}
	}
	return Outcome{Failure: "the URL could not be reached"}
}

// isTLS reports whether err is a TLS handshake or certificate failure.
func isTLS(err error) bool {
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	var record tls.RecordHeaderError
	var echErr *tls.ECHRejectionError
	return errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &record) || errors.As(err, &echErr)
}
