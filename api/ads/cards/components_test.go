package cards_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

type obj = map[string]any

func mediaComp(key string) obj { return obj{"type": "MEDIA", "media_key": key} }
func swipe(keys ...string) obj { return obj{"type": "SWIPEABLE_MEDIA", "media_keys": keys} }

var (
	details = obj{"type": "DETAILS", "title": "Visit us", "destination": obj{"type": "WEBSITE", "url": "https://example.com/x"}}
	button  = obj{"type": "BUTTON", "label": obj{"type": "ENUM", "value": "INSTALL"},
		"destination": obj{"type": "APP", "country_code": "US", "googleplay_app_id": "com.example.app",
			"googleplay_deep_link": "example://home"}}
)

func slide(key string) []obj { return []obj{mediaComp(key), details} }

// TestComponentCardTypes: each of the 13 card types is derived from the
// components (or slides) and their media, and a GET reads back what the
// POST answered, with card_uri card://<id>.
func TestComponentCardTypes(t *testing.T) {
	e := newEnv(t)
	img, img2, vid, vid2 := e.image(t), e.image(t), e.video(t), e.video(t)
	tests := []struct {
		body obj
		want string
	}{
		{obj{"components": []obj{mediaComp(img), details}}, "IMAGE_WEBSITE"},
		{obj{"components": []obj{mediaComp(img), button}}, "IMAGE_APP"},
		{obj{"components": []obj{mediaComp(vid), details}}, "VIDEO_WEBSITE"},
		{obj{"components": []obj{mediaComp(vid), button}}, "VIDEO_APP"},
		{obj{"components": []obj{swipe(img, img2), details}}, "IMAGE_CAROUSEL_WEBSITE"},
		{obj{"components": []obj{swipe(img, img2), button}}, "IMAGE_CAROUSEL_APP"},
		{obj{"components": []obj{swipe(vid, vid2), details}}, "VIDEO_CAROUSEL_WEBSITE"},
		{obj{"components": []obj{swipe(vid, vid2), button}}, "VIDEO_CAROUSEL_APP"},
		{obj{"components": []obj{swipe(img, vid), details}}, "MIXED_MEDIA_SINGLE_DEST_CAROUSEL_WEBSITE"},
		{obj{"components": []obj{swipe(vid, img, img2), button}}, "MIXED_MEDIA_SINGLE_DEST_CAROUSEL_APP"},
		{obj{"slides": [][]obj{slide(img), slide(img2)}}, "IMAGE_MULTI_DEST_CAROUSEL_WEBSITE"},
		{obj{"slides": [][]obj{slide(vid), slide(vid2)}}, "VIDEO_MULTI_DEST_CAROUSEL_WEBSITE"},
		{obj{"slides": [][]obj{slide(img), slide(vid), slide(img2)}}, "MIXED_MEDIA_MULTI_DEST_CAROUSEL_WEBSITE"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			tc.body["name"] = "card " + tc.want
			created := e.alice.DoJSON(t, http.MethodPost, e.base, tc.body).Status(t, http.StatusOK).Data(t)
			id, _ := created["id"].(string)
			check(t, "POST", created, obj{"card_type": tc.want, "card_uri": "card://" + id, "name": "card " + tc.want, "deleted": false})
			got := e.alice.Get(t, e.base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
			for _, k := range []string{"id", "name", "card_type", "card_uri", "components", "slides", "created_at", "updated_at", "deleted"} {
				if strings.TrimSpace(jsonText(t, got[k])) != strings.TrimSpace(jsonText(t, created[k])) {
					t.Errorf("GET %s = %s, POST answered %s", k, jsonText(t, got[k]), jsonText(t, created[k]))
				}
			}
		})
	}
	// The components come back in render order, as sent.
	c := e.alice.DoJSON(t, http.MethodPost, e.base, obj{"name": "order", "components": []obj{swipe(img2, img), button}}).Status(t, http.StatusOK).Data(t)
	comps := c["components"].([]any)
	first := comps[0].(map[string]any)
	if first["type"] != "SWIPEABLE_MEDIA" || jsonText(t, first["media_keys"]) != jsonText(t, []string{img2, img}) ||
		comps[1].(map[string]any)["type"] != "BUTTON" {
		t.Fatalf("components = %s", jsonText(t, comps))
	}
	dest := comps[1].(map[string]any)["destination"].(map[string]any)
	check(t, "destination", dest, obj{"type": "APP", "country_code": "US", "googleplay_app_id": "com.example.app", "googleplay_deep_link": "example://home"})
}

