package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/validation"
)

// note is a body with strings at every depth.
type note struct {
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	Meta  *struct {
		Author string `json:"author"`
	} `json:"meta,omitempty"`
}

// TestBodyStringsAreUnicode: a string that is not valid Unicode (invalid
// UTF-8 bytes, an unpaired surrogate escape) is refused, naming the field
// whose value holds it, instead of being decoded as U+FFFD.
func TestBodyStringsAreUnicode(t *testing.T) {
	val := validation.New()
	h := newStack().Handler(Endpoint{
		Pattern: "POST /notes",
		Auth:    auth.BearerOnly,
		Body:    Body{MaxBytes: 1 << 10, Types: []string{ContentJSON, ContentForm}},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			var v note
			if err := Bind(r, val, &v); err != nil {
				return err
			}
			return WriteJSON(w, http.StatusOK, v)
		},
	})
	const (
		invalid   = "must be valid UTF-8"
		surrogate = "unpaired UTF-16 surrogate"
		nul       = "must not contain NUL"
	)
	tests := []struct {
		name, contentType, body string
		status                  int
		want                    string // substring of the response body
		field                   string // the parameter named; "" skips
	}{
		{"plain", ContentJSON, `{"title":"café ☕"}`, 200, `"title":"café ☕"`, ""},
		{"escaped pair", ContentJSON, `{"title":"\ud83d\ude00"}`, 200, "\U0001F600", ""},
		{"upper-case escaped pair", ContentJSON, `{"title":"\uD83D\uDE00"}`, 200, "\U0001F600", ""},
		{"escaped backslash, then u", ContentJSON, `{"title":"\\ud800"}`, 200, `\\ud800`, ""},
		{"BMP escape", ContentJSON, `{"title":"\u00e9\uffff"}`, 200, "é\uffff", ""},
		{"invalid byte", ContentJSON, "{\"title\":\"caf\xe9\"}", 400, invalid, "title"},
		{"truncated sequence", ContentJSON, "{\"title\":\"\xe2\x98\"}", 400, invalid, "title"},
		{"encoded surrogate (CESU)", ContentJSON, "{\"title\":\"\xed\xa0\x80\"}", 400, invalid, "title"},
		{"overlong encoding", ContentJSON, "{\"title\":\"\xc0\xaf\"}", 400, invalid, "title"},
		{"in an array", ContentJSON, "{\"title\":\"t\",\"tags\":[\"ok\",\"\xff\"]}", 400, invalid, "tags"},
		{"in a nested object", ContentJSON, "{\"title\":\"t\",\"meta\":{\"author\":\"\xff\"}}", 400, invalid, "author"},
		{"in a field name", ContentJSON, "{\"ti\xfftle\":\"t\"}", 400, invalid, "body"},
		{"lone high surrogate", ContentJSON, `{"title":"\ud800"}`, 400, surrogate, "title"},
		{"high surrogate then text", ContentJSON, `{"title":"\ud83dx"}`, 400, surrogate, "title"},
		{"high surrogate then BMP escape", ContentJSON, `{"title":"\ud83d\u0041"}`, 400, surrogate, "title"},
		{"two high surrogates", ContentJSON, `{"title":"\ud83d\ud83d\ude00"}`, 400, surrogate, "title"},
		{"lone low surrogate", ContentJSON, `{"title":"a\uDFFF"}`, 400, surrogate, "title"},
		{"surrogate in an array", ContentJSON, `{"title":"t","tags":["\udc00"]}`, 400, surrogate, "tags"},
		{"surrogate in a field name", ContentJSON, `{"\ud800":"t"}`, 400, surrogate, "body"},
		{"NUL still refused", ContentJSON, `{"title":"a\u0000"}`, 400, nul, "title"},
		{"NUL in a nested object", ContentJSON, `{"title":"t","meta":{"author":"\u0000"}}`, 400, nul, "author"},
		{"invalid JSON is reported as such", ContentJSON, "{\"title\":\xff}", 400, "not valid JSON", "body"},
		{"duplicate field", ContentJSON, `{"title":"a","title":"b"}`, 400, "given more than once", "title"},
		{"duplicate nested field", ContentJSON, `{"title":"t","meta":{"author":"a","author":"b"}}`, 400, "given more than once", "author"},
		{"nested field twice in two cases", ContentJSON, `{"title":"t","meta":{"author":"a","AUTHOR":"b"}}`, 400, "given more than once", "AUTHOR"},
		{"same name in a nested object is no duplicate", ContentJSON, `{"title":"t","meta":{"title":"x","author":"a"}}`, 400, "not a valid field", "title"},
		{"field name in another case", ContentJSON, `{"Title":"t"}`, 400, "did you mean `title`", "Title"},
		{"nested field name in another case is left to the decoder", ContentJSON, `{"title":"t","meta":{"Author":"a"}}`, 200, `"author":"a"`, ""},
		{"form value", ContentForm, "title=caf%E9", 400, invalid, "title"},
		{"form value, valid", ContentForm, "title=caf%C3%A9", 200, `"title":"café"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%d %s, want %d containing %q", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
			if tc.field != "" && !strings.Contains(rec.Body.String(), `"parameters":{"`+tc.field+`":`) {
				t.Errorf("%s does not name %q", rec.Body.String(), tc.field)
			}
		})
	}
}

// TestMalformedQuery: a query string net/url cannot decode is refused,
// naming the parameter, instead of being dropped (which made a malformed
// required value look missing).
func TestMalformedQuery(t *testing.T) {
	type query struct{ Type string }
	h := newStack().Handler(Endpoint{
		Pattern: "GET /things",
		Auth:    auth.BearerOnly,
		Query:   []string{"type", "thing.fields"},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			in := ReadQuery(r)
			q := query{Type: in.Required("type")}
			if err := in.Err(); err != nil {
				return err
			}
			return WriteJSON(w, http.StatusOK, q)
		},
	})
	tests := []struct {
		name, query string
		status      int
		want        string
	}{
		{"well-formed", "type=a%20b", 200, `"Type":"a b"`},
		{"plus is a space", "type=a+b", 200, `"Type":"a b"`},
		{"bad escape", "type=%zz", 400, "The `type` query parameter value is malformed"},
		{"truncated escape", "type=a%2", 400, "The `type` query parameter value is malformed"},
		{"bad escape in another pair", "type=a&thing.fields=%", 400, "The `thing.fields` query parameter value is malformed"},
		{"semicolon", "type=a;thing.fields=b", 400, "The `type` query parameter value is malformed"},
		{"bad escape in a name", "type=a&%zz=1", 400, "The query parameter name [%zz] is malformed"},
		{"invalid UTF-8 value", "type=%ff", 400, "The `type` query parameter value must be valid UTF-8"},
		{"empty pairs are ignored", "type=a&&", 200, `"Type":"a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/things?"+tc.query, nil))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d containing %q", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
		})
	}
}
