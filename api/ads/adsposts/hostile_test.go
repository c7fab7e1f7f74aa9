package adsposts_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
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

// TestHostileAdsPostDeletedCards: a component card deleted through the
// API (marked) and a poll card deleted through the API (gone) can no
// longer go on a post, and nothing is stored for the refused posts.
func TestHostileAdsPostDeletedCards(t *testing.T) {
	f := newFixture(t)
	cards := "/12/accounts/" + f.acct.ID + "/cards"
	img := f.libraryMedia(t, storage.MediaTweetImage)
	comp := f.alice.DoJSON(t, http.MethodPost, cards, map[string]any{"name": "c", "components": []map[string]any{
		{"type": "MEDIA", "media_key": img},
		{"type": "DETAILS", "title": "t", "destination": map[string]any{"type": "WEBSITE", "url": "https://example.com"}}}}).
		Status(t, http.StatusOK).Data(t)
	poll := f.alice.Post(t, cards+"/poll", url.Values{"name": {"p"}, "duration_in_minutes": {"5"}, "first_choice": {"a"}, "second_choice": {"b"}}).
		Status(t, http.StatusOK).Data(t)
	f.alice.Delete(t, cards+"/"+comp["id"].(string), nil).Status(t, http.StatusOK)
	f.alice.Delete(t, cards+"/poll/"+poll["id"].(string), nil).Status(t, http.StatusOK)
	before := f.counts(t)
	for _, c := range []map[string]any{comp, poll} {
		uri := c["card_uri"].(string)
		r := f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"x"}, "card_uri": {uri}})
		r.Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "card_uri")
	}
	if after := f.counts(t); after != before {
		t.Errorf("refused posts stored rows: %v -> %v", before, after)
	}
}

// TestHostileAdsPostCardDeleteRace: posts made with a card while the card
// is deleted either succeed (made before the delete) or are refused
// naming card_uri; never a server error, and every post stored was made
// before the card's deletion.
func TestHostileAdsPostCardDeleteRace(t *testing.T) {
	f := newFixture(t)
	cards := "/12/accounts/" + f.acct.ID + "/cards"
	poll := f.alice.Post(t, cards+"/poll", url.Values{"name": {"p"}, "duration_in_minutes": {"5"}, "first_choice": {"a"}, "second_choice": {"b"}}).
		Status(t, http.StatusOK).Data(t)
	uri := poll["card_uri"].(string)
	const n = 12
	codes := make(chan int, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			r := f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"race " + strconv.Itoa(i)}, "card_uri": {uri}})
			if r.Code == http.StatusBadRequest && r.FirstError().Parameter != "card_uri" {
				t.Errorf("refused naming %q: %s", r.FirstError().Parameter, r.Raw)
			}
			codes <- r.Code
		}()
		if i == n/2 {
			f.alice.Delete(t, cards+"/poll/"+poll["id"].(string), nil).Status(t, http.StatusOK)
		}
	}
	for range n {
		<-done
	}
	close(codes)
	ok := 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
		default:
			t.Errorf("a post racing the card's delete answered %d", c)
		}
	}
	var stored int
	f.s.Scan(t, `SELECT count(*) FROM posts WHERE card_uri = $1`, []any{uri}, &stored)
	if stored != ok {
		t.Errorf("%d posts answered 200 but %d stored with the card", ok, stored)
	}
	f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"after"}, "card_uri": {uri}}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "card_uri")
}

// TestHostileAdsPostNameIsTheAccounts: a post's name is the label of the
// account that made (or named) it. Another account that may show the same
// author's posts (bob uses both) does not read it, find the post by it,
// nor overwrite it.
func TestHostileAdsPostNameIsTheAccounts(t *testing.T) {
	f := newFixture(t)
	bobs := f.bob.Account(t)
	dave := f.s.User(t, "dave")
	if err := f.s.DB.GrantAdAccount(t.Context(), bobs.ID, dave.User.ID); err != nil {
		t.Fatalf("grant: %v", err)
	}
	postID := f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.bob.User)}, "text": {"made through alice's account"},
		"name": {"Alice secret plan"}}).Status(t, http.StatusOK).Data(t)["id_str"].(string)
	other := "/12/accounts/" + bobs.ID + "/tweets"
	q := url.Values{"tweet_type": {"PUBLISHED"}, "user_id": {id(f.bob.User)}, "tweet_ids": {postID}}
	got := dave.Get(t, other, q).Status(t, http.StatusOK).List(t)
	if len(got) != 1 || got[0]["name"] != nil {
		t.Errorf("bob's account shows alice's account's name: %v", got)
	}
	if got := dave.Get(t, other, adstest.With(q, "name", "alice")).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Errorf("bob's account finds the post by alice's account's name: %v", got)
	}
	dave.Put(t, other+"/"+postID+"/name", url.Values{"name": {"pwned"}}).Fails(t, http.StatusNotFound, "TWEET_NOT_FOUND", "tweet_id")
	mine := f.alice.Get(t, f.listPath(), url.Values{"tweet_type": {"PUBLISHED"}, "user_id": {id(f.bob.User)}, "tweet_ids": {postID}}).
		Status(t, http.StatusOK).List(t)
	if len(mine) != 1 || mine[0]["name"] != "Alice secret plan" {
		t.Errorf("alice's account's name after bob's account's attempts: %v", mine)
	}
}

// TestHostileAdsPostAsAnotherGrantee: a user granted access to an
// account may post as the account's owner (who granted it) or as
// themselves, not as another user the owner also granted access: that
// user granted the caller nothing.
func TestHostileAdsPostAsAnotherGrantee(t *testing.T) {
	f := newFixture(t)
	carol := f.s.User(t, "carol")
	if err := f.s.DB.GrantAdAccount(t.Context(), f.acct.ID, carol.User.ID); err != nil {
		t.Fatalf("grant: %v", err)
	}
	before := f.counts(t)
	r := f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(carol.User)}, "text": {"words put in carol's mouth"}})
	r.Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "as_user_id")
	if after := f.counts(t); after != before {
		t.Errorf("the refused post stored rows: %v -> %v", before, after)
	}
	// the owner and the caller themselves stay allowed
	f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"for alice"}}).Status(t, http.StatusOK)
	f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.bob.User)}, "text": {"for bob"}}).Status(t, http.StatusOK)
	carol.Post(t, f.createPath(), url.Values{"as_user_id": {id(carol.User)}, "text": {"for carol"}}).Status(t, http.StatusOK)
}
