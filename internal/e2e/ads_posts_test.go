package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api/apitest"
)

// TestAdsPostWithCardAndMediaReadThroughCoreAPI (issue 30): the bootstrap
// user uploads two images, adds them to the ads account's media library,
// and makes an ads post (POST /12/accounts/:id/tweet, OAuth 1.0a, form
// body) that carries them and a card of the account (an ads_cards row, as
// the cards endpoints store it). The post is then read through the core
// API, GET /2/tweets with card_uri, attachments and the media expansion,
// and the answer matches the platform's OpenAPI description; the ads list
// shows its conversation_settings, and search finds it.
func TestAdsPostWithCardAndMediaReadThroughCoreAPI(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	router := apitest.OpenAPIRouter(t)
	tok, acct := s.demoToken(), s.creds.AdsAccountID
	form := "application/x-www-form-urlencoded"

	var keys []string
	for i := range 2 {
		img := pngImage(t, 64+i, 48)
		id := s.uploadMedia(tok, img, 1<<20, map[string]any{"media_type": "image/png", "media_category": "tweet_image"})
		wantSucceeded(t, s.waitMedia(tok, s.baseURL, id, time.Minute), len(img))
		key := "3_" + id
		body := url.Values{"media_key": {key}}.Encode()
		if r := s.signedAt(tok, s.baseURL, http.MethodPost, "/12/accounts/"+acct+"/media_library", []byte(body), form); r.Status != http.StatusOK {
			t.Fatalf("add %s to the media library: %d %s", key, r.Status, r.Raw)
		}
		keys = append(keys, key)
	}
	cardURI := "card://e2ecard1"
	conn, err := pgx.Connect(t.Context(), s.dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name)
		VALUES ('e2ecard1', $1, 'component', 'IMAGE_CAROUSEL_WEBSITE', $2, 'e2e card')`, acct, cardURI); err != nil {
		t.Fatalf("insert card: %v", err)
	}

	params := url.Values{"as_user_id": {s.creds.UserID}, "text": {"Ads post with a card #aviary"}, "card_uri": {cardURI},
		"media_keys": {strings.Join(keys, ",")}, "name": {"e2e"}, "conversation_settings": {"MENTIONED_USERS"}}
	r := s.signedAt(tok, s.baseURL, http.MethodPost, "/12/accounts/"+acct+"/tweet", []byte(params.Encode()), form)
	if r.Status != http.StatusOK {
		t.Fatalf("POST tweet: %d %s", r.Status, r.Raw)
	}
	data, _ := r.Body["data"].(map[string]any)
	postID, _ := data["id_str"].(string)
	if postID == "" || data["tweet_type"] != "PUBLISHED" || data["nullcast"] != true {
		t.Fatalf("POST tweet answered %s", r.Raw)
	}
	if _, ok := data["conversation_settings"]; ok {
		t.Errorf("the create answer shows conversation_settings: %s", r.Raw)
	}

	path := "/2/tweets?ids=" + postID + "&tweet.fields=card_uri,attachments,author_id&expansions=attachments.media_keys&media.fields=width,height,type"
	core := s.signed(tok, http.MethodGet, path, nil)
	if core.Status != http.StatusOK {
		t.Fatalf("GET /2/tweets: %d %s", core.Status, core.Raw)
	}
	if err := apitest.ValidateResponse(t.Context(), router, http.MethodGet, path,
		apitest.Reply{Status: core.Status, Header: core.Header, Body: core.Body, Raw: string(core.Raw)}); err != nil {
		t.Errorf("GET /2/tweets does not match the OpenAPI description: %v\n%s", err, core.Raw)
	}
	posts, _ := core.Body["data"].([]any)
	if len(posts) != 1 {
		t.Fatalf("GET /2/tweets data: %s", core.Raw)
	}
	post := posts[0].(map[string]any)
	if post["card_uri"] != cardURI || post["author_id"] != s.creds.UserID || post["text"] != params.Get("text") {
		t.Errorf("core post = %v", post)
	}
	att, _ := post["attachments"].(map[string]any)
	if got := strings.Join(toStrings(att["media_keys"]), ","); got != strings.Join(keys, ",") {
		t.Errorf("attachments.media_keys = %v, want %v", att["media_keys"], keys)
	}
	includes, _ := core.Body["includes"].(map[string]any)
	media, _ := includes["media"].([]any)
	if len(media) != 2 {
		t.Fatalf("includes.media = %v", includes["media"])
	}
	for i, m := range media {
		mm := m.(map[string]any)
		if mm["media_key"] != keys[i] || mm["type"] != "photo" || mm["width"] != float64(64+i) {
			t.Errorf("includes.media[%d] = %v", i, mm)
		}
	}

	// found by search like any post (search reaches up to 2 seconds
	// before now: poll, as a client does)
	searchPath := "/2/tweets/search/recent?query=" + url.QueryEscape("#aviary card")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		search := s.do(http.MethodGet, searchPath, s.bearer(), nil)
		found, _ := search.Body["data"].([]any)
		if search.Status == http.StatusOK && len(found) == 1 && found[0].(map[string]any)["id"] == postID {
			break
		}
		if search.Status != http.StatusOK || len(found) > 0 || time.Now().After(deadline) {
			t.Fatalf("search for the ads post: %d %s", search.Status, search.Raw)
		}
	}

	list := s.signed(tok, http.MethodGet, "/12/accounts/"+acct+"/tweets?tweet_type=PUBLISHED&tweet_ids="+postID, nil)
	items, _ := list.Body["data"].([]any)
	if list.Status != http.StatusOK || len(items) != 1 || items[0].(map[string]any)["conversation_settings"] != "MENTIONED_USERS" {
		t.Errorf("GET tweets: %d %s", list.Status, list.Raw)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, it := range list {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}
