package cards_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
)

func videoConv(key string) url.Values {
	return url.Values{"name": {"video conversation"}, "first_cta": {"#APIs"}, "first_cta_tweet": {"Ads API"},
		"thank_you_text": {"Build it"}, "title": {"Developers"}, "media_key": {key}}
}

// TestVideoConversationCards: create, get, list, update and delete for
// good; PUT keeps what it is not sent and checks the card it makes.
func TestVideoConversationCards(t *testing.T) {
	e := newEnv(t)
	vid, vid2, poster := e.video(t), e.video(t), e.image(t)
	base := e.base + "/video_conversation"
	c := e.alice.Post(t, base, adstest.With(videoConv(vid), "second_cta", "#More", "second_cta_tweet", "more please",
		"thank_you_url", "https://example.com/thanks")).Status(t, http.StatusOK).Data(t)
	id := c["id"].(string)
	check(t, "POST", c, obj{"card_type": "VIDEO_CONVERSATION", "card_uri": "card://" + id, "name": "video conversation",
		"title": "Developers", "first_cta": "#APIs", "first_cta_tweet": "Ads API", "second_cta": "#More",
		"second_cta_tweet": "more please", "thank_you_text": "Build it", "thank_you_url": "https://example.com/thanks",
		"media_key": vid, "video_width": "16", "video_height": "9", "video_owner_id": strconv.FormatInt(e.alice.User.ID, 10),
		"deleted": false})
	if got := e.alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t); jsonText(t, got) != jsonText(t, c) {
		t.Fatalf("GET %s, POST answered %s", jsonText(t, got), jsonText(t, c))
	}
	list := e.alice.Get(t, base, url.Values{"with_total_count": {"true"}}).Status(t, http.StatusOK)
	if list.Body["total_count"] != float64(1) || ids(list.List(t)) != id {
		t.Fatalf("list: %s", list.Raw)
	}
	up := e.alice.Put(t, base+"/"+id, url.Values{"name": {"developers card"}, "media_key": {vid2}, "poster_media_key": {poster},
		"third_cta": {"#Third"}, "third_cta_tweet": {"three"}}).Status(t, http.StatusOK).Data(t)
	check(t, "PUT", up, obj{"name": "developers card", "media_key": vid2, "title": "Developers", "first_cta": "#APIs",
		"third_cta": "#Third", "third_cta_tweet": "three", "created_at": c["created_at"]})
	for _, tc := range []struct {
		params      url.Values
		code, param string
	}{
		{url.Values{"fourth_cta": {"#Four"}}, "MISSING_PARAMETER", "fourth_cta_tweet"},
		{url.Values{"title": {strings.Repeat("t", 24)}}, "INVALID_PARAMETER", "title"},
		{url.Values{"media_key": {poster}}, "INVALID_PARAMETER", "media_key"},
		{url.Values{"first_cta": {"#" + strings.Repeat("c", 21)}}, "INVALID_PARAMETER", "first_cta"},
	} {
		wantError(t, e.alice.Put(t, base+"/"+id, tc.params), http.StatusBadRequest, tc.code, tc.param)
	}
	check(t, "after refused PUTs", e.alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t), obj{"media_key": vid2, "title": "Developers"})
	check(t, "DELETE", e.alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t), obj{"id": id, "deleted": true})
	e.alice.Get(t, base+"/"+id, url.Values{"with_deleted": {"true"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	e.alice.Put(t, base+"/"+id, url.Values{"name": {"x"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	if n := e.count(t); n != 0 {
		t.Fatalf("%d cards left after the hard delete", n)
	}
}

// TestVideoConversationBadInput: every rule of a new card broken alone.
func TestVideoConversationBadInput(t *testing.T) {
	e := newEnv(t)
	vid, img := e.video(t), e.image(t)
	square := e.media(t, storage.MediaTweetVideo, 720, 720, true)
	outside := e.media(t, storage.MediaTweetVideo, 1280, 720, false)
	good := videoConv(vid)
	base := e.base + "/video_conversation"
	tests := []struct {
		name        string
		params      url.Values
		code, param string
	}{
		{"no name", adstest.With(good, "name", ""), "MISSING_PARAMETER", "name"},
		{"name 81", adstest.With(good, "name", strings.Repeat("n", 81)), "INVALID_PARAMETER", "name"},
		{"no first_cta", adstest.With(good, "first_cta", ""), "MISSING_PARAMETER", "first_cta"},
		{"no first_cta_tweet", adstest.With(good, "first_cta_tweet", ""), "MISSING_PARAMETER", "first_cta_tweet"},
		{"no thank_you_text", adstest.With(good, "thank_you_text", ""), "MISSING_PARAMETER", "thank_you_text"},
		{"no media_key", adstest.With(good, "media_key", ""), "MISSING_PARAMETER", "media_key"},
		{"cta 21 after #", adstest.With(good, "first_cta", "#"+strings.Repeat("c", 21)), "INVALID_PARAMETER", "first_cta"},
		{"cta 21 without #", adstest.With(good, "first_cta", strings.Repeat("c", 21)), "INVALID_PARAMETER", "first_cta"},
		{"cta with a space", adstest.With(good, "first_cta", "#two words"), "INVALID_PARAMETER", "first_cta"},
		{"second_cta without its tweet", adstest.With(good, "second_cta", "#two"), "MISSING_PARAMETER", "second_cta_tweet"},
		{"third_cta without its tweet", adstest.With(good, "second_cta", "#two", "second_cta_tweet", "2", "third_cta", "#three"), "MISSING_PARAMETER", "third_cta_tweet"},
		{"fourth_cta without its tweet", adstest.With(good, "second_cta", "#two", "second_cta_tweet", "2", "third_cta", "#three", "third_cta_tweet", "3", "fourth_cta", "#four"), "MISSING_PARAMETER", "fourth_cta_tweet"},
		{"tweet without its cta", adstest.With(good, "second_cta_tweet", "2"), "INVALID_PARAMETER", "second_cta_tweet"},
		{"third_cta without second", adstest.With(good, "third_cta", "#three", "third_cta_tweet", "3"), "INVALID_PARAMETER", "third_cta"},
		{"neither title nor second_cta", adstest.With(good, "title", ""), "MISSING_PARAMETER", "title"},
		{"title 24", adstest.With(good, "title", strings.Repeat("t", 24)), "INVALID_PARAMETER", "title"},
		{"thank_you_text 24", adstest.With(good, "thank_you_text", strings.Repeat("t", 24)), "INVALID_PARAMETER", "thank_you_text"},
		{"thank_you_url not a URL", adstest.With(good, "thank_you_url", "thanks"), "INVALID_PARAMETER", "thank_you_url"},
		{"media is an image", adstest.With(good, "media_key", img), "INVALID_PARAMETER", "media_key"},
		{"video not 16:9", adstest.With(good, "media_key", square), "INVALID_PARAMETER", "media_key"},
		{"video not in library", adstest.With(good, "media_key", outside), "INVALID_PARAMETER", "media_key"},
		{"poster is a video", adstest.With(good, "poster_media_key", vid), "INVALID_PARAMETER", "poster_media_key"},
		{"poster not in library", adstest.With(good, "poster_media_key", "3_77"), "INVALID_PARAMETER", "poster_media_key"},
		{"unlocked image is a video", adstest.With(good, "unlocked_image_media_key", vid), "INVALID_PARAMETER", "unlocked_image_media_key"},
		{"unlocked video is an image", adstest.With(good, "unlocked_video_media_key", img), "INVALID_PARAMETER", "unlocked_video_media_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.alice.Post(t, base, tc.params), http.StatusBadRequest, tc.code, tc.param)
		})
	}
	// second_cta stands in for title.
	e.alice.Post(t, base, adstest.With(good, "title", "", "second_cta", "#two", "second_cta_tweet", "2")).Status(t, http.StatusOK)
	if n := e.count(t); n != 1 {
		t.Fatalf("%d cards stored, want only the valid one", n)
	}
}

// TestImageConversationCards: create (an image at least 800 px wide at
// 1.91:1), get, delete for good; the media rules of the kind.
func TestImageConversationCards(t *testing.T) {
	e := newEnv(t)
	img, vid := e.image(t), e.video(t)
	narrow := e.media(t, storage.MediaTweetImage, 1200, 1000, true)
	unlock := e.media(t, storage.MediaTweetImage, 1000, 400, true)
	base := e.base + "/image_conversation"
	good := url.Values{"name": {"image conversation card"}, "first_cta": {"#moon"}, "first_cta_tweet": {"stars"},
		"thank_you_text": {"thanks"}, "title": {"Full moon"}, "media_key": {img}}
	c := e.alice.Post(t, base, adstest.With(good, "unlocked_image_media_key", unlock)).Status(t, http.StatusOK).Data(t)
	id := c["id"].(string)
	check(t, "POST", c, obj{"card_type": "IMAGE_CONVERSATION", "card_uri": "card://" + id, "first_cta": "#moon", "first_cta_tweet": "stars",
		"thank_you_text": "thanks", "title": "Full moon", "media_key": img, "image_display_width": "1200", "image_display_height": "628"})
	if got := e.alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t); jsonText(t, got) != jsonText(t, c) {
		t.Fatalf("GET %s, POST answered %s", jsonText(t, got), jsonText(t, c))
	}
	wantError(t, e.alice.Post(t, base, adstest.With(good, "media_key", vid)), http.StatusBadRequest, "INVALID_PARAMETER", "media_key")
	wantError(t, e.alice.Post(t, base, adstest.With(good, "media_key", narrow)), http.StatusBadRequest, "INVALID_PARAMETER", "media_key")
	wantError(t, e.alice.Post(t, base, adstest.With(good, "unlocked_image_media_key", img)), http.StatusBadRequest, "INVALID_PARAMETER", "unlocked_image_media_key")
	wantError(t, e.alice.Post(t, base, adstest.With(good, "poster_media_key", img)), http.StatusBadRequest, "INVALID_PARAMETER", "poster_media_key")
	check(t, "DELETE", e.alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t), obj{"id": id, "deleted": true})
	e.alice.Get(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "card_id")
	if n := e.count(t); n != 0 {
		t.Fatalf("%d cards left", n)
	}
}

// TestConversationConcurrentUpdates: PUTs of different fields at once all
// land; none overwrites another with the card it read.
func TestConversationConcurrentUpdates(t *testing.T) {
	e := newEnv(t)
	vid := e.video(t)
	base := e.base + "/video_conversation"
	id := e.alice.Post(t, base, videoConv(vid)).Status(t, http.StatusOK).Data(t)["id"].(string)
	changes := []url.Values{{"name": {"renamed"}}, {"title": {"New title"}}, {"thank_you_text": {"Cheers"}},
		{"thank_you_url": {"https://example.com/t"}}, {"first_cta_tweet": {"changed"}}}
	replies := make(chan adstest.Reply, len(changes))
	for _, c := range changes {
		go func() { replies <- e.alice.Put(t, base+"/"+id, c) }()
	}
	for range changes {
		if r := <-replies; r.Code != http.StatusOK {
			t.Fatalf("concurrent PUT: %d %s", r.Code, r.Raw)
		}
	}
	check(t, "after concurrent PUTs", e.alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t), obj{"name": "renamed",
		"title": "New title", "thank_you_text": "Cheers", "thank_you_url": "https://example.com/t", "first_cta_tweet": "changed"})
}
