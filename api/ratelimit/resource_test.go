package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestPerResource: a per-resource rule counts the requests for each path
// value (a core id or an opaque ads id) separately, needs no Principal
// (public, signed endpoints), and charges requests naming no valid id to
// one shared count.
func TestPerResource(t *testing.T) {
	client, prefix := testRedis(t)
	l := NewLimiter(client, prefix, (&clock{now: t0}).Now, quietWriter)
	rule := Rule{Name: "upload", Limit: 2, Window: 15 * time.Minute, Scope: PerResource, Resource: "id"}
	h, calls := counted(l, rule)
	mux := http.NewServeMux()
	mux.Handle("PUT /jobs/{id}/upload", h)
	put := func(id string) int {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/jobs/"+id+"/upload", nil)) // no Principal
		return rec.Code
	}
	steps := []struct {
		id   string
		want int
	}{
		{"1", 200}, {"1", 200}, {"1", 429}, // job 1 exhausted
		{"2", 200},                           // another job is not affected
		{"g54sb27e", 200}, {"g54sb27e", 200}, // an opaque ads id has its own count
		{"g54sb27e", 429}, {"g54sb27f", 200}, // ... and another one too
		{"a%3Ab", 200}, {"-5", 200}, {"0", 429}, // invalid ids share id 0
	}
	for i, s := range steps {
		if got := put(s.id); got != s.want {
			t.Errorf("step %d (id %s): status %d, want %d", i, s.id, got, s.want)
		}
	}
	if calls.Load() != 8 {
		t.Errorf("handler called %d times, want 8", calls.Load())
	}
}

func TestPerResourceRuleValidate(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		ok   bool
	}{
		{"per resource", Rule{Name: "a", Limit: 1, Window: time.Minute, Scope: PerResource, Resource: "id"}, true},
		{"per resource without a resource", Rule{Name: "a", Limit: 1, Window: time.Minute, Scope: PerResource}, false},
		{"per app with a resource", Rule{Name: "a", Limit: 1, Window: time.Minute, Resource: "id"}, false},
		{"resource with a colon", Rule{Name: "a", Limit: 1, Window: time.Minute, Scope: PerResource, Resource: "a:b"}, false},
	}
	for _, tt := range tests {
		if err := tt.rule.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
	if PerResource.String() != "resource" {
		t.Errorf("PerResource.String() = %q", PerResource.String())
	}
}
