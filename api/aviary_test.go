package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
)

func TestAviaryVersionHeader(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100, func(d *api.Deps) { d.Version = "v1.2.3-test" })
	for _, tc := range []struct{ method, path string }{
		{"GET", "/healthz"},
		{"GET", "/2/tweets?ids=1"},                // 401 Problem
		{"GET", "/2/no/such/route"},               // 404
		{"GET", "/12/accounts"},                   // ads envelope
		{"DELETE", "/readyz"},                     // 405
		{"GET", "/2/compliance/jobs?type=tweets"}, // with credentials
	} {
		authz := ""
		if tc.path == "/2/compliance/jobs?type=tweets" {
			authz = b.Bearer
		}
		r := b.Call(t, tc.method, tc.path, authz, "", nil)
		if got := r.Header.Get(api.VersionHeader); got != "v1.2.3-test" {
			t.Errorf("%s %s (%d): %s = %q", tc.method, tc.path, r.Status, api.VersionHeader, got)
		}
	}
	dev := apitest.Setup(t, 100)
	if got := dev.Call(t, "GET", "/healthz", "", "", nil).Header.Get(api.VersionHeader); got != "dev" {
		t.Errorf("no version set: %s = %q, want dev", api.VersionHeader, got)
	}
}

func TestAviaryHealth(t *testing.T) {
	t.Parallel()
	queues := []api.QueueDepth{{Name: "media", Size: 3, Pending: 2, Active: 1, LatencyMS: 1500}, {Name: "compliance"}}
	cases := []struct {
		name       string
		check      error
		queues     api.QueueInspector
		wantStatus int
		want       string
		wantQueues []string
	}{
		{"all well", nil, func(context.Context) ([]api.QueueDepth, error) { return queues, nil }, 200, "ok", []string{"compliance", "media"}},
		{"a dependency down", errors.New("refused"), func(context.Context) ([]api.QueueDepth, error) { return queues, nil }, 503, "degraded", []string{"compliance", "media"}},
		{"queues unreadable", nil, func(context.Context) ([]api.QueueDepth, error) { return nil, errors.New("redis gone") }, 503, "degraded", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := apitest.Setup(t, 100, func(d *api.Deps) {
				d.Version = "v9"
				d.Queues = tc.queues
				d.Ready = append(d.Ready, api.Check{Name: "blobs", Check: func(context.Context) error { return tc.check }})
			})
			r := b.Call(t, "GET", "/_aviary/health", "", "", nil)
			if r.Status != tc.wantStatus || r.Body["status"] != tc.want || r.Body["version"] != "v9" {
				t.Fatalf("health: %d %s; want %d status %s", r.Status, r.Raw, tc.wantStatus, tc.want)
			}
			deps, _ := r.Body["dependencies"].(map[string]any)
			wantBlobs := "ok"
			if tc.check != nil {
				wantBlobs = "unavailable"
			}
			if deps["blobs"] != wantBlobs {
				t.Errorf("dependencies %v: blobs want %s", deps, wantBlobs)
			}
			if tc.wantQueues == nil && deps["queues"] != "unavailable" {
				t.Errorf("dependencies %v: queues want unavailable", deps)
			}
			got, _ := r.Body["queues"].([]any)
			if len(got) != len(tc.wantQueues) {
				t.Fatalf("queues %v, want %v", got, tc.wantQueues)
			}
			for i, name := range tc.wantQueues {
				q := got[i].(map[string]any)
				if q["name"] != name {
					t.Errorf("queue %d = %v, want %s (sorted by name)", i, q, name)
				}
				if name == "media" && (q["size"] != float64(3) || q["pending"] != float64(2) || q["latency_ms"] != float64(1500)) {
					t.Errorf("media queue %v", q)
				}
			}
			surfaces, _ := r.Body["surfaces"].(map[string]any)
			for _, s := range []string{"posts", "compliance", "streams", "activity"} {
				if surfaces[s] != "serving" {
					t.Errorf("surfaces %v: %s not serving", surfaces, s)
				}
			}
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
			}
		})
	}
	t.Run("draining", func(t *testing.T) {
		t.Parallel()
		b := apitest.Setup(t, 100)
		b.API.SetDraining()
		if r := b.Call(t, "GET", "/_aviary/health", "", "", nil); r.Status != http.StatusServiceUnavailable || r.Body["status"] != "draining" {
			t.Errorf("draining: %d %s", r.Status, r.Raw)
		}
	})
}
