package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/validation"
)

// multipartMemory is how much of a multipart body Bind keeps in memory; the
// rest of its files spill to temporary files.
const multipartMemory = 8 << 20

// Bind decodes the request body into v by its content type (JSON object,
// form-encoded or multipart form values, named by v's `json` tags) and
// validates v with val. The endpoint's Body rule has already checked the
// content type and capped the body; a body over the cap is answered with 413.
func Bind(r *http.Request, val *validation.Validator, v any) error {
	if err := decodeBody(r, v); err != nil {
		return err
	}
	return Validate(val, v)
}

// decodeBody decodes by the media type the endpoint's Body rule resolved
// (its first type when the request named none).
func decodeBody(r *http.Request, v any) error {
	mt, ok := r.Context().Value(mediaTypeKey{}).(string)
	if !ok {
		var err error
		if mt, err = mediaType(r, []string{ContentJSON, ContentForm, ContentMultipart}); err != nil {
			return err
		}
	}
	switch mt {
	case ContentForm:
		// Read the body itself: ParseForm ignores a body sent without a
		// Content-Type, which the endpoint's rule may default to a form.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return BodyReadError(r.Context(), err)
		}
		values, err := url.ParseQuery(string(body))
		if err != nil {
			return apierr.InvalidParam("body", fmt.Sprintf("The request body is not a valid form: %v", err))
		}
		return decodeValues(values, v, "field")
	case ContentMultipart:
		if err := r.ParseMultipartForm(multipartMemory); err != nil {
			return BodyReadError(r.Context(), err)
		}
		return decodeValues(url.Values(r.MultipartForm.Value), v, "field")
	}
	return decodeJSON(r, v)
}

// decodeJSON reads a JSON object body into v: a single object, no unknown
// fields, and every string (value or field name) valid Unicode without NUL
// characters (see checkStrings).
func decodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return BodyReadError(r.Context(), err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.InvalidParam("body", "The request body is required and must be a JSON object.")
	}
	if err := checkStrings(body); err != nil {
		return err
	}
	if err := checkKeys(body, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apierr.InvalidParam("body", "The request body must contain a single JSON object.")
	}
	return nil
}

// BodyReadError renders a failure to read a request body: 413 for a body
// over the endpoint's cap, client-disconnected when ctx (the request's) is
// done, else invalid-request naming the body.
func BodyReadError(ctx context.Context, err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return apierr.PayloadTooLarge(tooLarge.Limit)
	case ctx.Err() != nil:
		return apierr.ClientDisconnected()
	}
	return apierr.InvalidParam("body", fmt.Sprintf("The request body could not be read: %v", err))
}

// String defects checkStrings refuses; encoding/json would otherwise decode
// the first two as U+FFFD and store that.
const (
	defectUTF8      = "must be valid UTF-8"
	defectSurrogate = "must not contain an unpaired UTF-16 surrogate escape (\\ud800-\\udfff)"
	defectNUL       = "must not contain NUL (\\u0000) characters"
)

// checkStrings refuses a JSON body holding a string, value or field name,
// that is not valid Unicode (invalid UTF-8 bytes, a \uXXXX surrogate escape
// without its pair) or that contains NUL, which no record can store. The
// error names the field whose value holds it (the nearest enclosing field for
// values inside arrays and objects), "body" for a field name or a top-level
// string. A body that is not JSON passes: the typed decode reports it.
func checkStrings(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil // nothing to find: no bad bytes, no escapes
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	// fields is the current field name of each open object (nil for an
	// array); expectKey says whether the innermost object's next string is
	// a field name.
	var fields []*string
	expectKey := false
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		off := dec.InputOffset()
		raw := body[prev:off] // the token, after its separators
		prev = off
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				fields = append(fields, new(string))
				expectKey = true
				continue
			case '[':
				fields = append(fields, nil)
				expectKey = false
				continue
			default:
				fields = fields[:len(fields)-1]
			}
		case string:
			if defect := stringDefect(raw); defect != "" {
				if expectKey {
					return apierr.InvalidParam("body", fmt.Sprintf("A field name in the request body %s.", defect))
				}
				field := enclosingField(fields)
				return apierr.InvalidParam(field, fmt.Sprintf("The `%s` field %s.", field, defect))
			}
			if expectKey {
				*fields[len(fields)-1] = t
				expectKey = false
				continue
			}
		}
		// A value ended: an enclosing object's next string is a field name.
		expectKey = len(fields) > 0 && fields[len(fields)-1] != nil
	}
}

// enclosingField names the innermost object field a value sits in ("body"
// at the top level).
func enclosingField(fields []*string) string {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i] != nil {
			return *fields[i]
		}
	}
	return "body"
}

// stringDefect checks raw, the bytes of one JSON string token the decoder
// accepted (possibly after a separator), and returns what is wrong with it:
// one of the defect texts, or "" when nothing is.
func stringDefect(raw []byte) string {
	if !utf8.Valid(raw) {
		return defectUTF8
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' { // the decoder accepted the token: escapes are complete
			i++
			continue
		}
		r := hex4(raw[i+2 : i+6])
		i += 5
		switch {
		case r == 0:
			return defectNUL
		case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low one must follow
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if low := hex4(raw[i+3 : i+7]); low >= 0xDC00 && low <= 0xDFFF {
					i += 6
					continue
				}
			}
			return defectSurrogate
		case utf16.IsSurrogate(r): // a low one on its own
			return defectSurrogate
		}
	}
	return ""
}

// hex4 decodes four hexadecimal digits the JSON decoder already accepted.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
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

// Validate checks v's struct rules with val, as a request body.
func Validate(val *validation.Validator, v any) error {
	return FieldErrors(val.Struct(v))
}

// FieldErrors turns validation results into one invalid-request error (nil
// when there are none).
func FieldErrors(errs []validation.FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	params := make([]apierr.ParamError, 0, len(errs))
	for _, e := range errs {
		params = append(params, apierr.Param(e.Field, e.Message, e.Values...))
	}
	return apierr.InvalidRequest(params...)
}

// Refuse answers a body field a handler refused after Bind, by a check
// that needs the store or the caller (the post it names does not exist,
// the media is not processed, the app's tier does not allow it): one
// invalid-request naming field, worded by p like a validation rule's
// problem (validation.Problemf, validation.Unseen). It is the one way a
// handler refuses a field; checks that need neither are rules (Bind).
func Refuse(field string, p *validation.Problem) error {
	return apierr.InvalidParam(field, p.Message(field), p.Values...)
}
