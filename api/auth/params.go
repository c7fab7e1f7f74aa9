package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/aviary-dev/aviary/api/apierr"
)

// MaxFormBody bounds the form body read for signature verification.
const MaxFormBody = 1 << 20

// errMalformedParams marks a form body that cannot be parsed.
var errMalformedParams = errors.New("malformed request parameters")

// requestParams collects the query parameters and, for a single-part
// application/x-www-form-urlencoded body, the body parameters of r
// (RFC 5849 §3.4.1.3.1). The body is read and then restored so the handler
// can read it again. A body over MaxFormBody yields apierr.PayloadTooLarge.
// A query that cannot be parsed (a bad %-escape, a literal ';') is the
// client's request error, not a signature mismatch: apierr.ParseQuery's
// invalid-request (400) naming the parameter, before any signature check.
func requestParams(r *http.Request) (url.Values, error) {
	params, err := apierr.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = url.Values{}
	}
	form, err := formParams(r)
	if err != nil {
		return nil, err
	}
	for name, values := range form {
		params[name] = append(params[name], values...)
	}
	return params, nil
}

func formParams(r *http.Request) (url.Values, error) {
	if r.PostForm != nil {
		return r.PostForm, nil
	}
	if r.Body == nil || r.Body == http.NoBody || !isForm(r.Header.Get("Content-Type")) {
		return nil, nil
	}
	if r.ContentLength > MaxFormBody {
		return nil, apierr.PayloadTooLarge(MaxFormBody)
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("%w: form body: %v", errMalformedParams, err)
	}
	return form, nil
}

// readBody reads at most MaxFormBody bytes of r.Body and puts them back.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxFormBody+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.PayloadTooLarge(tooLarge.Limit)
		}
		return nil, fmt.Errorf("auth: read form body: %w", err)
	}
	if len(body) > MaxFormBody {
		return nil, apierr.PayloadTooLarge(MaxFormBody)
	}
	r.Body = restoredBody{Reader: bytes.NewReader(body), Closer: r.Body}
	return body, nil
}

// restoredBody replays a body that was read, closing the original.
type restoredBody struct {
	io.Reader
	io.Closer
}

func isForm(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/x-www-form-urlencoded"
}
