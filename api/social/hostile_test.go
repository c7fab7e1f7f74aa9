package social_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TestHostileSocialEventsInspection: follows, mutes and blocks made with
// an app's tokens are that app's events in GET /_aviary/events, and never
// another app's.
func TestHostileSocialEventsInspection(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	for _, step := range []struct{ method, path string }{
		{"POST", "/2/users/" + reader + "/following"},
		{"POST", "/2/users/" + reader + "/muting"},
		{"POST", "/2/users/" + reader + "/blocking"},
	} {
		if r := b.Call(t, step.method, step.path, "oauth:reader", "application/json", target(b.Author.ID)); r.Status != http.StatusOK {
			t.Fatalf("%s %s = %d %s", step.method, step.path, r.Status, r.Raw)
		}
	}
	r := b.Get(t, "/_aviary/events", b.Bearer)
	var types []string
	for _, e := range r.Body["data"].([]any) {
		ev := e.(map[string]any)
		types = append(types, ev["type"].(string))
		if ev["user_id"] != reader || ev["subject_id"] != author {
			t.Errorf("event %v: want user %s, subject %s", ev, reader, author)
		}
	}
	if fmt.Sprint(types) != "[follow.follow mute.mute follow.unfollow block.block]" {
		t.Errorf("the app's events = %v (%s)", types, r.Raw)
	}
	if other := b.Get(t, "/_aviary/events", b.OtherBearer); len(other.Body["data"].([]any)) != 0 {
		t.Errorf("another app sees: %s", other.Raw)
	}
}

// TestHostileSocialRaces: concurrent follows, unfollows and blocks of the
// same pair leave a consistent graph: after a block no follow between
// the two remains, and the counters are never negative.
func TestHostileSocialRaces(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	var wg sync.WaitGroup
	statuses := make(chan int, 64)
	call := func(method, path, authz string, body []byte) {
		defer wg.Done()
		statuses <- b.Call(t, method, path, authz, "application/json", body).Status
	}
	for range 4 {
		wg.Add(5)
		go call("POST", "/2/users/"+reader+"/following", "oauth:reader", target(b.Author.ID))
		go call("POST", "/2/users/"+author+"/following", "oauth:author", target(b.User.ID))
		go call("DELETE", "/2/users/"+reader+"/following/"+author, "oauth:reader", nil)
		go call("POST", "/2/users/"+author+"/blocking", "oauth:author", target(b.User.ID))
		go call("DELETE", "/2/users/"+author+"/blocking/"+reader, "oauth:author", nil)
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK && s != http.StatusForbidden {
			t.Errorf("a racing change answered %d", s)
		}
	}
	var blocks, follows int
	b.Query(t, fmt.Sprintf(`SELECT (SELECT count(*) FROM blocks WHERE source_id = %[1]d AND target_id = %[2]d),
		(SELECT count(*) FROM follows WHERE (source_id = %[1]d AND target_id = %[2]d) OR (source_id = %[2]d AND target_id = %[1]d))`,
		b.Author.ID, b.User.ID), &blocks, &follows)
	if blocks == 1 && follows != 0 {
		t.Errorf("a block with %d follows between the two", follows)
	}
	for _, id := range []string{reader, author} {
		r := b.Get(t, "/2/users/"+id+"?user.fields=public_metrics", b.Bearer)
		for _, k := range []string{"followers_count", "following_count"} {
			if n, _ := apitest.Obj(r.Body, "data", "public_metrics", k).(float64); n < 0 || n > 1 {
				t.Errorf("user %s %s = %v", id, k, n)
			}
		}
	}
	// Once blocked, neither can follow the other.
	if r := b.Call(t, "POST", "/2/users/"+author+"/blocking", "oauth:author", "application/json", target(b.User.ID)); r.Status != http.StatusOK {
		t.Fatalf("block = %d %s", r.Status, r.Raw)
	}
	for _, c := range []struct{ who, as, whom string }{{reader, "oauth:reader", author}, {author, "oauth:author", reader}} {
		id, _ := apitest.StrconvID(c.whom)
		if r := b.Call(t, "POST", "/2/users/"+c.who+"/following", c.as, "application/json", target(id)); r.Status != http.StatusForbidden {
			t.Errorf("%s follows after the block = %d %s", c.as, r.Status, r.Raw)
		}
	}
}

