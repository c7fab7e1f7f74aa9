package cards_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// env is an account with media in its library for the card tests.
type env struct {
	s     *adstest.Server
	alice *adstest.Caller
	acct  storage.AdAccount
	base  string
}

func newEnv(t *testing.T) *env {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	return &env{s: s, alice: alice, acct: acct, base: "/12/accounts/" + acct.ID + "/cards"}
}

// media uploads a processed w x h media of category for alice; library
// adds it to the account's media library. It returns the media key.
func (e *env) media(t *testing.T, category string, w, h int, library bool) string {
	t.Helper()
	ctx, at := t.Context(), time.Now().UTC()
	m := factory.Media(t, e.s.DB, &factory.MediaOpts{Owner: &e.alice.User, Category: category})
	if _, err := e.s.DB.AddMediaSegment(ctx, storage.MediaSegment{MediaID: m.ID, Key: "media/seg", Size: m.TotalBytes}, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	if _, err := e.s.DB.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := e.s.DB.StartMediaProcessing(ctx, m.ID, at); err != nil {
		t.Fatalf("start: %v", err)
	}
	res := storage.MediaResult{Width: w, Height: h, DurationMS: 15400, OutputKey: storage.MediaOutputKey(m.ID, "mp4"),
		PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := e.s.DB.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if library {
		e.alice.Post(t, "/12/accounts/"+e.acct.ID+"/media_library", url.Values{"media_key": {m.Key}}).Status(t, http.StatusOK)
	}
	return m.Key
}

func (e *env) image(t *testing.T) string { return e.media(t, storage.MediaTweetImage, 1200, 628, true) }
func (e *env) video(t *testing.T) string { return e.media(t, storage.MediaTweetVideo, 1280, 720, true) }

// count is how many cards of the account the table holds, of any kind,
// deleted or not.
func (e *env) count(t *testing.T) int {
	t.Helper()
	var n int
	e.s.Scan(t, `SELECT count(*) FROM ads_cards WHERE account_id = $1`, []any{e.acct.ID}, &n)
	return n
}

// hasError reports whether the reply's errors name param with code.
func hasError(r adstest.Reply, code, param string) bool {
	errs, _ := r.Body["errors"].([]any)
	for _, e := range errs {
		m, _ := e.(map[string]any)
		if m["code"] == code && m["parameter"] == param {
			return true
		}
	}
	return false
}

// wantError checks status and that the errors name param with code.
func wantError(t *testing.T, r adstest.Reply, status int, code, param string) {
	t.Helper()
	if r.Code != status || !hasError(r, code, param) {
		t.Fatalf("got %d, want %d with %s naming %q: %s", r.Code, status, code, param, r.Raw)
	}
	if _, ok := r.Body["request"].(map[string]any); !ok {
		t.Fatalf("error without the ads envelope: %s", r.Raw)
	}
}

func check(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s: %s = %v, want %v", what, k, got[k], v)
		}
	}
}

func ids(items []map[string]any) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["id"].(string)
	}
	return strings.Join(out, ",")
}

// jsonText is v as JSON.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
