package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func render(t *testing.T, w Writer, env Envelope, target string, err error) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r = r.WithContext(WithPathParams(WithEnvelope(r.Context(), env), map[string]string{"account_id": "abc"}))
	rec := httptest.NewRecorder()
	w.Write(rec, r, err)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	return rec, body
}

func TestCoreProblems(t *testing.T) {
	quiet := Writer{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tests := []struct {
		name   string
		w      Writer
		err    error
		status int
		typ    string
		extra  map[string]any
	}{
		{"invalid request", quiet, InvalidParam("type", "bad", "x"), 400, DefaultProblemsBase + "/invalid-request", nil},
		{"wrapped error still renders", quiet, fmt.Errorf("handler: %w", Conflict("busy")), 409, DefaultProblemsBase + "/conflict", nil},
		{"not found carries resource fields", quiet, NotFound("compliance_job", "id", "7"), 404, DefaultProblemsBase + "/resource-not-found",
			map[string]any{"resource_type": "compliance_job", "resource_id": "7", "parameter": "id", "value": "7"}},
		{"custom base", Writer{ProblemsBase: "https://example.test/problems/"}, RuleCap("full"), 403, "https://example.test/problems/rule-cap", nil},
		{"generic", quiet, TooManyRequests(), 429, "about:blank", nil},
		{"forbidden is generic", quiet, Forbidden("read-only app"), 403, "about:blank", map[string]any{"title": "Forbidden", "detail": "read-only app"}},
		{"suspended account", quiet, AccountSuspended(), 403, "about:blank",
			map[string]any{"title": "Forbidden", "detail": "Your account is suspended and is not permitted to access this feature."}},
		{"unknown errors are internal", quiet, errors.New("db exploded: password=hunter2"), 500, "about:blank", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := render(t, tt.w, Core, "/2/x", tt.err)
			if rec.Code != tt.status || body["status"] != float64(tt.status) || body["type"] != tt.typ || body["title"] == "" {
				t.Fatalf("got %d %v", rec.Code, body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			for k, v := range tt.extra {
				if body[k] != v {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
			if tt.status == 500 && strings.Contains(rec.Body.String(), "hunter2") {
				t.Errorf("internal error leaked: %s", rec.Body.String())
			}
		})
	}
}

// TestPlatformShapedProblems: usage-capped and CreditsDepleted are
// rendered exactly as the platform sends them, without a status member.
func TestPlatformShapedProblems(t *testing.T) {
	tests := []struct {
		name   string
		err    *Error
		status int
		want   map[string]any
	}{
		{"usage capped", UsageCappedFor(PeriodMonthly, ScopeProduct, "42", ""), 429, map[string]any{
			"type": DefaultProblemsBase + "/usage-capped", "title": "UsageCapExceeded", "detail": "Usage cap exceeded: Monthly product cap",
			"period": "Monthly", "scope": "Product", "account_id": "42"}},
		{"daily account cap with product", UsageCappedFor(PeriodDaily, ScopeAccount, "", "pay-per-use"), 429, map[string]any{
			"type": DefaultProblemsBase + "/usage-capped", "title": "UsageCapExceeded", "detail": "Usage cap exceeded: Daily account cap",
			"period": "Daily", "scope": "Account", "product_name": "pay-per-use"}},
		{"credits depleted", CreditsDepleted("42"), 402, map[string]any{
			"type": DefaultProblemsBase + "/credits", "title": "CreditsDepleted",
			"detail": "Your enrolled account [42] does not have any credits to fulfill this request."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := render(t, Writer{}, Core, "/2/x", tt.err)
			if rec.Code != tt.status || fmt.Sprint(body) != fmt.Sprint(tt.want) {
				t.Fatalf("got %d %v, want %d %v", rec.Code, body, tt.status, tt.want)
			}
		})
	}
}

func TestInvalidRequestErrorsArray(t *testing.T) {
	_, body := render(t, Writer{}, Core, "/2/x", InvalidRequest(Param("a", "first", "1"), Param("b", "second")))
	errs := body["errors"].([]any)
	if len(errs) != 2 {
		t.Fatalf("errors %v", errs)
	}
	first := errs[0].(map[string]any)
	if first["message"] != "first" || first["parameters"].(map[string]any)["a"].([]any)[0] != "1" {
		t.Errorf("first error %v", first)
	}
	if vals := errs[1].(map[string]any)["parameters"].(map[string]any)["b"].([]any); len(vals) != 0 {
		t.Errorf("second error values %v, want []", vals)
	}
}

func TestAdsEnvelope(t *testing.T) {
	rec, body := render(t, Writer{}, Ads, "/12/accounts/abc?count=5000", InvalidParam("count", "count must be at most 1000", "5000"))
	if rec.Code != 400 || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	item := body["errors"].([]any)[0].(map[string]any)
	if item["code"] != "INVALID_PARAMETER" || item["parameter"] != "count" || item["value"] != "5000" || item["message"] != "count must be at most 1000" {
		t.Errorf("item %v", item)
	}
	params := body["request"].(map[string]any)["params"].(map[string]any)
	if params["account_id"] != "abc" || params["count"] != "5000" {
		t.Errorf("request params %v", params)
	}
	_, body = render(t, Writer{}, Ads, "/12/x", MethodNotAllowed("PATCH", []string{"GET"}))
	if item := body["errors"].([]any)[0].(map[string]any); item["code"] != "METHOD_NOT_ALLOWED" || item["message"] == "" {
		t.Errorf("method item %v", item)
	}
}

func TestAdsCodes(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		code string
	}{
		{"read-only app", Forbidden("read-only"), "READONLY_CLIENT_APPLICATION"},
		{"suspended account", AccountSuspended(), "UNAUTHORIZED_ACCESS"},
		{"repeated parameter", InvalidRequest(RepeatedParam("count", []string{"1", "2"})), "INVALID_PARAMETER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := render(t, Writer{}, Ads, "/12/x", tt.err)
			item := body["errors"].([]any)[0].(map[string]any)
			if rec.Code != tt.err.Status || item["code"] != tt.code {
				t.Errorf("got %d %v, want %d code %s", rec.Code, item, tt.err.Status, tt.code)
			}
		})
	}
}

func TestHeadersAreSet(t *testing.T) {
	rec, _ := render(t, Writer{}, Core, "/2/x", Unavailable("database down"))
	if rec.Header().Get("Retry-After") != "5" || rec.Code != 503 {
		t.Errorf("got %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	rec, _ = render(t, Writer{}, Core, "/2/x", Unauthorized("no token"))
	if rec.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
}
