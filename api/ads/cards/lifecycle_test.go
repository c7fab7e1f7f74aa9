package cards_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestComponentCardList: only component cards are listed; card_types,
// card_id, card_uris and q (case-insensitive name prefix) filter; count
// pages with a cursor; the list bounds are enforced.
func TestComponentCardList(t *testing.T) {
	e := newEnv(t)
	img, vid := e.image(t), e.video(t)
	mk := func(name string, comps ...obj) map[string]any {
		return e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": name, "components": comps}).Status(t, http.StatusOK).Data(t)
	}
	a := mk("Spring sale", mediaComp(img), details)
	b := mk("spring zoo", mediaComp(vid), button)
	c := mk("Autumn", mediaComp(img), button)
	e.alice.Post(t, e.base+"/poll", url.Values{"name": {"Spring poll"}, "duration_in_minutes": {"60"},
		"first_choice": {"a"}, "second_choice": {"b"}}).Status(t, http.StatusOK)
	tests := []struct {
		name   string
		params url.Values
		want   []map[string]any
	}{
		{"all, newest first", nil, []map[string]any{c, b, a}},
		{"card_types", url.Values{"card_types": {"IMAGE_WEBSITE,VIDEO_APP"}}, []map[string]any{b, a}},
		{"card_id", url.Values{"card_id": {a["id"].(string) + "," + c["id"].(string)}}, []map[string]any{c, a}},
		{"card_uris", url.Values{"card_uris": {b["card_uri"].(string)}}, []map[string]any{b}},
		{"q prefix any case", url.Values{"q": {"SPRING"}}, []map[string]any{b, a}},
		{"q not infix", url.Values{"q": {"sale"}}, nil},
		{"sort by name", url.Values{"sort_by": {"name-asc"}}, []map[string]any{c, a, b}},
		{"include_legacy_cards", url.Values{"include_legacy_cards": {"true"}}, []map[string]any{c, b, a}},
	}
	for _, tc := range tests {
		got := e.alice.Get(t, e.base, tc.params).Status(t, http.StatusOK).List(t)
		if ids(got) != ids(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, ids(got), ids(tc.want))
		}
	}
	first := e.alice.Get(t, e.base, url.Values{"count": {"2"}}).Status(t, http.StatusOK)
	next := e.alice.Get(t, e.base, url.Values{"count": {"2"}, "cursor": {first.NextCursor()}}).Status(t, http.StatusOK)
	if ids(first.List(t)) != ids([]map[string]any{c, b}) || ids(next.List(t)) != ids([]map[string]any{a}) || next.NextCursor() != "" {
		t.Fatalf("pages %s / %s (cursor %q)", ids(first.List(t)), ids(next.List(t)), next.NextCursor())
	}
	many := strings.TrimSuffix(strings.Repeat("x1,", 201), ",")
	for _, tc := range []struct {
		params url.Values
		param  string
	}{
		{url.Values{"count": {"201"}}, "count"},
		{url.Values{"count": {"0"}}, "count"},
		{url.Values{"card_id": {many}}, "card_id"},
		{url.Values{"card_uris": {many}}, "card_uris"},
		{url.Values{"q": {strings.Repeat("q", 81)}}, "q"},
		{url.Values{"card_types": {"TEXT_POLLS"}}, "card_types"},
		{url.Values{"sort_by": {"media_key-asc"}}, "sort_by"},
		{url.Values{"with_total_count": {"true"}}, "with_total_count"},
	} {
		e.alice.Get(t, e.base, tc.params).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", tc.param)
	}
	if got := e.alice.Get(t, e.base, url.Values{"count": {"200"}, "q": {strings.Repeat("q", 80)}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("q of 80: %v", got)
	}
}

// TestComponentCardUpdateAndDelete: PUT replaces the name and the
// components (card_type follows); DELETE marks the card deleted: it is
// then found only with with_deleted, and cannot be changed or deleted
// again.
func TestComponentCardUpdateAndDelete(t *testing.T) {
	e := newEnv(t)
	img, vid := e.image(t), e.video(t)
	c := e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": "first", "components": []obj{mediaComp(img), details}}).Status(t, http.StatusOK).Data(t)
	id := c["id"].(string)
	item := e.base + "/" + id
	renamed := e.alice.DoJSON(t, http.MethodPut, item, obj{"name": "second"}).Status(t, http.StatusOK).Data(t)
	check(t, "rename", renamed, obj{"name": "second", "card_type": "IMAGE_WEBSITE", "card_uri": c["card_uri"]})
	changed := e.alice.DoJSON(t, http.MethodPut, item, obj{"components": []obj{mediaComp(vid), button}}).Status(t, http.StatusOK).Data(t)
	check(t, "new components", changed, obj{"name": "second", "card_type": "VIDEO_APP"})
	wantError(t, e.alice.DoJSON(t, http.MethodPut, item, obj{"name": strings.Repeat("n", 81)}), 400, "INVALID_PARAMETER", "name")
	wantError(t, e.alice.DoJSON(t, http.MethodPut, item, obj{"components": []obj{mediaComp("3_9"), button}}), 400, "INVALID_PARAMETER", "components[0].media_key")
	wantError(t, e.alice.DoJSON(t, http.MethodPut, item, obj{"components": []obj{mediaComp(img), details},
		"slides": [][]obj{slide(img), slide(vid)}}), 400, "EXCLUSIVE_PARAMETERS", "slides")
	if r := e.alice.Put(t, item, url.Values{"name": {"form"}}); r.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("form PUT: %d %s", r.Code, r.Raw)
	}
	check(t, "after refused updates", e.alice.Get(t, item, nil).Status(t, http.StatusOK).Data(t), obj{"name": "second", "card_type": "VIDEO_APP"})

	check(t, "DELETE", e.alice.Delete(t, item, nil).Status(t, http.StatusOK).Data(t), obj{"id": id, "deleted": true})
	e.alice.Get(t, item, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	check(t, "with_deleted", e.alice.Get(t, item, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t), obj{"deleted": true})
	if got := e.alice.Get(t, e.base, nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("deleted card listed: %v", ids(got))
	}
	if got := e.alice.Get(t, e.base, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); ids(got) != id {
		t.Fatalf("with_deleted list: %v", ids(got))
	}
	e.alice.DoJSON(t, http.MethodPut, item, obj{"name": "x"}).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	e.alice.Delete(t, item, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
}

// TestCardsTenancy: another account's cards, of every kind, are not found
// by the caller's account, and another user's account is refused.
func TestCardsTenancy(t *testing.T) {
	e := newEnv(t)
	bob := e.s.User(t, "bob")
	bobs := bob.Account(t)
	theirs := "/12/accounts/" + bobs.ID + "/cards"
	card := bob.Post(t, theirs+"/poll", url.Values{"name": {"p"}, "duration_in_minutes": {"5"},
		"first_choice": {"a"}, "second_choice": {"b"}}).Status(t, http.StatusOK).Data(t)["id"].(string)
	e.alice.Get(t, theirs+"/poll", nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	e.alice.Get(t, theirs+"/poll/"+card, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	for _, path := range []string{"/poll/", "/video_conversation/", "/image_conversation/", "/"} {
		e.alice.Get(t, e.base+path+card, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
		e.alice.Delete(t, e.base+path+card, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	}
	if got := e.alice.Get(t, e.base+"/poll", nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("another account's poll listed: %v", ids(got))
	}
	bob.Get(t, theirs+"/poll/"+card, nil).Status(t, http.StatusOK)
}
