package users_test

import (
	"fmt"
	"testing"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage/postgres"
)

func TestUserLookups(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	pinned := b.Create(t, "oauth:author", map[string]any{"text": "pin me"})
	desc, pin := "writes things", int64(0)
	fmt.Sscan(pinned, &pin)
	if _, err := b.DB.SetUserProfile(t.Context(), b.Author.ID, postgres.ProfileChange{Description: &desc, PinnedPostID: &pin}); err != nil {
		t.Fatal(err)
	}
	me := b.Get(t, "/2/users/me?user.fields=description,public_metrics,pinned_tweet_id&expansions=pinned_tweet_id", "oauth:author")
	d := me.Body["data"].(map[string]any)
	if d["username"] != "author" || d["description"] != desc || d["pinned_tweet_id"] != pinned ||
		apitest.Obj(d, "public_metrics", "tweet_count") != float64(1) || apitest.Obj(me.Body, "includes", "tweets", "0", "id") != pinned {
		t.Errorf("/me = %s", me.Raw)
	}
	byID := b.Get(t, "/2/users/"+fmt.Sprint(b.User.ID), b.Bearer)
	if apitest.Obj(byID.Body, "data", "username") != "reader" || len(byID.Body["data"].(map[string]any)) != 3 {
		t.Errorf("by id = %s", byID.Raw)
	}
	byName := b.Get(t, "/2/users/by/username/AUTHOR", b.Bearer)
	if apitest.Obj(byName.Body, "data", "id") != fmt.Sprint(b.Author.ID) {
		t.Errorf("by username = %s", byName.Raw)
	}
	missing := b.Get(t, "/2/users?ids=42,"+fmt.Sprint(b.User.ID), b.Bearer)
	if len(missing.Body["data"].([]any)) != 1 || apitest.Obj(missing.Body, "errors", "0", "resource_id") != "42" {
		t.Errorf("ids with a missing one = %s", missing.Raw)
	}
	if r := b.Call(t, "GET", "/2/users/me", b.Bearer, "", nil); r.Status != 403 {
		t.Errorf("/me with a bearer token = %d", r.Status)
	}
	if r := b.Call(t, "GET", "/2/users/by/username/no-dash", b.Bearer, "", nil); r.Status != 400 {
		t.Errorf("bad username = %d", r.Status)
	}
}