// TestComponentCardBadInput: every rule broken alone is a 400 naming the
// parameter, and nothing is stored.
func TestComponentCardBadInput(t *testing.T) {
	e := newEnv(t)
	img, img2, vid := e.image(t), e.image(t), e.video(t)
	gif := e.media(t, storage.MediaTweetGIF, 400, 400, true)
	outside := e.media(t, storage.MediaTweetImage, 1200, 628, false)
	keys := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = e.image(t)
		}
		return out
	}
	seven := keys(7)
	with := func(c obj, kv ...any) obj {
		out := obj{}
		for k, v := range c {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
				continue
			}
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	good := func(comps ...obj) obj { return obj{"name": "c", "components": comps} }
	dest := details["destination"].(obj)
	appDest := button["destination"].(obj)
	tests := []struct {
		name        string
		body        obj
		code, param string
	}{
		{"no name", with(good(mediaComp(img), details), "name", nil), "MISSING_PARAMETER", "name"},
		{"name 81", with(good(mediaComp(img), details), "name", strings.Repeat("n", 81)), "INVALID_PARAMETER", "name"},
		{"name not a string", with(good(mediaComp(img), details), "name", 5), "INVALID_PARAMETER", "name"},
		{"neither components nor slides", obj{"name": "c"}, "MISSING_PARAMETER", "components"},
		{"both components and slides", with(good(mediaComp(img), details), "slides", [][]obj{slide(img), slide(img2)}), "EXCLUSIVE_PARAMETERS", "slides"},
		{"unknown field", with(good(mediaComp(img), details), "colour", "red"), "INVALID_PARAMETER", "colour"},
		{"components not an array", obj{"name": "c", "components": "x"}, "INVALID_PARAMETER", "components"},
		{"one component", good(mediaComp(img)), "INVALID_PARAMETER", "components"},
		{"three components", good(mediaComp(img), details, button), "INVALID_PARAMETER", "components"},
		{"description first", good(details, mediaComp(img)), "INVALID_PARAMETER", "components[0].type"},
		{"two media", good(mediaComp(img), mediaComp(img2)), "INVALID_PARAMETER", "components[1].type"},
		{"unknown type", good(obj{"type": "TEXT"}, details), "INVALID_PARAMETER", "components[0].type"},
		{"no type", good(obj{"media_key": img}, details), "MISSING_PARAMETER", "components[0].type"},
		{"MEDIA without media_key", good(obj{"type": "MEDIA"}, details), "MISSING_PARAMETER", "components[0].media_key"},
		{"MEDIA extra field", good(with(mediaComp(img), "media_keys", []string{img}), details), "INVALID_PARAMETER", "components[0].media_keys"},
		{"SWIPEABLE one key", good(swipe(img), details), "INVALID_PARAMETER", "components[0].media_keys"},
		{"SWIPEABLE seven keys", good(swipe(seven...), details), "INVALID_PARAMETER", "components[0].media_keys"},
		{"SWIPEABLE repeated key", good(swipe(img, img), details), "INVALID_PARAMETER", "components[0].media_keys[1]"},
		{"SWIPEABLE no keys", good(obj{"type": "SWIPEABLE_MEDIA"}, details), "MISSING_PARAMETER", "components[0].media_keys"},
		{"DETAILS without title", good(mediaComp(img), with(details, "title", nil)), "MISSING_PARAMETER", "components[1].title"},
		{"DETAILS title 71", good(mediaComp(img), with(details, "title", strings.Repeat("t", 71))), "INVALID_PARAMETER", "components[1].title"},
		{"DETAILS without destination", good(mediaComp(img), with(details, "destination", nil)), "MISSING_PARAMETER", "components[1].destination"},
		{"DETAILS with APP destination", good(mediaComp(img), with(details, "destination", appDest)), "INVALID_PARAMETER", "components[1].destination.type"},
		{"website without url", good(mediaComp(img), with(details, "destination", with(dest, "url", nil))), "MISSING_PARAMETER", "components[1].destination.url"},
		{"website url not http", good(mediaComp(img), with(details, "destination", with(dest, "url", "ftp://x"))), "INVALID_PARAMETER", "components[1].destination.url"},
		{"BUTTON without label", good(mediaComp(img), with(button, "label", nil)), "MISSING_PARAMETER", "components[1].label"},
		{"BUTTON label type", good(mediaComp(img), with(button, "label", obj{"type": "TEXT", "value": "OPEN"})), "INVALID_PARAMETER", "components[1].label.type"},
		{"BUTTON label value", good(mediaComp(img), with(button, "label", obj{"type": "ENUM", "value": "BUY"})), "INVALID_PARAMETER", "components[1].label.value"},
		{"BUTTON with WEBSITE destination", good(mediaComp(img), with(button, "destination", dest)), "INVALID_PARAMETER", "components[1].destination.type"},
		{"app without country", good(mediaComp(img), with(button, "destination", with(appDest, "country_code", nil))), "MISSING_PARAMETER", "components[1].destination.country_code"},
		{"app unknown country", good(mediaComp(img), with(button, "destination", with(appDest, "country_code", "ZZ"))), "INVALID_PARAMETER", "components[1].destination.country_code"},
		{"app without app id", good(mediaComp(img), with(button, "destination", with(appDest, "googleplay_app_id", nil, "googleplay_deep_link", nil))), "MISSING_PARAMETER", "components[1].destination.googleplay_app_id"},
		{"deep link without app", good(mediaComp(img), with(button, "destination", with(appDest, "googleplay_app_id", nil, "ios_app_store_identifier", "333903271"))), "INVALID_PARAMETER", "components[1].destination.googleplay_deep_link"},
		{"ios deep link without ios app", good(mediaComp(img), with(button, "destination", with(appDest, "ios_deep_link", "x://y"))), "INVALID_PARAMETER", "components[1].destination.ios_deep_link"},
		{"media not in library", good(mediaComp(outside), details), "INVALID_PARAMETER", "components[0].media_key"},
		{"unknown media key", good(mediaComp("3_1"), details), "INVALID_PARAMETER", "components[0].media_key"},
		{"malformed media key", good(mediaComp("3 1"), details), "INVALID_PARAMETER", "components[0].media_key"},
		{"GIF media", good(mediaComp(gif), details), "INVALID_PARAMETER", "components[0].media_key"},
		{"swipeable key not in library", good(swipe(img, outside), details), "INVALID_PARAMETER", "components[0].media_keys[1]"},
		{"one slide", obj{"name": "c", "slides": [][]obj{slide(img)}}, "INVALID_PARAMETER", "slides"},
		{"seven slides", obj{"name": "c", "slides": [][]obj{slide(img), slide(img), slide(img), slide(img), slide(img), slide(img), slide(img)}}, "INVALID_PARAMETER", "slides"},
		{"slide with BUTTON", obj{"name": "c", "slides": [][]obj{slide(img), {mediaComp(img2), button}}}, "INVALID_PARAMETER", "slides[1][1].type"},
		{"slide with SWIPEABLE", obj{"name": "c", "slides": [][]obj{slide(img), {swipe(img, img2), details}}}, "INVALID_PARAMETER", "slides[1][0].type"},
		{"slide of one component", obj{"name": "c", "slides": [][]obj{slide(img), {mediaComp(img2)}}}, "INVALID_PARAMETER", "slides[1]"},
		{"slide media not in library", obj{"name": "c", "slides": [][]obj{slide(img), slide(outside)}}, "INVALID_PARAMETER", "slides[1][0].media_key"},
		{"video ok but swipe of one", good(swipe(vid), details), "INVALID_PARAMETER", "components[0].media_keys"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.alice.DoJSON(t, http.MethodPost, e.base, tc.body), http.StatusBadRequest, tc.code, tc.param)
		})
	}
	// A form body, or a body without a Content-Type, is refused: the
	// endpoint takes JSON only.
	form := e.alice.Post(t, e.base, url.Values{"name": {"c"}})
	if form.Code != http.StatusUnsupportedMediaType || form.FirstError().Code != "INVALID_PARAMETER" ||
		!strings.Contains(form.FirstError().Message, "application/json") {
		t.Fatalf("form body: %d %s", form.Code, form.Raw)
	}
	wantRaw(t, e, `{"name":"c","name":"d","components":[]}`, http.StatusBadRequest, "name")
	wantRaw(t, e, `[1]`, http.StatusBadRequest, "body")
	wantRaw(t, e, `{"name":"c"} {}`, http.StatusBadRequest, "body")
	if n := e.count(t); n != 0 {
		t.Fatalf("refused requests stored %d cards", n)
	}
}

func wantRaw(t *testing.T, e *env, body string, status int, param string) {
	t.Helper()
	r := e.alice.DoRaw(t, http.MethodPost, e.base, "application/json", body)
	if r.Code != status || r.FirstError().Parameter != param {
		t.Fatalf("%s: %d %s, want %d naming %s", body, r.Code, r.Raw, status, param)
	}
}
