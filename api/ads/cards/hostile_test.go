package cards_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// libraryMediaOf uploads a processed w x h media of category for c and
// adds it to the library of c's account acct.
func libraryMediaOf(t *testing.T, s *adstest.Server, c *adstest.Caller, acct, category string, w, h int) string {
	t.Helper()
	ctx, at := t.Context(), time.Now().UTC()
	m := factory.Media(t, s.DB, &factory.MediaOpts{Owner: &c.User, Category: category})
	if _, err := s.DB.AddMediaSegment(ctx, storage.MediaSegment{MediaID: m.ID, Key: "media/seg", Size: m.TotalBytes}, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	if _, err := s.DB.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := s.DB.StartMediaProcessing(ctx, m.ID, at); err != nil {
		t.Fatalf("start: %v", err)
	}
	res := storage.MediaResult{Width: w, Height: h, DurationMS: 9000, OutputKey: storage.MediaOutputKey(m.ID, "mp4"),
		PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := s.DB.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	c.Post(t, "/12/accounts/"+acct+"/media_library", url.Values{"media_key": {m.Key}}).Status(t, http.StatusOK)
	return m.Key
}

// TestHostileCardsOfAnotherAccount: carol's cards of every kind cannot be
// read, changed or deleted through alice's account, and carol's library
// media cannot go on alice's cards.
func TestHostileCardsOfAnotherAccount(t *testing.T) {
	e := newEnv(t)
	carol := e.s.User(t, "carol")
	theirs := carol.Account(t)
	if err := e.s.DB.SetAdAccountFeature(t.Context(), theirs.ID, storage.FeaturePromotedMediaPolls, true); err != nil {
		t.Fatal(err)
	}
	e.grantMediaPolls(t)
	cBase := "/12/accounts/" + theirs.ID + "/cards"
	cImg := libraryMediaOf(t, e.s, carol, theirs.ID, storage.MediaTweetImage, 1200, 628)
	cVid := libraryMediaOf(t, e.s, carol, theirs.ID, storage.MediaTweetVideo, 1280, 720)
	comp := carol.DoJSON(t, http.MethodPost, cBase, obj{"name": "theirs", "components": []obj{mediaComp(cImg), details}}).Status(t, http.StatusOK).Data(t)
	poll := carol.Post(t, cBase+"/poll", textPoll).Status(t, http.StatusOK).Data(t)
	video := carol.Post(t, cBase+"/video_conversation", url.Values{"name": {"v"}, "first_cta": {"#a"}, "first_cta_tweet": {"a"},
		"thank_you_text": {"t"}, "title": {"x"}, "media_key": {cVid}}).Status(t, http.StatusOK).Data(t)
	image := carol.Post(t, cBase+"/image_conversation", url.Values{"name": {"i"}, "first_cta": {"#a"}, "first_cta_tweet": {"a"},
		"thank_you_text": {"t"}, "title": {"x"}, "media_key": {cImg}}).Status(t, http.StatusOK).Data(t)

	for _, c := range []struct {
		path string
		id   string
	}{{"", comp["id"].(string)}, {"/poll", poll["id"].(string)}, {"/video_conversation", video["id"].(string)}, {"/image_conversation", image["id"].(string)}} {
		mine := e.base + c.path + "/" + c.id
		wantError(t, e.alice.Get(t, mine, url.Values{"with_deleted": {"true"}}), http.StatusNotFound, "NOT_FOUND", "card_id")
		wantError(t, e.alice.Delete(t, mine, nil), http.StatusNotFound, "NOT_FOUND", "card_id")
		switch c.path {
		case "":
			wantError(t, e.alice.DoJSON(t, http.MethodPut, mine, obj{"name": "mine now"}), http.StatusNotFound, "NOT_FOUND", "card_id")
		case "/video_conversation", "/image_conversation":
			wantError(t, e.alice.Put(t, mine, url.Values{"name": {"mine now"}}), http.StatusNotFound, "NOT_FOUND", "card_id")
		}
		// and by card_id / card_uris filters of alice's lists
		if c.path == "" {
			if got := e.alice.Get(t, e.base, url.Values{"card_id": {c.id}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
				t.Errorf("alice lists carol's card by card_id: %v", got)
			}
			if got := e.alice.Get(t, e.base, url.Values{"card_uris": {"card://" + c.id}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
				t.Errorf("alice lists carol's card by card_uris: %v", got)
			}
		} else if got := e.alice.Get(t, e.base+c.path, url.Values{"card_ids": {c.id}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
			t.Errorf("alice lists carol's %s card: %v", c.path, got)
		}
	}
	var live int
	e.s.Scan(t, `SELECT count(*) FROM ads_cards WHERE account_id = $1 AND deleted_at IS NULL AND name <> 'mine now'`, []any{theirs.ID}, &live)
	if live != 4 {
		t.Errorf("carol's cards after alice's attempts: %d live and unchanged, want 4", live)
	}

	// carol's library media on alice's cards
	wantError(t, e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": "c", "components": []obj{mediaComp(cImg), details}}),
		http.StatusBadRequest, "INVALID_PARAMETER", "components[0].media_key")
	wantError(t, e.alice.Post(t, e.base+"/poll", adstest.With(textPoll, "media_key", cImg)), http.StatusBadRequest, "INVALID_PARAMETER", "media_key")
	wantError(t, e.alice.Post(t, e.base+"/video_conversation", url.Values{"name": {"v"}, "first_cta": {"#a"}, "first_cta_tweet": {"a"},
		"thank_you_text": {"t"}, "title": {"x"}, "media_key": {cVid}}), http.StatusBadRequest, "INVALID_PARAMETER", "media_key")
	if n := e.count(t); n != 0 {
		t.Errorf("alice's refused cards stored %d rows", n)
	}
}

// TestHostileCardLengthsCountCharacters: every length limit counts
// characters, not bytes: at the limit in 4-byte emoji or CJK is accepted,
// one more is refused.
func TestHostileCardLengthsCountCharacters(t *testing.T) {
	e := newEnv(t)
	img, vid := e.image(t), e.video(t)
	emoji := func(n int) string { return strings.Repeat("😀", n) }
	cjk := func(n int) string { return strings.Repeat("語", n) }
	conv := url.Values{"name": {"v"}, "first_cta": {"#a"}, "first_cta_tweet": {"a"}, "thank_you_text": {"t"}, "title": {"x"}, "media_key": {vid}}
	ok := []struct {
		name string
		path string
		v    url.Values
	}{
		{"poll name 80", "/poll", adstest.With(textPoll, "name", emoji(80))},
		{"poll choice 25", "/poll", adstest.With(textPoll, "first_choice", emoji(25), "second_choice", cjk(25))},
		{"title 23", "/video_conversation", adstest.With(conv, "title", cjk(23))},
		{"thank you 23", "/video_conversation", adstest.With(conv, "thank_you_text", emoji(23))},
		{"cta 20 after #", "/video_conversation", adstest.With(conv, "first_cta", "#"+cjk(20))},
	}
	for _, c := range ok {
		e.alice.Post(t, e.base+c.path, c.v).Status(t, http.StatusOK)
	}
	e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": emoji(80), "components": []obj{mediaComp(img), details}}).Status(t, http.StatusOK)
	bad := []struct {
		name, path, param string
		v                 url.Values
	}{
		{"poll name 81", "/poll", "name", adstest.With(textPoll, "name", emoji(81))},
		{"poll choice 26", "/poll", "second_choice", adstest.With(textPoll, "second_choice", emoji(26))},
		{"poll 4 minutes", "/poll", "duration_in_minutes", adstest.With(textPoll, "duration_in_minutes", "4")},
		{"poll 10081 minutes", "/poll", "duration_in_minutes", adstest.With(textPoll, "duration_in_minutes", "10081")},
		{"title 24", "/video_conversation", "title", adstest.With(conv, "title", cjk(24))},
		{"thank you 24", "/video_conversation", "thank_you_text", adstest.With(conv, "thank_you_text", emoji(24))},
		{"cta 21 after #", "/video_conversation", "first_cta", adstest.With(conv, "first_cta", "#"+cjk(21))},
	}
	before := e.count(t)
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, e.alice.Post(t, e.base+c.path, c.v), http.StatusBadRequest, "INVALID_PARAMETER", c.param)
		})
	}
	wantError(t, e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": emoji(81), "components": []obj{mediaComp(img), details}}),
		http.StatusBadRequest, "INVALID_PARAMETER", "name")
	if after := e.count(t); after != before {
		t.Errorf("refused cards stored rows: %d -> %d", before, after)
	}
}

// TestHostileComponentListBounds: card_id and card_uris take up to 200
// values, count 1 to 200, q up to 80 characters; one past each bound is
// refused naming the parameter.
func TestHostileComponentListBounds(t *testing.T) {
	e := newEnv(t)
	list := func(n int, f func(i int) string) string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return strings.Join(out, ",")
	}
	idOf := func(i int) string {
		return "1" + strings.Repeat("0", 3) + string(rune('0'+i%10)) + strings.Repeat("1", i/10%10)
	}
	uriOf := func(i int) string { return "card://" + idOf(i) }
	for _, v := range []url.Values{{"card_id": {list(200, idOf)}}, {"card_uris": {list(200, uriOf)}}, {"count": {"1"}}, {"count": {"200"}},
		{"q": {strings.Repeat("語", 80)}}} {
		e.alice.Get(t, e.base, v).Status(t, http.StatusOK)
	}
	for _, c := range []struct {
		v     url.Values
		param string
	}{{url.Values{"card_id": {list(201, idOf)}}, "card_id"}, {url.Values{"card_uris": {list(201, uriOf)}}, "card_uris"},
		{url.Values{"count": {"0"}}, "count"}, {url.Values{"count": {"201"}}, "count"}, {url.Values{"q": {strings.Repeat("語", 81)}}, "q"},
		{url.Values{"cursor": {"eyJ0IjoiZm9yZ2VkIn0"}}, "cursor"}} {
		wantError(t, e.alice.Get(t, e.base, c.v), http.StatusBadRequest, "INVALID_PARAMETER", c.param)
	}
}

