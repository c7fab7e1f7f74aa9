package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestConsoleCoreBrowser walks the console's posts, media, streams and
// activity pages in headless Chromium (docs/console.md): a search finds a
// post and a refused query shows the API's detail; a processed image
// shows its preview, streamed through the console; a filtered stream held
// by another API replica is listed, and Kill ends it with the
// operational-disconnect error. Every page passes the accessibility audit
// (checkShots) and fits a phone's width.
func TestConsoleCoreBrowser(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{"AVIARY_STREAM_KEEPALIVE=1s"}})
	baseB, _ := s.startReplica()
	tok := s.demoToken()
	post := s.mustPostAt(tok, s.baseURL, "a heron in the console")
	media := s.uploadMedia(tok, pngImage(t, 320, 200), 1<<20, map[string]any{"media_type": "image/png", "media_category": "tweet_image"})
	s.waitMedia(tok, s.baseURL, media, 90*time.Second)
	onB := openStream(t, http.DefaultClient, baseB, s.creds.BearerToken, nil)
	if onB.Status != http.StatusOK {
		t.Fatalf("stream on B: %d %s", onB.Status, onB.Raw)
	}
	conn, _ := s.waitConnections(s.baseURL, "active", 1, 5*time.Second)[0]["id"].(string)

	steps := login(s.creds.Username, s.creds.Password)
	steps = append(steps,
		goTo(s.baseURL+"/console/posts?"+url.Values{"q": {"heron"}}.Encode()), expectText("a heron in the console"), shot("posts"),
		goTo(s.baseURL+"/console/posts?"+url.Values{"q": {"(heron"}}.Encode()), expectText("There were errors processing your request"), shot("posts-refused"),
		goTo(s.baseURL+"/console/media"), expectText(media), shot("media"),
		goTo(s.baseURL+"/console/streams"), expectText(conn), shot("streams"),
		click("Kill connection "+conn), expectText("is ending"), shot("stream-killed"),
		goTo(s.baseURL+"/console/activity"), shot("activity"),
		viewport("390x844"), goTo(s.baseURL+"/console/media"), fitsWidth(), shot("phone-media"),
		goTo(s.baseURL+"/console/posts?"+url.Values{"q": {"heron"}}.Encode()), fitsWidth(), shot("phone-posts"))

	runBrowserScenarios(t, s, []browserScenario{{Name: "console-core", Start: s.baseURL + "/console/login", Steps: steps,
		check: func(t *testing.T, r browserResult) {
			if p := r.shot(t, "posts"); !strings.Contains(p.Text, post) {
				t.Errorf("the posts page does not show post %s:\n%s", post, p.Text)
			}
			wantDisconnectPayload(t, "the stream on B killed in the console on A", onB.waitEnd(10*time.Second))
			if p := r.shot(t, "media"); !strings.Contains(p.Text, "succeeded") {
				t.Errorf("the media page does not show the image processed:\n%s", p.Text)
			}
		}}})
}
