package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// Envelope selects how errors are rendered for a request.
type Envelope int

const (
	// Core renders Problem JSON (application/problem+json).
	Core Envelope = iota
	// Ads renders the advertising API's errors envelope.
	Ads
)

type envelopeKey struct{}

// WithEnvelope marks the request context with the envelope its errors use.
func WithEnvelope(ctx context.Context, e Envelope) context.Context {
	return context.WithValue(ctx, envelopeKey{}, e)
}

// EnvelopeOf returns the envelope set by WithEnvelope (Core by default).
func EnvelopeOf(ctx context.Context) Envelope {
	e, _ := ctx.Value(envelopeKey{}).(Envelope)
	return e
}

// Writer renders errors. The zero value uses DefaultProblemsBase and slog.Default.
type Writer struct {
	ProblemsBase string
	Logger       *slog.Logger
}

// unavailableDetail is the detail of the 503 a dependency outage gets.
const unavailableDetail = "A service this request depends on is unavailable. Try again later."

// Write renders err in the request's envelope. An error wrapping
// storage.ErrUnavailable (a dependency that is down or did not answer in
// time), or an expired deadline that no storage call translated (a
// transaction's BEGIN waiting for a connection under load), is logged as a warning and rendered as Unavailable (503 with
// Retry-After); any other error that is not *Error is logged with the
// request context and rendered as Internal.
func (w Writer) Write(rw http.ResponseWriter, r *http.Request, err error) {
	var apiErr *Error
	switch {
	case errors.As(err, &apiErr):
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		logctx.OrDefault(w.Logger).WarnContext(r.Context(), "dependency unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		apiErr = Unavailable(unavailableDetail)
	default:
		logctx.OrDefault(w.Logger).ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		apiErr = Internal()
	}
	for k, vs := range apiErr.Header {
		rw.Header()[k] = vs
	}
	noteProblem(rw, w, apiErr)
	if EnvelopeOf(r.Context()) == Ads {
		writeJSON(rw, "application/json; charset=utf-8", apiErr.Status, adsBody(apiErr, r))
		return
	}
	writeJSON(rw, "application/problem+json", apiErr.Status, w.problemBody(apiErr))
}

// TypeURI returns the Problem type URI of a slug.
func (w Writer) TypeURI(slug string) string {
	if slug == "" {
		return "about:blank"
	}
	base := w.ProblemsBase
	if base == "" {
		base = DefaultProblemsBase
	}
	return strings.TrimRight(base, "/") + "/" + slug
}

func (w Writer) problemBody(e *Error) map[string]any {
	body := make(map[string]any, len(e.Extra)+5)
	for k, v := range e.Extra {
		body[k] = v
	}
	body["type"] = w.TypeURI(e.Slug)
	body["title"] = e.Title
	if e.Status != 0 && !e.OmitStatus { // problems embedded in a 200 response's errors carry none
		body["status"] = e.Status
	}
	if e.Detail != "" {
		body["detail"] = e.Detail
	}
	if len(e.Params) > 0 {
		body["errors"] = e.Params
	}
	return body
}

// ProblemJSON renders e as a Problem object, for embedding in an errors array.
func (w Writer) ProblemJSON(e *Error) map[string]any {
	return w.problemBody(e)
}

func adsBody(e *Error, r *http.Request) map[string]any {
	var errs []map[string]any
	for _, p := range e.Params {
		code := e.AdsCode
		if p.Code != "" {
			code = p.Code
		}
		for name, values := range p.Parameters {
			item := map[string]any{"code": code, "message": p.Message, "parameter": name}
			if len(values) > 0 {
				item["value"] = values[0]
			}
			errs = append(errs, item)
		}
	}
	if len(errs) == 0 {
		msg := e.Detail
		if msg == "" {
			msg = e.Title
		}
		errs = append(errs, map[string]any{"code": e.AdsCode, "message": msg})
	}
	return map[string]any{"errors": errs, "request": map[string]any{"params": RequestParams(r)}}
}

// RequestParams echoes a request's path values, query parameters and (once
// the handler parsed it) form body, the advertising API's request.params.
func RequestParams(r *http.Request) map[string]any {
	params := map[string]any{}
	for _, values := range []map[string][]string{r.URL.Query(), r.PostForm} { // PostForm: once parsed
		for k, vs := range values {
			if len(vs) > 0 {
				params[k] = vs[0]
			}
		}
	}
	if p, ok := r.Context().Value(pathParamsKey{}).(map[string]string); ok {
		for k, v := range p {
			params[k] = v
		}
	}
	return params
}

type pathParamsKey struct{}

// WithPathParams records a request's path parameters for RequestParams.
func WithPathParams(ctx context.Context, params map[string]string) context.Context {
	return context.WithValue(ctx, pathParamsKey{}, params)
}

func writeJSON(rw http.ResponseWriter, contentType string, status int, body any) {
	rw.Header().Set("Content-Type", contentType)
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(status)
	enc := json.NewEncoder(rw)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// ProblemNoter is a ResponseWriter that wants to know the problem an error
// answer carries (the API's recorder of recent errors).
type ProblemNoter interface {
	NoteProblem(typeURI, title string)
}

// noteProblem tells the first ProblemNoter among rw and the writers it
// wraps e's type and title.
func noteProblem(rw http.ResponseWriter, w Writer, e *Error) {
	for u := rw; u != nil; {
		if n, ok := u.(ProblemNoter); ok {
			n.NoteProblem(w.TypeURI(e.Slug), e.Title)
			return
		}
		x, ok := u.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		u = x.Unwrap()
	}
}