// TestHostileCardBodies: hostile JSON bodies to the JSON-only component
// card endpoints are refused with the ads envelope (never a server
// error), and nothing is stored.
func TestHostileCardBodies(t *testing.T) {
	e := newEnv(t)
	img := e.image(t)
	good := `{"name":"c","components":[{"type":"MEDIA","media_key":"` + img + `"},{"type":"DETAILS","title":"t","destination":{"type":"WEBSITE","url":"https://example.com"}}]}`
	deep := `{"name":"c","components":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	cases := []struct {
		name, ctype, body string
		status            int
		param             string
	}{
		{"too large", "application/json", `{"name":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge, ""},
		{"deeply nested", "application/json", deep, http.StatusBadRequest, ""},
		{"null", "application/json", `null`, http.StatusBadRequest, "body"},
		{"empty", "application/json", ``, http.StatusBadRequest, "body"},
		{"truncated", "application/json", good[:len(good)-3], http.StatusBadRequest, "body"},
		{"repeated key in another case", "application/json", `{"name":"c","NAME":"d","components":[]}`, http.StatusBadRequest, "NAME"},
		{"invalid UTF-8", "application/json", "{\"name\":\"\xff\"}", http.StatusBadRequest, "body"},
		{"text/plain", "text/plain", good, http.StatusUnsupportedMediaType, ""},
		{"form", "application/x-www-form-urlencoded", "name=c", http.StatusUnsupportedMediaType, ""},
		{"name with NUL", "application/json", `{"name":"a\u0000b","components":[]}`, http.StatusBadRequest, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.alice.DoRaw(t, http.MethodPost, e.base, c.ctype, c.body)
			if r.Code != c.status {
				t.Fatalf("got %d, want %d: %.300s", r.Code, c.status, r.Raw)
			}
			if _, ok := r.Body["errors"].([]any); !ok {
				t.Fatalf("no errors array: %.300s", r.Raw)
			}
			if c.param != "" && r.FirstError().Parameter != c.param {
				t.Fatalf("error names %q, want %q: %.300s", r.FirstError().Parameter, c.param, r.Raw)
			}
		})
	}
	if n := e.count(t); n != 0 {
		t.Fatalf("refused bodies stored %d cards", n)
	}
	e.alice.DoRaw(t, http.MethodPost, e.base, "application/json; charset=utf-8", good).Status(t, http.StatusOK)
}
