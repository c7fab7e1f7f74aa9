package adsposts_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// TestHostileAdsPostEditKeepsAdsFields: an ads post edited through the
// core API (POST /2/tweets with edit_options, storage EditPost) is still
// the account's nullcast post with its name and conversation_settings:
// an edit must not turn a promoted-only post into an organic one.
func TestHostileAdsPostEditKeepsAdsFields(t *testing.T) {
	f := newFixture(t)
	uri := card(t, f.s, f.acct.ID, false)
	d := f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"before the edit"}, "name": {"Launch"},
		"conversation_settings": {"MENTIONED_USERS"}, "card_uri": {uri}}).Status(t, http.StatusOK).Data(t)
	var prev int64
	f.s.Scan(t, `SELECT id FROM posts WHERE id = $1`, []any{d["id_str"]}, &prev)
	edited, err := f.s.DB.EditPost(t.Context(), prev, storage.Post{AuthorID: f.alice.User.ID, Text: "after the edit", Lang: "en"}, time.Now().UTC())
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	got := f.alice.Get(t, f.listPath(), url.Values{"tweet_type": {"PUBLISHED"}, "timeline_type": {"ALL"}}).Status(t, http.StatusOK).List(t)
	if len(got) != 1 || got[0]["id_str"] != itoa(edited.ID) {
		t.Fatalf("list after the edit = %v, want only the new version %d", got, edited.ID)
	}
	check := map[string]any{"full_text": "after the edit", "nullcast": true, "name": "Launch", "conversation_settings": "MENTIONED_USERS"}
	for k, v := range check {
		if got[0][k] != v {
			t.Errorf("after the edit %s = %v, want %v", k, got[0][k], v)
		}
	}
	if s := got[0]["scopes"].(map[string]any); s["followers"] != false {
		t.Errorf("the edited nullcast post reaches followers: scopes %v", s)
	}
	if organic := f.alice.Get(t, f.listPath(), url.Values{"tweet_type": {"PUBLISHED"}, "timeline_type": {"ORGANIC"}}).Status(t, http.StatusOK).List(t); len(organic) != 0 {
		t.Errorf("the edited nullcast post lists as organic: %v", organic)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
