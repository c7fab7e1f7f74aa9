package httpx

import (
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/validation"
)

// allowAll admits every caller as an app-only principal.
type allowAll struct{}

func (allowAll) Middleware(auth.Requirement) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Method: auth.MethodBearer})))
		})
	}
}

type thing struct {
	Kind  string `json:"kind" validate:"required,enum=kind"`
	Count int    `json:"count,omitempty" validate:"max=10"`
	Flag  bool   `json:"flag,omitempty"`
}

func newStack() *Stack {
	log := slog.New(slog.DiscardHandler)
	return &Stack{Errors: apierr.Writer{Logger: log}, Logger: log, Auth: allowAll{}, Rules: ratelimit.NewRegistry()}
}

// echoThing binds a thing and answers it back.
func echoThing(val *validation.Validator) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var v thing
		if err := Bind(r, val, &v); err != nil {
			return err
		}
		return WriteJSON(w, http.StatusOK, v)
	}
}

func TestStackBodyRules(t *testing.T) {
	val := validation.New()
	val.MustRegisterEnum("kind", []string{"a", "b"})
	h := newStack().Handler(Endpoint{
		Pattern: "POST /things",
		Auth:    auth.BearerOnly,
		Body:    Body{MaxBytes: 64, Types: []string{ContentJSON, ContentForm}},
		Handle:  echoThing(val),
	})
	tests := []struct {
		name, contentType, body string
		status                  int
		want                    string // substring of the response body
	}{
		{"json", "application/json", `{"kind":"a","count":3}`, 200, `"count":3`},
		{"json without content type", "", `{"kind":"b"}`, 200, `"kind":"b"`},
		{"json with charset", "application/json; charset=utf-8", `{"kind":"b"}`, 200, `"kind":"b"`},
		{"form", "application/x-www-form-urlencoded", `kind=a&count=7&flag=true`, 200, `"flag":true`},
		{"form bad integer", "application/x-www-form-urlencoded", `kind=a&count=x`, 400, "is not an integer"},
		{"enum", "application/json", `{"kind":"c"}`, 400, "The `kind` field value [c] is not one of [a,b]"},
		{"required", "application/json", `{"count":1}`, 400, "The `kind` field is required."},
		{"max", "application/json", `{"kind":"a","count":11}`, 400, "at most 10"},
		{"unknown field", "application/json", `{"kind":"a","x":1}`, 400, "not a valid field"},
		{"two objects", "application/json", `{"kind":"a"}{"kind":"b"}`, 400, "single JSON object"},
		{"NUL", "application/json", `{"kind":"a\u0000"}`, 400, "must not contain NUL"},
		{"empty", "application/json", ``, 400, "body is required"},
		{"too large", "application/json", `{"kind":"` + strings.Repeat("a", 100) + `"}`, 413, "exceeds the limit of 64 bytes"},
		{"wrong type", "text/plain", `kind=a`, 415, "application/json or application/x-www-form-urlencoded"},
		{"multipart not accepted here", "multipart/form-data; boundary=x", `--x--`, 415, "Unsupported Media Type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(tc.body))
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d containing %q", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
		})
	}
}

