package promoted_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// post stores a live post by author and returns its id as the API takes it.
func post(t *testing.T, s *adstest.Server, author storage.User) string {
	t.Helper()
	return strconv.FormatInt(factory.Post(t, s.DB, &factory.PostOpts{Author: author}).ID, 10)
}

func ids(items []map[string]any) string {
	var out []string
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return strings.Join(out, ",")
}

// TestPromotedTweetsLifecycle: promote posts, list, get, delete, with
// history entries; the promoted tweets of a deleted line item are not
// deleted but show only with with_deleted=true.
func TestPromotedTweetsLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	_, campaign, li := factory.AdsChain(t, s.DB, acct.ID)
	other := factory.LineItem(t, s.DB, acct.ID, campaign)
	base := "/12/accounts/" + acct.ID + "/promoted_tweets"
	p1, p2 := post(t, s, alice.User), post(t, s, alice.User)
	r := alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {p1 + ", " + p2}}).Status(t, http.StatusOK)
	created := r.List(t)
	if len(created) != 2 || r.Body["total_count"] != float64(2) || r.Body["next_cursor"] != nil {
		t.Fatalf("create answered %s", r.Raw)
	}
	pt := created[0]
	want := map[string]any{"line_item_id": li, "tweet_id": p1, "entity_status": "ACTIVE",
		"approval_status": "ACCEPTED", "deleted": false}
	for k, v := range want {
		if pt[k] != v {
			t.Errorf("%s = %v, want %v", k, pt[k], v)
		}
	}
	if !strings.Contains(r.Raw, `"tweet_ids":[`+p1+`,`+p2+`]`) {
		t.Errorf("tweet_ids not echoed as numbers: %s", r.Raw)
	}
	second := alice.Post(t, base, url.Values{"line_item_id": {other}, "tweet_ids": {post(t, s, alice.User)}}).Status(t, http.StatusOK).List(t)[0]
	id, secondID := pt["id"].(string), second["id"].(string)
	alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK)
	if got := ids(alice.Get(t, base, url.Values{"line_item_ids": {li}}).Status(t, http.StatusOK).List(t)); got != id+","+created[1]["id"].(string) {
		t.Errorf("line_item_ids filter = %s", got)
	}
	if got := ids(alice.Get(t, base, url.Values{"promoted_tweet_ids": {secondID}}).Status(t, http.StatusOK).List(t)); got != secondID {
		t.Errorf("promoted_tweet_ids filter = %s", got)
	}
	if d := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t); d["deleted"] != true {
		t.Errorf("delete answered %v", d)
	}
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "PROMOTED_TWEET_NOT_FOUND", "promoted_tweet_id")
	alice.Get(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "PROMOTED_TWEET_NOT_FOUND", "promoted_tweet_id")

	// the line item of the second post is deleted (by SQL: line items are
	// another package's)
	s.Exec(t, `UPDATE line_items SET deleted = true WHERE id = $1`, []any{other}...)
	if got := ids(alice.Get(t, base, nil).Status(t, http.StatusOK).List(t)); got != created[1]["id"].(string) {
		t.Errorf("list without with_deleted = %s, want only the live one", got)
	}
	alice.Get(t, base+"/"+secondID, nil).Fails(t, http.StatusNotFound, "PROMOTED_TWEET_NOT_FOUND", "promoted_tweet_id")
	withDeleted := url.Values{"with_deleted": {"true"}}
	if got := alice.Get(t, base+"/"+secondID, withDeleted).Status(t, http.StatusOK).Data(t); got["deleted"] != false {
		t.Errorf("promoted tweet of a deleted line item = %v, want deleted false", got)
	}
	if got := alice.Get(t, base, withDeleted).Status(t, http.StatusOK).List(t); len(got) != 3 {
		t.Errorf("list with_deleted has %d, want 3", len(got))
	}
	alice.Post(t, base, url.Values{"line_item_id": {other}, "tweet_ids": {post(t, s, alice.User)}}).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")

	var creates, deletes int
	s.Scan(t, `SELECT count(*) FILTER (WHERE change_type = 'CREATE'), count(*) FILTER (WHERE change_type = 'DELETE')
		FROM account_history WHERE entity_type = 'PROMOTED_TWEET' AND account_id = $1`, []any{acct.ID}, &creates, &deletes)
	if creates != 3 || deletes != 1 {
		t.Errorf("history: %d creates, %d deletes; want 3 and 1", creates, deletes)
	}
}

