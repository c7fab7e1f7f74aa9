package cards_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
)

var textPoll = url.Values{"name": {"best coast"}, "duration_in_minutes": {"10080"}, "first_choice": {"East"}, "second_choice": {"West"}}

func (e *env) grantMediaPolls(t *testing.T) {
	t.Helper()
	if err := e.s.DB.SetAdAccountFeature(t.Context(), e.acct.ID, storage.FeaturePromotedMediaPolls, true); err != nil {
		t.Fatal(err)
	}
}

// TestPollCards: text, image and video polls round trip (numbers as
// text, end_time = start_time + duration); the list takes
// with_total_count; DELETE removes the card for good.
func TestPollCards(t *testing.T) {
	e := newEnv(t)
	e.grantMediaPolls(t)
	img, vid := e.image(t), e.video(t)
	polls := e.base + "/poll"

	text := e.alice.Post(t, polls, adstest.With(textPoll, "third_choice", "North", "fourth_choice", "South")).Status(t, http.StatusOK).Data(t)
	check(t, "text poll", text, obj{"card_type": "TEXT_POLLS", "name": "best coast", "first_choice": "East", "second_choice": "West",
		"third_choice": "North", "fourth_choice": "South", "duration_in_minutes": "10080", "deleted": false,
		"card_uri": "card://" + text["id"].(string)})
	start, err1 := time.Parse(time.RFC3339, text["start_time"].(string))
	end, err2 := time.Parse(time.RFC3339, text["end_time"].(string))
	if err1 != nil || err2 != nil || end.Sub(start) != 10080*time.Minute {
		t.Fatalf("start_time %v, end_time %v", text["start_time"], text["end_time"])
	}
	image := e.alice.Post(t, polls, adstest.With(textPoll, "media_key", img, "duration_in_minutes", "5")).Status(t, http.StatusOK).Data(t)
	check(t, "image poll", image, obj{"card_type": "IMAGE_POLLS", "image_display_width": "1200", "image_display_height": "628", "duration_in_minutes": "5"})
	if _, ok := image["media_key"]; ok {
		t.Errorf("media_key is write-only: %v", image)
	}
	video := e.alice.Post(t, polls, adstest.With(textPoll, "media_key", vid)).Status(t, http.StatusOK).Data(t)
	check(t, "video poll", video, obj{"card_type": "VIDEO_POLLS", "video_width": "16", "video_height": "9",
		"video_poster_width": "16", "video_poster_height": "9", "content_duration_seconds": "15"})

	for _, c := range []map[string]any{text, image, video} {
		got := e.alice.Get(t, polls+"/"+c["id"].(string), nil).Status(t, http.StatusOK).Data(t)
		if jsonText(t, got) != jsonText(t, c) {
			t.Errorf("GET %s = %s, POST answered %s", c["id"], jsonText(t, got), jsonText(t, c))
		}
	}
	list := e.alice.Get(t, polls, url.Values{"with_total_count": {"true"}}).Status(t, http.StatusOK)
	if list.Body["total_count"] != float64(3) || ids(list.List(t)) != ids([]map[string]any{video, image, text}) {
		t.Fatalf("list: %s", list.Raw)
	}
	if got := e.alice.Get(t, polls, url.Values{"card_ids": {image["id"].(string)}, "q": {"BEST"}}).Status(t, http.StatusOK).List(t); ids(got) != image["id"] {
		t.Fatalf("card_ids and q: %v", ids(got))
	}
	if got := e.alice.Get(t, e.base, nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("polls listed as component cards: %v", ids(got))
	}

	id := image["id"].(string)
	check(t, "DELETE", e.alice.Delete(t, polls+"/"+id, nil).Status(t, http.StatusOK).Data(t), obj{"id": id, "deleted": true})
	e.alice.Get(t, polls+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	e.alice.Get(t, polls+"/"+id, url.Values{"with_deleted": {"true"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	e.alice.Delete(t, polls+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	if n := e.count(t); n != 2 {
		t.Fatalf("%d cards stored after the hard delete, want 2", n)
	}
	// Poll cards have no update.
	if r := e.alice.Put(t, polls+"/"+text["id"].(string), url.Values{"name": {"x"}}); r.Code != http.StatusMethodNotAllowed && r.Code != http.StatusNotFound {
		t.Fatalf("PUT poll: %d %s", r.Code, r.Raw)
	}
}

// TestPollCardBadInput: every rule broken alone is a 400 naming the
// parameter, and nothing is stored.
func TestPollCardBadInput(t *testing.T) {
	e := newEnv(t)
	polls := e.base + "/poll"
	img := e.image(t)
	// Media polls need the account feature.
	wantError(t, e.alice.Post(t, polls, adstest.With(textPoll, "media_key", img)), http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "media_key")
	e.grantMediaPolls(t)
	narrow := e.media(t, storage.MediaTweetImage, 764, 400, true)
	square := e.media(t, storage.MediaTweetImage, 1200, 1200, true)
	gif := e.media(t, storage.MediaTweetGIF, 1200, 628, true)
	outside := e.media(t, storage.MediaTweetImage, 1200, 628, false)
	tests := []struct {
		name        string
		params      url.Values
		code, param string
	}{
		{"no name", adstest.With(textPoll, "name", ""), "MISSING_PARAMETER", "name"},
		{"name 81", adstest.With(textPoll, "name", strings.Repeat("n", 81)), "INVALID_PARAMETER", "name"},
		{"no duration", adstest.With(textPoll, "duration_in_minutes", ""), "MISSING_PARAMETER", "duration_in_minutes"},
		{"duration 4", adstest.With(textPoll, "duration_in_minutes", "4"), "INVALID_PARAMETER", "duration_in_minutes"},
		{"duration 10081", adstest.With(textPoll, "duration_in_minutes", "10081"), "INVALID_PARAMETER", "duration_in_minutes"},
		{"duration not a number", adstest.With(textPoll, "duration_in_minutes", "an hour"), "INVALID_PARAMETER", "duration_in_minutes"},
		{"no first choice", adstest.With(textPoll, "first_choice", ""), "MISSING_PARAMETER", "first_choice"},
		{"no second choice", adstest.With(textPoll, "second_choice", ""), "MISSING_PARAMETER", "second_choice"},
		{"first choice 26", adstest.With(textPoll, "first_choice", strings.Repeat("c", 26)), "INVALID_PARAMETER", "first_choice"},
		{"third choice 26", adstest.With(textPoll, "third_choice", strings.Repeat("c", 26)), "INVALID_PARAMETER", "third_choice"},
		{"third without second", adstest.With(textPoll, "second_choice", "", "third_choice", "N"), "INVALID_PARAMETER", "third_choice"},
		{"fourth without third", adstest.With(textPoll, "fourth_choice", "S"), "INVALID_PARAMETER", "fourth_choice"},
		{"media not in library", adstest.With(textPoll, "media_key", outside), "INVALID_PARAMETER", "media_key"},
		{"unknown media", adstest.With(textPoll, "media_key", "3_12"), "INVALID_PARAMETER", "media_key"},
		{"image under 800 px", adstest.With(textPoll, "media_key", narrow), "INVALID_PARAMETER", "media_key"},
		{"image not 1.91:1", adstest.With(textPoll, "media_key", square), "INVALID_PARAMETER", "media_key"},
		{"GIF", adstest.With(textPoll, "media_key", gif), "INVALID_PARAMETER", "media_key"},
		{"unknown parameter", adstest.With(textPoll, "fifth_choice", "x"), "INVALID_PARAMETER", "fifth_choice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.alice.Post(t, polls, tc.params), http.StatusBadRequest, tc.code, tc.param)
		})
	}
	if n := e.count(t); n != 0 {
		t.Fatalf("refused requests stored %d cards", n)
	}
	for _, tc := range []struct {
		params url.Values
		param  string
	}{
		{url.Values{"count": {"1001"}}, "count"},
		{url.Values{"q": {strings.Repeat("q", 81)}}, "q"},
		{url.Values{"card_ids": {strings.TrimSuffix(strings.Repeat("a,", 201), ",")}}, "card_ids"},
		{url.Values{"with_total_count": {"true"}, "cursor": {"x.y"}}, "cursor"},
	} {
		r := e.alice.Get(t, polls, tc.params)
		if r.Code != http.StatusBadRequest || r.FirstError().Parameter != tc.param {
			t.Errorf("%v: %d %s", tc.params, r.Code, r.Raw)
		}
	}
}
