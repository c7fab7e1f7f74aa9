package api_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

func TestRejectedRequests(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	const jobs = "/2/compliance/jobs"
	js := "application/json"
	tests := []struct {
		name, method, path, authz, ctype string
		body                             []byte
		status                           int
		typ                              string // Problem type; "" skips
		params                           []string
	}{
		{"no credentials", "GET", jobs + "?type=tweets", "", "", nil, 401, "about:blank", nil},
		{"unknown bearer", "GET", jobs + "?type=tweets", "Bearer nope", "", nil, 401, "about:blank", nil},
		{"basic auth", "GET", jobs + "?type=tweets", "Basic dTpw", "", nil, 401, "about:blank", nil},
		{"missing type", "GET", jobs, b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"bad type", "GET", jobs + "?type=likes", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"bad status", "GET", jobs + "?type=users&status=done", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"status"}},
		{"bad field", "GET", jobs + "?type=users&compliance_job.fields=id,secret", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"compliance_job.fields"}},
		{"empty fields", "GET", jobs + "?type=users&compliance_job.fields=", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"compliance_job.fields"}},
		{"unknown query parameter", "GET", jobs + "?type=users&max_results=5", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"max_results"}},
		{"repeated query parameter", "GET", jobs + "?type=tweets&type=users", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"repeated with the same value", "GET", jobs + "?type=users&type=users", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"repeated and unknown", "GET", jobs + "?type=users&status=failed&status=complete&x=1", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"status", "x"}},
		{"repeated empty field list", "GET", jobs + "/1?compliance_job.fields=&compliance_job.fields=", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"compliance_job.fields"}},
		{"repeated on create", "POST", jobs + "?compliance_job.fields=id&compliance_job.fields=id", b.Bearer, js, apitest.JSONBody(map[string]any{"type": "users"}), 400, apitest.Problems + "invalid-request", []string{"compliance_job.fields"}},
		{"malformed id", "GET", jobs + "/12ab", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"id"}},
		{"id too long", "GET", jobs + "/12345678901234567890", b.Bearer, "", nil, 400, apitest.Problems + "invalid-request", []string{"id"}},
		{"unknown job", "GET", jobs + "/42", b.Bearer, "", nil, 404, apitest.Problems + "resource-not-found", nil},
		{"create bad type", "POST", jobs, b.Bearer, js, apitest.JSONBody(map[string]any{"type": "likes"}), 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"create no type", "POST", jobs, b.Bearer, js, apitest.JSONBody(map[string]any{"name": "x"}), 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"create type not string", "POST", jobs, b.Bearer, js, []byte(`{"type":5}`), 400, apitest.Problems + "invalid-request", []string{"type"}},
		{"create unknown field", "POST", jobs, b.Bearer, js, []byte(`{"type":"users","priority":1}`), 400, apitest.Problems + "invalid-request", []string{"priority"}},
		{"create long name", "POST", jobs, b.Bearer, js, apitest.JSONBody(map[string]any{"type": "users", "name": strings.Repeat("n", 65)}), 400, apitest.Problems + "invalid-request", []string{"name"}},
		{"create invalid json", "POST", jobs, b.Bearer, js, []byte(`{"type":`), 400, apitest.Problems + "invalid-request", []string{"body"}},
		{"create two objects", "POST", jobs, b.Bearer, js, []byte(`{"type":"users"}{"type":"users"}`), 400, apitest.Problems + "invalid-request", []string{"body"}},
		{"create empty body", "POST", jobs, b.Bearer, js, nil, 400, apitest.Problems + "invalid-request", []string{"body"}},
		{"create wrong content type", "POST", jobs, b.Bearer, "text/plain", []byte(`{"type":"users"}`), 415, "about:blank", nil},
		{"create oversized body", "POST", jobs, b.Bearer, js, append([]byte(`{"type":"users","name":"`), bytes.Repeat([]byte("a"), 2<<20)...), 413, "about:blank", nil},
		{"create with user context", "POST", jobs, "oauth:reader", js, apitest.JSONBody(map[string]any{"type": "users"}), 403, apitest.Problems + "unsupported-authentication", nil},
		{"post with bearer", "POST", "/2/tweets", b.Bearer, js, apitest.JSONBody(map[string]any{"text": "hi"}), 403, apitest.Problems + "unsupported-authentication", nil},
		{"post empty text", "POST", "/2/tweets", "oauth:reader", js, apitest.JSONBody(map[string]any{"text": ""}), 400, apitest.Problems + "invalid-request", []string{"text"}},
		{"post no text", "POST", "/2/tweets", "oauth:reader", js, []byte(`{}`), 400, apitest.Problems + "invalid-request", []string{"text"}},
		{"post with NUL", "POST", "/2/tweets", "oauth:reader", js, []byte(`{"text":"a\u0000b"}`), 400, apitest.Problems + "invalid-request", []string{"text"}},
		{"job name with NUL", "POST", jobs, b.Bearer, js, []byte(`{"type":"users","name":"\u0000"}`), 400, apitest.Problems + "invalid-request", []string{"name"}},
		{"post too long", "POST", "/2/tweets", "oauth:reader", js, apitest.JSONBody(map[string]any{"text": strings.Repeat("é", 281)}), 400, apitest.Problems + "invalid-request", []string{"text"}},
		{"delete unknown post", "DELETE", "/2/tweets/77", "oauth:reader", "", nil, 404, apitest.Problems + "resource-not-found", nil},
		{"delete malformed id", "DELETE", "/2/tweets/x", "oauth:reader", "", nil, 400, apitest.Problems + "invalid-request", []string{"id"}},
		{"wrong method", "DELETE", jobs, b.Bearer, "", nil, 405, "about:blank", nil},
		{"unknown path", "GET", "/2/nothing", b.Bearer, "", nil, 404, "about:blank", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Call(t, tt.method, tt.path, tt.authz, tt.ctype, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q: %s", ct, r.Raw)
			}
			if r.Body["type"] != tt.typ || r.Body["title"] == "" || r.Body["status"] != float64(tt.status) {
				t.Fatalf("problem %s; want type %s", r.Raw, tt.typ)
			}
			if got := apitest.ParamNames(r.Body); strings.Join(got, ",") != strings.Join(tt.params, ",") {
				t.Fatalf("parameters %v, want %v: %s", got, tt.params, r.Raw)
			}
		})
	}
	for _, app := range []storage.App{b.App, b.Other} {
		for _, typ := range []string{"tweets", "users"} {
			listed, err := b.DB.ListComplianceJobs(context.Background(), storage.ComplianceFilter{AppID: app.ID, Type: typ})
			if err != nil || len(listed) != 0 {
				t.Fatalf("rejected requests wrote jobs: %v %v", listed, err)
			}
		}
	}
}