// TestPromotedTweetsRejects: bad input names the parameter and creates
// nothing; another account's line item or promoted tweet is not found,
// exactly like a missing one.
func TestPromotedTweetsRejects(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	_, _, li := factory.AdsChain(t, s.DB, acct.ID)
	bobs := bob.Account(t)
	_, _, bobsLI := factory.AdsChain(t, s.DB, bobs.ID)
	bobsPost := post(t, s, bob.User)
	bobsPT := bob.Post(t, "/12/accounts/"+bobs.ID+"/promoted_tweets", url.Values{"line_item_id": {bobsLI}, "tweet_ids": {bobsPost}}).
		Status(t, http.StatusOK).List(t)[0]["id"].(string)
	base := "/12/accounts/" + acct.ID + "/promoted_tweets"
	promoted, fresh := post(t, s, alice.User), post(t, s, alice.User)
	alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {promoted}}).Status(t, http.StatusOK)
	deletedAt := time.Now().UTC()
	deleted := strconv.FormatInt(factory.Post(t, s.DB, &factory.PostOpts{Author: alice.User, DeletedAt: &deletedAt}).ID, 10)
	stranger := post(t, s, factory.User(t, s.DB, nil)) // a user with no access to the account
	many := strings.TrimSuffix(strings.Repeat("1,", 51), ",")
	tests := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"missing line item", url.Values{"tweet_ids": {"1"}}, 400, "MISSING_PARAMETER", "line_item_id"},
		{"missing tweet ids", url.Values{"line_item_id": {li}}, 400, "MISSING_PARAMETER", "tweet_ids"},
		{"empty tweet ids", url.Values{"line_item_id": {li}, "tweet_ids": {""}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"tweet id not numeric", url.Values{"line_item_id": {li}, "tweet_ids": {"1,abc"}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"tweet id negative", url.Values{"line_item_id": {li}, "tweet_ids": {"-4"}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"empty entry", url.Values{"line_item_id": {li}, "tweet_ids": {"1,,2"}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"more than 50", url.Values{"line_item_id": {li}, "tweet_ids": {many}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"repeated post", url.Values{"line_item_id": {li}, "tweet_ids": {"3,3"}}, 400, "INVALID_PARAMETER", "tweet_ids"},
		{"already promoted", url.Values{"line_item_id": {li}, "tweet_ids": {fresh + "," + promoted}}, 400, "DUPLICATE_TWEET", "tweet_ids"},
		{"no such post", url.Values{"line_item_id": {li}, "tweet_ids": {fresh + ",999999999999999"}}, 404, "TWEET_NOT_FOUND", "tweet_ids"},
		{"deleted post", url.Values{"line_item_id": {li}, "tweet_ids": {fresh + "," + deleted}}, 404, "TWEET_NOT_FOUND", "tweet_ids"},
		{"another account's user's post", url.Values{"line_item_id": {li}, "tweet_ids": {bobsPost}}, 404, "TWEET_NOT_FOUND", "tweet_ids"},
		{"a post of a user without the account", url.Values{"line_item_id": {li}, "tweet_ids": {stranger + "," + fresh}}, 404, "TWEET_NOT_FOUND", "tweet_ids"},
		{"unknown line item", url.Values{"line_item_id": {"nosuchli"}, "tweet_ids": {fresh}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"another account's line item", url.Values{"line_item_id": {bobsLI}, "tweet_ids": {fresh}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Post(t, base, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	if got := alice.Get(t, base, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(got) != 1 {
		t.Fatalf("refused creates left %d promoted tweets, want 1", len(got))
	}
	var entries int
	s.Scan(t, `SELECT count(*) FROM account_history WHERE entity_type = 'PROMOTED_TWEET' AND account_id = $1`, []any{acct.ID}, &entries)
	if entries != 1 {
		t.Fatalf("refused creates wrote history: %d entries, want 1", entries)
	}
	// the missing post is named; a post of another account's user answers
	// exactly like a missing one
	r := alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {fresh + ",999999999999999"}})
	if !strings.Contains(r.Raw, `"tweet_ids"`) || !strings.Contains(r.Raw, "999999999999999") {
		t.Errorf("missing post not named: %s", r.Raw)
	}
	theirPost := alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {bobsPost}})
	noPost := alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {"999999999999999"}})
	if strings.ReplaceAll(theirPost.Raw, bobsPost, "ID") != strings.ReplaceAll(noPost.Raw, "999999999999999", "ID") {
		t.Errorf("answers differ:\n%s\n%s", theirPost.Raw, noPost.Raw)
	}
	// a post of a user granted the account may be promoted
	granted := factory.User(t, s.DB, nil)
	if err := s.DB.GrantAdAccount(t.Context(), acct.ID, granted.ID); err != nil {
		t.Fatal(err)
	}
	alice.Post(t, base, url.Values{"line_item_id": {li}, "tweet_ids": {post(t, s, granted)}}).Status(t, http.StatusOK)
	tooMany := strings.TrimSuffix(strings.Repeat("a,", 201), ",")
	listBad := []struct {
		name   string
		params url.Values
		param  string
	}{
		{"too many line item ids", url.Values{"line_item_ids": {tooMany}}, "line_item_ids"},
		{"too many promoted tweet ids", url.Values{"promoted_tweet_ids": {tooMany}}, "promoted_tweet_ids"},
		{"unknown sort", url.Values{"sort_by": {"tweet-asc"}}, "sort_by"},
		{"with_deleted not boolean", url.Values{"with_deleted": {"maybe"}}, "with_deleted"},
	}
	for _, tt := range listBad {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, base, tt.params).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", tt.param)
		})
	}
	theirs := alice.Get(t, base+"/"+bobsPT, nil)
	theirs.Fails(t, http.StatusNotFound, "PROMOTED_TWEET_NOT_FOUND", "promoted_tweet_id")
	none := alice.Get(t, base+"/nosuchpt", nil)
	if strings.ReplaceAll(theirs.Raw, bobsPT, "ID") != strings.ReplaceAll(none.Raw, "nosuchpt", "ID") {
		t.Errorf("answers differ:\n%s\n%s", theirs.Raw, none.Raw)
	}
	alice.Delete(t, base+"/"+bobsPT, nil).Fails(t, http.StatusNotFound, "PROMOTED_TWEET_NOT_FOUND", "promoted_tweet_id")
	bob.Get(t, "/12/accounts/"+bobs.ID+"/promoted_tweets/"+bobsPT, nil).Status(t, http.StatusOK)
	alice.Get(t, "/12/accounts/"+bobs.ID+"/promoted_tweets", nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
}