// TestHostileSocialOddInput: odd bodies, path ids and pagination tokens
// are 400 invalid-request naming the parameter, never a 500.
func TestHostileSocialOddInput(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	follow := "/2/users/" + reader + "/following"
	cases := []struct{ name, method, path, body string }{
		{"target a number", "POST", follow, `{"target_user_id":` + author + `}`},
		{"target null", "POST", follow, `{"target_user_id":null}`},
		{"target beyond int64", "POST", follow, `{"target_user_id":"99999999999999999999"}`},
		{"target zero", "POST", follow, `{"target_user_id":"0"}`},
		{"target leading zero", "POST", follow, `{"target_user_id":"0` + author + `"}`},
		{"target unicode digits", "POST", follow, `{"target_user_id":"١٢٣"}`},
		{"target an array", "POST", follow, `{"target_user_id":["` + author + `"]}`},
		{"empty object", "POST", follow, `{}`},
		{"null body", "POST", follow, `null`},
		{"unknown key", "POST", follow, `{"target_user_id":"` + author + `","x":1}`},
		{"source beyond int64", "POST", "/2/users/99999999999999999999/following", `{"target_user_id":"` + author + `"}`},
		{"source with a leading zero", "POST", "/2/users/0" + reader + "/following", `{"target_user_id":"` + author + `"}`},
		{"unblock target with a leading zero", "DELETE", "/2/users/" + reader + "/blocking/0" + author, ``},
		{"unfollow target beyond int64", "DELETE", follow + "/99999999999999999999", ``},
		{"unmute target zero", "DELETE", "/2/users/" + reader + "/muting/0", ``},
		{"forged token", "GET", follow + "?pagination_token=AAAAAAAAAAAAAAAA", ``},
		{"lowercase token", "GET", follow + "?pagination_token=zzzzzzzzzzzzzzzz", ``},
		{"negative token", "GET", follow + "?pagination_token=VVVVVVVVVVVVU===", ``},
		{"max_results 0", "GET", "/2/users/" + reader + "/blocking?max_results=0", ``},
		{"max_results huge", "GET", "/2/users/" + reader + "/muting?max_results=99999999999999999999", ``},
	}
	for _, c := range cases {
		var body []byte
		ct := ""
		if c.body != "" {
			body, ct = []byte(c.body), "application/json"
		}
		r := b.Call(t, c.method, c.path, "oauth:reader", ct, body)
		if r.Status != http.StatusBadRequest || r.Body["type"] != "https://api.x.com/2/problems/invalid-request" {
			t.Errorf("%s: %s %s %s = %d %s", c.name, c.method, c.path, c.body, r.Status, r.Raw)
		}
	}
}

// TestHostileSocialPendingRequester: a pending follow request does not
// open a protected user's lists, nor count, nor append an event; once the
// protected user blocks the requester the request is gone.
func TestHostileSocialPendingRequester(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	ctx := t.Context()
	if _, err := b.DB.SetUserState(ctx, b.Author.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	r := b.Call(t, "POST", "/2/users/"+reader+"/following", "oauth:reader", "application/json", target(b.Author.ID))
	if r.Status != http.StatusOK || apitest.Obj(r.Body, "data", "pending_follow") != true {
		t.Fatalf("follow request = %d %s", r.Status, r.Raw)
	}
	for _, list := range []string{"following", "followers"} {
		r := b.Get(t, "/2/users/"+author+"/"+list, "oauth:reader")
		if r.Body["data"] != nil || apitest.Obj(r.Body, "errors") == nil {
			t.Errorf("the requester lists the protected user's %s: %s", list, r.Raw)
		}
	}
	if r := b.Get(t, "/2/users/"+author+"?user.fields=public_metrics", b.Bearer); apitest.Obj(r.Body, "data", "public_metrics", "followers_count") != float64(0) {
		t.Errorf("a pending request counted: %s", r.Raw)
	}
	if r := b.Get(t, "/_aviary/events?type=follow.", b.Bearer); apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("a pending request appended an event: %s", r.Raw)
	}
	if r := b.Call(t, "POST", "/2/users/"+author+"/blocking", "oauth:author", "application/json", target(b.User.ID)); r.Status != http.StatusOK {
		t.Fatalf("block = %d %s", r.Status, r.Raw)
	}
	var pending int
	b.Query(t, fmt.Sprintf(`SELECT count(*) FROM follows WHERE source_id = %d AND target_id = %d`, b.User.ID, b.Author.ID), &pending)
	if pending != 0 {
		t.Errorf("the request outlived the block")
	}
	if r := b.Get(t, "/_aviary/events?type=follow.", b.Bearer); apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("ending a request appended a follow event: %s", r.Raw)
	}
}

// TestHostileSocialScopes: each change needs its own write scope (a
// follows.write token neither mutes nor blocks, and so on), each private
// list its own read scope; a read-only OAuth 1.0a token changes nothing.
func TestHostileSocialScopes(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	base := []string{"tweet.read", "users.read"}
	tok := func(scopes ...string) string { return oauth2Token(t, b, b.User.ID, append(scopes, base...)...) }
	follows := tok("follows.read", "follows.write")
	mutes := tok("mute.read", "mute.write")
	blocks := tok("block.read", "block.write")
	reading := b.AddUser(t, "reading", "read")
	cases := []struct{ name, method, path, authz string }{
		{"follow with mute scopes", "POST", "/2/users/" + reader + "/following", mutes},
		{"mute with follow scopes", "POST", "/2/users/" + reader + "/muting", follows},
		{"block with mute scopes", "POST", "/2/users/" + reader + "/blocking", mutes},
		{"unblock with follow scopes", "DELETE", "/2/users/" + reader + "/blocking/" + author, follows},
		{"unmute with block scopes", "DELETE", "/2/users/" + reader + "/muting/" + author, blocks},
		{"unfollow with block scopes", "DELETE", "/2/users/" + reader + "/following/" + author, blocks},
		{"muting list with block scopes", "GET", "/2/users/" + reader + "/muting", blocks},
		{"blocking list with mute scopes", "GET", "/2/users/" + reader + "/blocking", mutes},
		{"following list with mute scopes", "GET", "/2/users/" + reader + "/following", mutes},
		{"blocking list app-only", "GET", "/2/users/" + reader + "/blocking", b.Bearer},
		{"read-only OAuth 1.0a follows", "POST", "/2/users/" + ids.Format(reading.ID) + "/following", "oauth:reading"},
	}
	for _, c := range cases {
		var body []byte
		if c.method == "POST" {
			body = target(b.Author.ID)
		}
		if r := b.Call(t, c.method, c.path, c.authz, "application/json", body); r.Status != http.StatusForbidden {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
		}
	}
	if r := b.Get(t, "/_aviary/events", b.Bearer); apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("refused changes appended events: %s", r.Raw)
	}
}
