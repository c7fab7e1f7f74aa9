package inspect_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/aviary-dev/aviary/api/apitest"
)

func TestEventsInspection(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	var posts []string
	for i := range 3 {
		posts = append(posts, b.Create(t, "oauth:author", map[string]any{"text": fmt.Sprintf("inspected %d", i)}))
	}
	like := b.Call(t, "POST", "/2/users/"+fmt.Sprint(b.Author.ID)+"/likes", "oauth:author", "application/json",
		apitest.JSONBody(map[string]any{"tweet_id": posts[0]}))
	if like.Status != http.StatusOK {
		t.Fatalf("like: %d %s", like.Status, like.Raw)
	}
	all := b.Get(t, "/_aviary/events", b.Bearer)
	if all.Status != http.StatusOK {
		t.Fatalf("events: %d %s", all.Status, all.Raw)
	}
	data, _ := all.Body["data"].([]any)
	var types []string
	for _, e := range data {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if fmt.Sprint(types) != "[post.create post.create post.create like.create]" {
		t.Fatalf("types %v in %s", types, all.Raw)
	}
	first := data[0].(map[string]any)
	if first["subject_id"] != posts[0] || first["user_id"] != fmt.Sprint(b.Author.ID) || first["payload"] == nil || first["created_at"] == nil {
		t.Errorf("first event %v", first)
	}

	cases := []struct {
		name, query string
		want        int
		next        bool
	}{
		{"type prefix", "?type=post.", 3, false},
		{"exact type", "?type=like.create", 1, false},
		{"after a seq", "?since_seq=" + first["seq"].(string), 3, false},
		{"a page", "?max_results=2", 2, true},
	}
	for _, tc := range cases {
		r := b.Get(t, "/_aviary/events"+tc.query, b.Bearer)
		got, _ := r.Body["data"].([]any)
		meta, _ := r.Body["meta"].(map[string]any)
		if r.Status != http.StatusOK || len(got) != tc.want || meta["result_count"] != float64(tc.want) || (meta["next_token"] != nil) != tc.next {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
		if tc.next {
			rest := b.Get(t, "/_aviary/events?pagination_token="+meta["next_token"].(string), b.Bearer)
			if n, _ := rest.Body["data"].([]any); len(n) != 2 {
				t.Errorf("next page: %s", rest.Raw)
			}
		}
	}

	if other := b.Get(t, "/_aviary/events", b.OtherBearer); other.Status != http.StatusOK || len(other.Body["data"].([]any)) != 0 {
		t.Errorf("another app sees: %d %s", other.Status, other.Raw)
	}
	for _, bad := range []string{"?max_results=0", "?max_results=1001", "?since_seq=abc", "?pagination_token=x", "?nope=1"} {
		if r := b.Call(t, "GET", "/_aviary/events"+bad, b.Bearer, "", nil); r.Status != http.StatusBadRequest || r.Body["type"] == nil {
			t.Errorf("%s: %d %s", bad, r.Status, r.Raw)
		}
	}
	if r := b.Call(t, "GET", "/_aviary/events", "oauth:author", "", nil); r.Status != http.StatusForbidden {
		t.Errorf("user context: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "GET", "/_aviary/events", "", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %s", r.Status, r.Raw)
	}
}
