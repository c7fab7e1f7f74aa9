package posts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/posts"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

func TestPostsOwnership(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "mine"}))
	if r.Status != 201 {
		t.Fatalf("create post: %d %s", r.Status, r.Raw)
	}
	id := r.Body["data"].(map[string]any)["id"].(string)
	if r := b.Call(t, "DELETE", "/2/tweets/"+id, "oauth:reader", "", nil); r.Status != 403 || r.Body["type"] != apitest.Problems+"not-authorized-for-resource" {
		t.Fatalf("delete other's post: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "DELETE", "/2/tweets/"+id, "oauth:author", "", nil); r.Status != 200 || r.Raw != "{\"data\":{\"deleted\":true}}\n" {
		t.Fatalf("delete own post: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "DELETE", "/2/tweets/"+id, "oauth:author", "", nil); r.Status != 404 {
		t.Fatalf("second delete: %d %s", r.Status, r.Raw)
	}
	n, _ := apitest.StrconvID(id)
	p, err := b.DB.PostByID(context.Background(), n)
	if err != nil || p.DeletedAt == nil || p.AuthorID != b.Author.ID || ids.Format(p.ID) != id {
		t.Fatalf("stored post %+v %v", p, err)
	}
}

// TestPostCreation24HourLimits: POST /2/tweets counts each post against
// the user's and the app's 24-hour limits (set to 2 and 3 here) beside
// the 15-minute one and reports each in the platform's headers
// (x-user-limit-24hour-*, x-app-limit-24hour-*, resetting at the next UTC
// midnight). The user's third post is the platform's 429, with
// Retry-After until the reset, and costs the app nothing; the app's
// fourth post, by another user, is refused by the app's limit.
func TestPostCreation24HourLimits(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1, func(d *api.Deps) {
		p := *d.Modules.Posts
		p.CreatesPerDay = posts.DayLimits{App: 3, User: 2}
		d.Modules.Posts = &p
	})
	_, third := apitest.NewUser(t, b.DB, b.App, "third")
	post := func(tok storage.AccessToken) (int, http.Header, map[string]any) {
		req, _ := http.NewRequest("POST", b.Srv.URL+"/2/tweets", bytes.NewReader(apitest.JSONBody(map[string]any{"text": "hi " + tok.Token[:4] + strconv.FormatInt(time.Now().UnixNano(), 36)})))
		req.Header.Set("Content-Type", "application/json")
		if err := auth.SignRequest(req, "", b.App.ConsumerKey, b.App.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, resp.Header, body
	}
	if left := time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)); left < 10*time.Second {
		time.Sleep(left + time.Second) // the windows would turn over mid-test
	}
	midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Unix()
	want := func(h http.Header, prefix string, limit, remaining int) {
		t.Helper()
		for name, v := range map[string]string{"limit": strconv.Itoa(limit), "remaining": strconv.Itoa(remaining), "reset": strconv.FormatInt(midnight, 10)} {
			if got := h.Get(prefix + "-" + name); got != v {
				t.Errorf("%s-%s = %q, want %q", prefix, name, got, v)
			}
		}
	}
	for i, tt := range []struct {
		tok                storage.AccessToken
		status, user, app  int
		refusedBy          string
		rateLimitRemaining string
		sendsAppDay        bool
	}{
		{tok: b.AuthorToken, status: 201, user: 1, app: 2, rateLimitRemaining: "199", sendsAppDay: true},
		{tok: b.AuthorToken, status: 201, user: 0, app: 1, rateLimitRemaining: "198", sendsAppDay: true},
		{tok: b.AuthorToken, status: 429, user: 0, refusedBy: "x-user-limit-24hour", rateLimitRemaining: "197"},
		{tok: b.Token, status: 201, user: 1, app: 0, rateLimitRemaining: "199", sendsAppDay: true},
		{tok: third, status: 429, user: 1, app: 0, refusedBy: "x-app-limit-24hour", rateLimitRemaining: "199", sendsAppDay: true},
	} {
		status, h, body := post(tt.tok)
		if status != tt.status {
			t.Fatalf("post %d: status %d, want %d: %v", i+1, status, tt.status, body)
		}
		if got := h.Get("x-rate-limit-remaining"); got != tt.rateLimitRemaining || h.Get("x-rate-limit-limit") != "200" {
			t.Errorf("post %d: x-rate-limit-limit %q remaining %q, want 200 and %s", i+1, h.Get("x-rate-limit-limit"), got, tt.rateLimitRemaining)
		}
		want(h, "x-user-limit-24hour", 2, tt.user)
		if tt.sendsAppDay {
			want(h, "x-app-limit-24hour", 3, tt.app)
		} else if h.Get("x-app-limit-24hour-limit") != "" {
			t.Errorf("post %d: refused by the user's limit, yet counted by the app's: %v", i+1, h)
		}
		if status != http.StatusTooManyRequests {
			continue
		}
		if body["type"] != "about:blank" || body["title"] != "Too Many Requests" || body["status"] != float64(429) {
			t.Errorf("post %d (%s): problem %v, want about:blank Too Many Requests 429", i+1, tt.refusedBy, body)
		}
		retry, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64)
		if left := midnight - time.Now().Unix(); err != nil || retry < left-2 || retry > left+1 {
			t.Errorf("post %d: Retry-After %q, want about %d (until the 24-hour reset)", i+1, h.Get("Retry-After"), left)
		}
	}
}
