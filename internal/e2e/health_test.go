package e2e

import (
	"net/http"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// e2eVersion is the version the test binary is linked with (TestMain).
const e2eVersion = "e2e-test"

// TestAviaryHealth: /_aviary/health of a real stack reports its
// dependencies, the work queues (a compliance job recorded with no worker
// running waits in one) and the version every response carries; the ads
// sandbox listener reports the ads surfaces only.
func TestAviaryHealth(t *testing.T) {
	t.Parallel()
	addr, redisDB := storagetest.RedisDB(t)
	s := newStackWithRedisDB(t, stackOptions{workers: 0}, redisDB)
	// A task waiting in a queue no worker serves.
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr, DB: redisDB})
	defer client.Close()
	if _, err := client.Enqueue(asynq.NewTask("aviary:health-probe", nil), asynq.Queue("health-probe")); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	jobs := s.do(http.MethodGet, "/2/compliance/jobs?type=tweets", s.bearer(), nil)
	if v := jobs.Header.Get("x-aviary-version"); v != e2eVersion {
		t.Fatalf("x-aviary-version %q on %d, want %q", v, jobs.Status, e2eVersion)
	}
	h := s.do(http.MethodGet, "/_aviary/health", "", nil)
	if h.Status != http.StatusOK || h.Body["status"] != "ok" || h.Body["version"] != e2eVersion {
		t.Fatalf("health: %d %s", h.Status, h.Raw)
	}
	queues, _ := h.Body["queues"].([]any)
	found := false
	for _, q := range queues {
		q := q.(map[string]any)
		found = found || q["name"] == "health-probe" && q["size"] == float64(1) && q["pending"] == float64(1)
	}
	if !found {
		t.Errorf("queue health-probe with one pending task not in %s", h.Raw)
	}
	deps, _ := h.Body["dependencies"].(map[string]any)
	for _, d := range []string{"database", "redis", "blobs"} {
		if deps[d] != "ok" {
			t.Errorf("dependency %s: %v", d, deps[d])
		}
	}
	surfaces, _ := h.Body["surfaces"].(map[string]any)
	for _, sf := range []string{"posts", "compliance", "activity", "ads/accounts", "ads/catalogs", "oauth", "queue_dashboard", "blobs"} {
		if surfaces[sf] != "serving" {
			t.Errorf("surface %s not serving: %v", sf, surfaces)
		}
	}
	req, err := http.NewRequest(http.MethodGet, s.sandboxURL+"/_aviary/health", nil)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := s.send(req)
	surfaces, _ = sandbox.Body["surfaces"].(map[string]any)
	if sandbox.Header.Get("x-aviary-version") != e2eVersion || surfaces["ads/accounts"] != "serving" || surfaces["posts"] != nil {
		t.Errorf("sandbox health: %d %s", sandbox.Status, sandbox.Raw)
	}
}
