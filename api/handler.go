package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/validation"
)

// handlerFunc is an endpoint body; a returned error is rendered by the
// apierr writer in the request's envelope.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// adapt turns a handlerFunc into an http.Handler that renders its error. An
// error wrapping errResponseStarted comes after the status line was sent, so
// it is only logged: a second header or body would corrupt the response.
func (s *Server) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		switch {
		case err == nil:
		case errors.Is(err, errResponseStarted):
			s.logLateError(r, err)
		default:
			s.Errors.Write(w, r, err)
		}
	})
}

// logLateError records a failure after the response started: at Debug when
// the client has gone away (routine), else at Warn.
func (s *Server) logLateError(r *http.Request, err error) {
	level := slog.LevelWarn
	if r.Context().Err() != nil {
		level = slog.LevelDebug
	}
	s.Logger.Log(r.Context(), level, "response failed after it started", "method", r.Method, "path", r.URL.Path, "err", err)
}

func errMethodNotAllowed(method string, allowed []string) error {
	return apierr.MethodNotAllowed(method, allowed)
}

func errRouteNotFound(path string) error { return apierr.RouteNotFound(path) }

// rejectUnknownQuery answers invalid-request when the query string carries a
// parameter the endpoint does not take or one of its parameters twice.
func (s *Server) rejectUnknownQuery(allowed []string, next http.Handler) http.Handler {
	known := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		known[a] = true
	}
	sorted := slices.Sorted(maps.Keys(known))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(r.URL.Query(), known, sorted); err != nil {
			s.Errors.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkQuery reports, in name order, every query parameter that is not
// known and every known one given more than once; nil when there is none.
func checkQuery(query url.Values, known map[string]bool, allowed []string) error {
	var errs []apierr.ParamError
	for _, name := range slices.Sorted(maps.Keys(query)) {
		switch {
		case !known[name]:
			errs = append(errs, apierr.UnknownParam(name, allowed))
		case len(query[name]) > 1:
			errs = append(errs, apierr.RepeatedParam(name, query[name]))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierr.InvalidRequest(errs...)
}

// decodeJSON reads a JSON object body into v, enforcing the body cap, the
// content type, a single object and no unknown fields, then validates v.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return apierr.UnsupportedMediaType("application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apierr.PayloadTooLarge(tooLarge.Limit)
	}
	if err != nil {
		return apierr.InvalidParam("body", fmt.Sprintf("The request body could not be read: %v", err))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.InvalidParam("body", "The request body is required and must be a JSON object.")
	}
	if field := nulField(body); field != "" {
		return apierr.InvalidParam(field, fmt.Sprintf("The `%s` field must not contain NUL (\\u0000) characters.", field))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apierr.InvalidParam("body", "The request body must contain a single JSON object.")
	}
	return s.validate(v)
}

// nulField names the first field whose string value (or key) contains a NUL
// character, which no record can store; "" when there is none or the body is
// not JSON (the typed decode reports that).
func nulField(body []byte) string {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return ""
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return findNUL(v, "body")
}

func findNUL(v any, name string) string {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return name
		}
	case []any:
		for _, item := range x {
			if f := findNUL(item, name); f != "" {
				return f
			}
		}
	case map[string]any:
		for k, item := range x {
			if strings.ContainsRune(k, 0) {
				return "body"
			}
			if f := findNUL(item, k); f != "" {
				return f
			}
		}
	}
	return ""
}

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return apierr.InvalidParam(typeErr.Field, fmt.Sprintf("The `%s` field must be of type %s, not %s.", typeErr.Field, typeErr.Type, typeErr.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is not a valid field for this request.", name))
	}
	return apierr.InvalidParam("body", fmt.Sprintf("The request body is not valid JSON: %v", err))
}

func (s *Server) validate(v any) error {
	return fieldErrors(s.Validator.Struct(v))
}

// fieldErrors turns validation results into one invalid-request error (nil
// when there are none).
func fieldErrors(errs []validation.FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	params := make([]apierr.ParamError, 0, len(errs))
	for _, e := range errs {
		params = append(params, apierr.Param(e.Field, e.Message, e.Values...))
	}
	return apierr.InvalidRequest(params...)
}

// pathID parses the {id} path value as a core id.
func pathID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, ok := validation.ParseID(raw)
	if !ok {
		return 0, fieldErrors([]validation.FieldError{validation.IDError("id", raw)})
	}
	return id, nil
}

// writeJSON sends a JSON response body.
func writeJSON(w http.ResponseWriter, status int, body any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return fmt.Errorf("encode response: %w: %w", errResponseStarted, err)
	}
	return nil
}

// errResponseStarted marks failures after the status line was sent; adapt
// only logs them. Wrap it (with the cause) in such errors.
var errResponseStarted = errors.New("response already started")
