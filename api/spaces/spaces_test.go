package spaces_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/spaces"
	"github.com/aviary-dev/aviary/storage/postgres"
)

func setup(t *testing.T) *apitest.Bundle {
	t.Helper()
	return apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Spaces = spaces.New(spaces.Deps{Store: db})
	})
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSpaceLookup: GET /2/spaces/{id} answers a Space of `admin space
// start` with the default fields (id, state), the fields asked for, the
// host expanded; an ended Space shows ended; an unknown id is a 200 with
// its error; a malformed id and an unknown field are 400s. The answers
// match the platform's description when it is at hand.
func TestSpaceLookup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	router := apitest.OptionalOpenAPI(t)
	ctx := t.Context()
	s, err := b.DB.StartSpace(ctx, b.Author.ID, "Dawn chorus")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, want int) apitest.Reply {
		t.Helper()
		r := b.Get(t, path, b.Bearer)
		if r.Status != want {
			t.Fatalf("GET %s answered %d %s, want %d", path, r.Status, r.Raw, want)
		}
		if router != nil {
			if err := apitest.ValidateResponse(ctx, router, http.MethodGet, path, r); err != nil {
				t.Errorf("GET %s: %v", path, err)
			}
		}
		return r
	}
	r := get("/2/spaces/"+s.ID, http.StatusOK)
	if got := keys(r.Body["data"]); !slices.Equal(got, []string{"id", "state"}) || apitest.Obj(r.Body, "data", "state") != "live" {
		t.Errorf("default fields: %s", r.Raw)
	}
	r = get("/2/spaces/"+s.ID+"?space.fields=title,host_ids,creator_id,created_at,started_at&expansions=host_ids&user.fields=username", http.StatusOK)
	data, _ := r.Body["data"].(map[string]any)
	hosts, _ := data["host_ids"].([]any)
	if data["title"] != "Dawn chorus" || len(hosts) != 1 || hosts[0] != apitest.Obj(r.Body, "includes", "users").([]any)[0].(map[string]any)["id"] ||
		data["creator_id"] != hosts[0] || data["created_at"] == nil || data["started_at"] == nil {
		t.Errorf("fields and expansion: %s", r.Raw)
	}
	if u := apitest.Obj(r.Body, "includes", "users").([]any)[0].(map[string]any); u["username"] != b.Author.Username {
		t.Errorf("included host %v", u)
	}
	if _, err := b.DB.EndSpace(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	r = get("/2/spaces/"+s.ID+"?space.fields=ended_at", http.StatusOK)
	if apitest.Obj(r.Body, "data", "state") != "ended" || apitest.Obj(r.Body, "data", "ended_at") == nil {
		t.Errorf("ended: %s", r.Raw)
	}
	r = get("/2/spaces/1nosuchspace0", http.StatusOK)
	if r.Body["data"] != nil || !strings.Contains(string(r.Raw), "resource-not-found") {
		t.Errorf("unknown space: %s", r.Raw)
	}
	for _, path := range []string{"/2/spaces/not-a-space", "/2/spaces/" + s.ID + "?space.fields=colour"} {
		if r := b.Call(t, http.MethodGet, path, b.Bearer, "", nil); r.Status != http.StatusBadRequest {
			t.Errorf("GET %s answered %d %s, want 400", path, r.Status, r.Raw)
		}
	}
}
