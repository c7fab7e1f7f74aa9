package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// libraryUpload uploads data as the demo user in category, waits for the
// worker to process it, adds it to the demo account's media library over
// the ads API and returns its media key.
func (s *stack) libraryUpload(data []byte, mediaType, category string) string {
	s.t.Helper()
	tok := s.demoToken()
	id := s.uploadMedia(tok, data, 1<<20, map[string]any{"media_type": mediaType, "media_category": category})
	wantSucceeded(s.t, s.waitMedia(tok, s.baseURL, id, 90*time.Second), len(data))
	key := s.mediaRecord(id).Key
	r := s.cardsCall(http.MethodPost, "/media_library?"+url.Values{"media_key": {key}}.Encode(), nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("add %s to the media library: %d %s", key, r.Status, r.Raw)
	}
	return key
}

// cardsCall sends a signed ads request under the demo account.
func (s *stack) cardsCall(method, path string, body any) response {
	s.t.Helper()
	path = "/12/accounts/" + s.creds.AdsAccountID + path
	if body != nil {
		return s.signedJSONAt(s.demoToken(), s.baseURL, method, path, body)
	}
	return s.signedAt(s.demoToken(), s.baseURL, method, path, nil, "")
}

func cardData(t *testing.T, what string, r response) map[string]any {
	t.Helper()
	d, _ := r.Body["data"].(map[string]any)
	if r.Status != http.StatusOK || d == nil {
		t.Fatalf("%s: %d %s", what, r.Status, r.Raw)
	}
	return d
}

// TestAdsCards drives the cards endpoints over HTTP with OAuth 1.0a signed
// requests against real processed media: an image and a 16:9 video are
// uploaded, processed by a worker and added to the media library; a
// component card (JSON), an image poll (with the account feature), a
// video conversation card (updated) and an image conversation card are
// created and read back; a form body to the JSON-only endpoint and a
// broken rule are refused; the hard deletes leave nothing to read.
func TestAdsCards(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{clientTestTimeout}})
	dir := t.TempDir()
	img := s.libraryUpload(pngImage(t, 1200, 628), "image/png", "tweet_image")
	vid := s.libraryUpload(ffmpeg(t, dir, "wide.mp4", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=15", "-t", "2",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"), "video/mp4", "tweet_video")

	card := cardData(t, "create component card", s.cardsCall(http.MethodPost, "/cards", map[string]any{"name": "e2e carousel",
		"components": []map[string]any{{"type": "SWIPEABLE_MEDIA", "media_keys": []string{img, vid}},
			{"type": "DETAILS", "title": "Aviary", "destination": map[string]any{"type": "WEBSITE", "url": "https://example.com"}}}}))
	id, _ := card["id"].(string)
	if card["card_type"] != "MIXED_MEDIA_SINGLE_DEST_CAROUSEL_WEBSITE" || card["card_uri"] != "card://"+id {
		t.Fatalf("component card: %v", card)
	}
	got := cardData(t, "get component card", s.cardsCall(http.MethodGet, "/cards/"+id, nil))
	if got["name"] != "e2e carousel" || got["card_type"] != card["card_type"] {
		t.Fatalf("read back %v", got)
	}
	form := s.signedAt(s.demoToken(), s.baseURL, http.MethodPost, "/12/accounts/"+s.creds.AdsAccountID+"/cards",
		[]byte("name=x"), "application/x-www-form-urlencoded")
	if form.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("form body to the JSON-only endpoint: %d %s", form.Status, form.Raw)
	}

	// The demo account is bootstrapped with PROMOTED_MEDIA_POLLS: withdraw
	// it, then grant it again.
	if err := s.db.SetAdAccountFeature(context.Background(), s.creds.AdsAccountID, storage.FeaturePromotedMediaPolls, false); err != nil {
		t.Fatal(err)
	}
	poll := url.Values{"name": {"e2e poll"}, "duration_in_minutes": {"60"}, "first_choice": {"yes"}, "second_choice": {"no"}, "media_key": {img}}
	if r := s.cardsCall(http.MethodPost, "/cards/poll?"+poll.Encode(), nil); r.Status != http.StatusBadRequest {
		t.Fatalf("media poll without the feature: %d %s", r.Status, r.Raw)
	}
	if err := s.db.SetAdAccountFeature(context.Background(), s.creds.AdsAccountID, storage.FeaturePromotedMediaPolls, true); err != nil {
		t.Fatal(err)
	}
	p := cardData(t, "create poll", s.cardsCall(http.MethodPost, "/cards/poll?"+poll.Encode(), nil))
	if p["card_type"] != "IMAGE_POLLS" || p["duration_in_minutes"] != "60" || p["image_display_width"] != "1200" {
		t.Fatalf("poll: %v", p)
	}

	conv := url.Values{"name": {"e2e conversation"}, "first_cta": {"#yes"}, "first_cta_tweet": {"I say yes"},
		"thank_you_text": {"Thanks"}, "title": {"Pick one"}, "media_key": {vid}}
	vc := cardData(t, "create video conversation", s.cardsCall(http.MethodPost, "/cards/video_conversation?"+conv.Encode(), nil))
	vcID, _ := vc["id"].(string)
	if vc["video_width"] != "16" || vc["video_height"] != "9" || vc["media_key"] != vid {
		t.Fatalf("video conversation: %v", vc)
	}
	up := cardData(t, "update video conversation", s.cardsCall(http.MethodPut, "/cards/video_conversation/"+vcID+"?"+
		url.Values{"second_cta": {"#no"}, "second_cta_tweet": {"I say no"}}.Encode(), nil))
	if up["second_cta"] != "#no" || up["title"] != "Pick one" {
		t.Fatalf("updated: %v", up)
	}
	if r := s.cardsCall(http.MethodPut, "/cards/video_conversation/"+vcID+"?"+url.Values{"third_cta": {"#maybe"}}.Encode(), nil); r.Status != http.StatusBadRequest {
		t.Fatalf("third_cta without its post text: %d %s", r.Status, r.Raw)
	}
	ic := cardData(t, "create image conversation", s.cardsCall(http.MethodPost, "/cards/image_conversation?"+
		url.Values{"name": {"e2e image"}, "first_cta": {"#a"}, "first_cta_tweet": {"a"}, "thank_you_text": {"t"},
			"title": {"t"}, "media_key": {img}}.Encode(), nil))
	icID, _ := ic["id"].(string)

	for _, path := range []string{"/cards/poll/" + p["id"].(string), "/cards/video_conversation/" + vcID, "/cards/image_conversation/" + icID} {
		if d := cardData(t, "delete "+path, s.cardsCall(http.MethodDelete, path, nil)); d["deleted"] != true {
			t.Fatalf("delete %s: %v", path, d)
		}
		if r := s.cardsCall(http.MethodGet, path+"?with_deleted=true", nil); r.Status != http.StatusNotFound {
			t.Fatalf("GET %s after the hard delete: %d %s", path, r.Status, r.Raw)
		}
	}
	list := s.cardsCall(http.MethodGet, "/cards", nil)
	items, _ := list.Body["data"].([]any)
	if list.Status != http.StatusOK || len(items) != 1 {
		t.Fatalf("component card list: %d %s", list.Status, list.Raw)
	}
}