func TestProblemDetails(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	r := b.Call(t, "GET", "/2/compliance/jobs?type=likes", b.Bearer, "", nil)
	if r.Body["detail"] != "One or more parameters to your request was invalid." || r.Body["title"] != "Invalid Request" {
		t.Errorf("invalid-request problem %s", r.Raw)
	}
	errs := r.Body["errors"].([]any)
	first := errs[0].(map[string]any)
	if first["message"] != "The `type` query parameter value [likes] is not one of [tweets,users]" {
		t.Errorf("message %v", first["message"])
	}
	if vals := first["parameters"].(map[string]any)["type"].([]any); len(vals) != 1 || vals[0] != "likes" {
		t.Errorf("parameters %v", first["parameters"])
	}
	r = b.Call(t, "GET", "/2/compliance/jobs?type=tweets&type=users", b.Bearer, "", nil)
	repeated, _ := r.Body["errors"].([]any)
	if len(repeated) != 1 || repeated[0].(map[string]any)["message"] != "The query parameter [type] may be given only once" {
		t.Errorf("repeated-parameter problem %s", r.Raw)
	}
	r = b.Call(t, "GET", "/2/compliance/jobs/42", b.Bearer, "", nil)
	if r.Body["resource_type"] != "compliance_job" || r.Body["resource_id"] != "42" || r.Body["parameter"] != "id" {
		t.Errorf("not-found problem %s", r.Raw)
	}
	r = b.Call(t, "DELETE", "/2/compliance/jobs", b.Bearer, "", nil)
	if r.Header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
	r = b.Call(t, "GET", "/12/accounts/abc/nothing?count=5", b.Bearer, "", nil)
	if r.Status != 404 || r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("ads 404: %d %s", r.Status, r.Raw)
	}
	adsErr := r.Body["errors"].([]any)[0].(map[string]any)
	if adsErr["code"] != "ROUTE_NOT_FOUND" || r.Body["request"].(map[string]any)["params"].(map[string]any)["count"] != "5" {
		t.Errorf("ads envelope %s", r.Raw)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1.0/150) // one request per window for the compliance routes
	first := b.Call(t, "GET", "/2/compliance/jobs?type=users", b.Bearer, "", nil)
	if first.Status != 200 || first.Header.Get("x-rate-limit-limit") != "1" || first.Header.Get("x-rate-limit-remaining") != "0" {
		t.Fatalf("first: %d %v", first.Status, first.Header)
	}
	reset := first.Header.Get("x-rate-limit-reset")
	if reset == "" {
		t.Fatalf("no reset header")
	}
	second := b.Call(t, "GET", "/2/compliance/jobs?type=users", b.Bearer, "", nil)
	if second.Status != 429 || second.Body["title"] != "Too Many Requests" || second.Header.Get("x-rate-limit-reset") != reset {
		t.Fatalf("second: %d %s %v", second.Status, second.Raw, second.Header)
	}
	if other := b.Call(t, "GET", "/2/compliance/jobs?type=users", b.OtherBearer, "", nil); other.Status != 200 {
		t.Fatalf("another app shares the limit: %d", other.Status)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	r := b.Call(t, "GET", "/readyz", "", "", nil)
	if r.Status != 200 || r.Body["checks"].(map[string]any)["database"] != "ok" {
		t.Fatalf("readyz: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "GET", "/healthz", "", "", nil); r.Status != 200 {
		t.Fatalf("healthz: %d", r.Status)
	}
	if r.Header.Get(api.RequestIDHeader) == "" {
		t.Errorf("no request id header")
	}
	req, _ := http.NewRequest("GET", b.Srv.URL+"/healthz", nil)
	req.Header.Set(api.RequestIDHeader, "client-chosen-id")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get(api.RequestIDHeader) != "client-chosen-id" {
		t.Errorf("request id not echoed: %q", resp.Header.Get(api.RequestIDHeader))
	}
	for _, method := range []string{"PROPFIND", "BREW", "X-RANDOM"} {
		if r := b.Call(t, method, "/healthz", "", "", nil); r.Status != 405 {
			t.Errorf("%s /healthz: %d", method, r.Status)
		}
	}
	m := b.Call(t, "GET", "/metrics", "", "", nil)
	if m.Status != 200 || !strings.Contains(m.Raw, `aviary_http_requests_total{method="GET",route="GET /readyz",status="200"} 1`) {
		t.Fatalf("metrics: %d %.2000s", m.Status, m.Raw)
	}
	if !strings.Contains(m.Raw, `aviary_http_requests_total{method="other",route="unmatched",status="405"} 3`) ||
		strings.Contains(m.Raw, "PROPFIND") || strings.Contains(m.Raw, "BREW") {
		t.Errorf("unusual methods are not labelled other: %.3000s", m.Raw)
	}
}

func TestUserAccess(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	ctx := context.Background()
	b.AddUser(t, "readonly", storage.AccessRead)
	for _, state := range []string{"deleted", "deactivated", "suspended", "protected"} {
		u := b.AddUser(t, state, storage.AccessReadWrite)
		if _, err := b.DB.SetUserState(ctx, u.ID, state, time.Now()); err != nil {
			t.Fatalf("set %s: %v", state, err)
		}
	}
	mine := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "kept"}))
	if mine.Status != 201 {
		t.Fatalf("create post: %d %s", mine.Status, mine.Raw)
	}
	kept := mine.Body["data"].(map[string]any)["id"].(string)
	const (
		readOnly  = "Your client app is not configured with the appropriate oauth1 app permissions for this endpoint."
		suspended = "Your account is suspended and is not permitted to access this feature."
	)
	post := apitest.JSONBody(map[string]any{"text": "hello"})
	tests := []struct {
		name, method, path, authz string
		body                      []byte
		status                    int
		title, detail             string // "" skips
	}{
		{"read-only token creates", "POST", "/2/tweets", "oauth:readonly", post, 403, "Forbidden", readOnly},
		{"read-only token deletes", "DELETE", "/2/tweets/" + kept, "oauth:readonly", nil, 403, "Forbidden", readOnly},
		{"read-only token, unknown post", "DELETE", "/2/tweets/77", "oauth:readonly", nil, 403, "Forbidden", readOnly},
		{"deleted user", "POST", "/2/tweets", "oauth:deleted", post, 401, "Unauthorized", ""},
		{"deactivated user", "POST", "/2/tweets", "oauth:deactivated", post, 401, "Unauthorized", ""},
		{"deactivated user deletes", "DELETE", "/2/tweets/" + kept, "oauth:deactivated", nil, 401, "Unauthorized", ""},
		{"suspended user", "POST", "/2/tweets", "oauth:suspended", post, 403, "Forbidden", suspended},
		{"suspended user deletes", "DELETE", "/2/tweets/" + kept, "oauth:suspended", nil, 403, "Forbidden", suspended},
		{"protected user", "POST", "/2/tweets", "oauth:protected", post, 201, "", ""},
		{"read-write token", "POST", "/2/tweets", "oauth:author", post, 201, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Call(t, tt.method, tt.path, tt.authz, "application/json", tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if tt.status < 400 {
				return
			}
			if r.Body["type"] != "about:blank" || r.Body["title"] != tt.title {
				t.Errorf("problem %s; want about:blank titled %s", r.Raw, tt.title)
			}
			if tt.detail != "" && r.Body["detail"] != tt.detail {
				t.Errorf("detail %q, want %q", r.Body["detail"], tt.detail)
			}
		})
	}
	n, _ := apitest.StrconvID(kept)
	if p, err := b.DB.PostByID(ctx, n); err != nil || p.DeletedAt != nil {
		t.Errorf("a refused delete deleted the post: %+v %v", p, err)
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	const secret = "dial tcp 10.9.8.7:5432: password authentication failed for user \"ops\""
	var failing atomic.Bool
	flaky := api.Check{Name: "flaky", Check: func(context.Context) error {
		if failing.Load() {
			return errors.New(secret)
		}
		return nil
	}}
	logs := &apitest.LogRecorder{}
	b := apitest.Setup(t, 100, func(d *api.Deps) {
		d.Ready = append(d.Ready, flaky)
		d.Logger = slog.New(logs)
	})
	// The cases run in order on one server: draining cannot be undone.
	tests := []struct {
		name         string
		fail, drain  bool
		status       int
		want         string
		wantWarnings int // readiness-check warnings logged so far
	}{
		{"ready", false, false, 200, `{"checks":{"database":"ok","flaky":"ok"},"status":"ok"}`, 0},
		{"dependency down", true, false, 503, `{"checks":{"database":"ok","flaky":"unavailable"},"status":"unavailable"}`, 1},
		{"recovered", false, false, 200, `{"checks":{"database":"ok","flaky":"ok"},"status":"ok"}`, 1},
		{"draining", false, true, 503, `{"status":"draining"}`, 1},
		{"draining while down", true, false, 503, `{"status":"draining"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failing.Store(tt.fail)
			if tt.drain {
				b.API.SetDraining()
			}
			r := b.Call(t, "GET", "/readyz", "", "", nil)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if got := apitest.CanonicalJSON(t, r.Raw); got != tt.want {
				t.Errorf("body %s, want %s", got, tt.want)
			}
			if strings.Contains(r.Raw, "10.9.8.7") || strings.Contains(r.Raw, "ops") {
				t.Errorf("dependency error leaked: %s", r.Raw)
			}
			if got := logs.Count("readiness check failed", slog.LevelWarn); got != tt.wantWarnings {
				t.Errorf("%d readiness warnings logged, want %d", got, tt.wantWarnings)
			}
		})
	}
	if r := b.Call(t, "GET", "/healthz", "", "", nil); r.Status != 200 {
		t.Errorf("healthz while draining: %d", r.Status)
	}
}

func TestRequestLogLevels(t *testing.T) {
	t.Parallel()
	logs := &apitest.LogRecorder{}
	b := apitest.Setup(t, 100, func(d *api.Deps) { d.Logger = slog.New(logs) })
	tests := []struct {
		method, path string
		authz        string
		want         slog.Level
	}{
		{"GET", "/healthz", "", slog.LevelDebug},
		{"HEAD", "/healthz", "", slog.LevelDebug},
		{"GET", "/readyz", "", slog.LevelDebug},
		{"GET", "/metrics", "", slog.LevelDebug},
		{"GET", "/2/compliance/jobs?type=users", b.Bearer, slog.LevelInfo},
		{"GET", "/2/compliance/jobs?type=likes", b.Bearer, slog.LevelInfo},
		{"POST", "/healthz", "", slog.LevelInfo}, // not a probe: 405
		{"GET", "/healthz/x", "", slog.LevelInfo},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			before := logs.Len()
			b.Call(t, tt.method, tt.path, tt.authz, "", nil)
			lines := logs.Since(before, "http request")
			if len(lines) != 1 {
				t.Fatalf("%d request lines logged, want 1", len(lines))
			}
			if lines[0].Level != tt.want {
				t.Errorf("logged at %v, want %v", lines[0].Level, tt.want)
			}
			attrs := map[string]string{}
			lines[0].Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			path, _, _ := strings.Cut(tt.path, "?")
			if attrs["method"] != tt.method || attrs["path"] != path || attrs["status"] == "" || attrs["route"] == "" || attrs["duration_ms"] == "" {
				t.Errorf("request line attributes %v; want method %s, path %s, a status, a route and a duration", attrs, tt.method, path)
			}
		})
	}
}