// TestBindUsesTheRouteDefault: a form-first endpoint decodes a body sent
// without a Content-Type as a form.
func TestBindUsesTheRouteDefault(t *testing.T) {
	val := validation.New()
	val.MustRegisterEnum("kind", []string{"a", "b"})
	h := newStack().Handler(Endpoint{Pattern: "POST /things", Auth: auth.BearerOnly,
		Body: Body{Types: []string{ContentForm, ContentMultipart}}, Handle: echoThing(val)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/things", strings.NewReader("kind=b&count=2")))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"count":2`) {
		t.Errorf("%d %s, want the form decoded", rec.Code, rec.Body.String())
	}
	var body strings.Builder
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("kind", "a")
	_ = mw.WriteField("flag", "true")
	_ = mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(body.String()))
	r.Header.Set("Content-Type", mw.FormDataContentType())
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"flag":true`) {
		t.Errorf("%d %s, want the multipart form decoded", rec.Code, rec.Body.String())
	}
}

func TestStackQueryRules(t *testing.T) {
	type query struct {
		Type, Status string
		Max          int
	}
	kinds := []string{"a", "b"}
	h := newStack().Handler(Endpoint{
		Pattern: "GET /things",
		Auth:    auth.BearerOnly,
		Query:   []string{"type", "status", "max_results", "thing.fields"},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			in := ReadQuery(r)
			q := query{Type: in.RequiredEnum("type", kinds), Max: in.Int("max_results", 5, 100, 0)}
			if in.Raw("status") != "" {
				q.Status = in.Enum("status", kinds, "")
			}
			if err := in.Err(); err != nil {
				return err
			}
			fs, err := Fields(r, "thing.fields", ObjectFields{Default: []string{"id", "name"}, Allowed: []string{"id", "name", "size"}})
			if err != nil {
				return err
			}
			return WriteJSON(w, http.StatusOK, map[string]any{"q": q, "name": fs.Has("name"), "size": fs.Has("size")})
		},
	})
	tests := []struct {
		name, query string
		status      int
		want        string
	}{
		{"ok", "type=a&status=b&max_results=5", 200, `"Max":5`},
		{"defaults without the parameter", "type=a", 200, `"name":true,"q":{"Type":"a","Status":"","Max":0},"size":false`},
		{"fields add to the defaults", "type=a&thing.fields=size", 200, `"name":true,"q":{"Type":"a","Status":"","Max":0},"size":true`},
		{"fields never remove a default", "type=a&thing.fields=id", 200, `"name":true,"q":{"Type":"a","Status":"","Max":0},"size":false`},
		{"missing", "status=a", 400, "The `type` query parameter can not be empty"},
		{"empty is missing", "type=", 400, "The `type` query parameter can not be empty"},
		{"enum", "type=z", 400, "The `type` query parameter value [z] is not one of [a,b]"},
		{"two bad values answered together", "type=a&status=z&max_results=1", 400, "max_results"},
		{"not an integer", "type=a&max_results=x", 400, "The `max_results` query parameter value [x] is not between 5 and 100"},
		{"unknown parameter", "type=a&foo=1", 400, "The query parameter [foo] is not one of [max_results,status,thing.fields,type]"},
		{"repeated parameter", "type=a&type=b", 400, "may be given only once"},
		{"unknown field", "type=a&thing.fields=colour", 400, "thing.fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/things?"+tc.query, nil))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d containing %q", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
			if tc.name == "two bad values answered together" {
				var p struct {
					Errors []json.RawMessage `json:"errors"`
				}
				_ = json.Unmarshal(rec.Body.Bytes(), &p)
				if len(p.Errors) != 2 {
					t.Errorf("%d errors, want status and max_results together: %s", len(p.Errors), rec.Body.String())
				}
			}
		})
	}
}

func TestStackRateLimitRules(t *testing.T) {
	tests := []struct {
		name  string
		scale float64
		limit Limit
		want  int // registered limit; 0 means no rule
	}{
		{"no limit", 1, Limit{}, 0},
		{"as given", 1, Limit{Name: "a", Requests: 150, Scope: PerApp}, 150},
		{"default scale", 0, Limit{Name: "a", Requests: 150}, 150},
		{"scaled up", 100, Limit{Name: "a", Requests: 150}, 15000},
		{"scaled down, at least 1", 0.001, Limit{Name: "a", Requests: 50, Scope: PerUser}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack()
			s.RateLimitScale = tc.scale
			s.Handler(Endpoint{Pattern: "GET /x", Auth: auth.BearerOnly, Limit: tc.limit, Handle: func(http.ResponseWriter, *http.Request) error { return nil }})
			rules := s.Rules.Rules()
			switch {
			case tc.want == 0 && len(rules) != 0:
				t.Errorf("rules %v, want none", rules)
			case tc.want != 0 && (len(rules) != 1 || rules[0].Limit != tc.want || rules[0].Window != Window || rules[0].Scope != tc.limit.Scope):
				t.Errorf("rules %+v, want one of %d per %v", rules, tc.want, Window)
			}
		})
	}
}

func TestPathID(t *testing.T) {
	tests := []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"1460323737035677698", 1460323737035677698, true},
		{"0", 0, false},
		{"-1", 0, false},
		{"99999999999999999999", 0, false},
		{"12a", 0, false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		r.SetPathValue("id", tc.raw)
		got, err := PathID(r, "id")
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("PathID(%q) = %d, %v; want %d ok=%v", tc.raw, got, err, tc.want, tc.ok)
		}
	}
}

func TestPrincipalPanicsWithoutAuth(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Principal without authentication did not panic")
		}
	}()
	Principal(httptest.NewRequest(http.MethodGet, "/", io.NopCloser(strings.NewReader(""))))
}
