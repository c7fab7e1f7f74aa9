package e2e

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestActivityPostAndProfileEventsEndToEnd (issue 29): the post, like and
// profile events that TestActivityEndToEnd does not produce, each made by
// its public action (or the admin command) and received over a signed
// webhook and over GET /2/activity/stream, with the subscriptions made
// through POST /2/activity/subscriptions: the private ones (reply, quote,
// repost, mention, like) with the filtered user's own token, the public
// ones (post.delete, profile.update.*) with the app's bearer token.
func TestActivityPostAndProfileEventsEndToEnd(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: webhookEnv})
	recv, hookID := newWebhookReceiver(t, s)
	demoTok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	me := s.creds.UserID
	bobTok := s.userToken("bob_posts")
	bob, err := s.db.UserByUsername(t.Context(), "bob_posts")
	if err != nil {
		t.Fatal(err)
	}
	subscribe := func(r response) {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("POST /2/activity/subscriptions answered %d %s", r.Status, r.Raw)
		}
	}
	filter := map[string]any{"user_id": me}
	for _, typ := range []string{"post.reply.create", "post.quote.create", "post.repost.create", "post.mention.create"} {
		subscribe(s.signedJSONAt(demoTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions",
			map[string]any{"event_type": typ, "filter": filter, "webhook_id": hookID}))
	}
	subscribe(s.signedJSONAt(demoTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions",
		map[string]any{"event_type": "like.create", "filter": map[string]any{"user_id": me, "direction": "outbound"}, "webhook_id": hookID}))
	profile := []string{"profile.update.screenname", "profile.update.url", "profile.update.geo",
		"profile.update.profile_picture", "profile.update.verified", "profile.update.handle"}
	for _, typ := range append([]string{"post.delete"}, profile...) {
		subscribe(s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions",
			map[string]any{"event_type": typ, "filter": filter, "webhook_id": hookID}))
	}
	stream := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if stream.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream answered %d %s", stream.Status, stream.Raw)
	}
	s.waitConnections(s.baseURL, "active", 1, 10*time.Second)

	// bob may reply: the post mentions him (programmatic replies must be summoned).
	post := s.mustPostAt(demoTok, s.baseURL, "a heron on the mudflat, @bob_posts")
	s.run("admin", "app", "tier", "aviary-demo", "enterprise") // quotes need an enterprise app
	gone := s.mustPostAt(demoTok, s.baseURL, "a post to delete")
	bobID := strconv.FormatInt(bob.ID, 10)
	actions := []struct {
		what string
		r    response
	}{
		{"reply", s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/tweets",
			map[string]any{"text": "lovely heron", "reply": map[string]any{"in_reply_to_tweet_id": post}})},
		{"quote", s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/tweets",
			map[string]any{"text": "look at this", "quote_tweet_id": post})},
		{"repost", s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/users/"+bobID+"/retweets", map[string]any{"tweet_id": post})},
		{"mention", s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/tweets",
			map[string]any{"text": "herons everywhere, ask @" + s.creds.Username})},
	}
	for _, a := range actions {
		if a.r.Status != http.StatusOK && a.r.Status != http.StatusCreated {
			t.Fatalf("%s answered %d %s", a.what, a.r.Status, a.r.Raw)
		}
	}
	bobPost := s.mustPostAt(bobTok, s.baseURL, "my own heron")
	if r := s.signedJSONAt(demoTok, s.baseURL, http.MethodPost, "/2/users/"+me+"/likes", map[string]any{"tweet_id": bobPost}); r.Status != http.StatusOK {
		t.Fatalf("like answered %d %s", r.Status, r.Raw)
	}
	if r := s.signedJSONAt(demoTok, s.baseURL, http.MethodDelete, "/2/tweets/"+gone, nil); r.Status != http.StatusOK {
		t.Fatalf("delete answered %d %s", r.Status, r.Raw)
	}
	s.run("admin", "user", "update", "--user", s.creds.Username, "--name", "Heron Watcher", "--url", "https://herons.example",
		"--location", "Estuary", "--image", "https://img.example/heron.png", "--verified", "on", "--handle", "heron_watcher")

	key := func(typ string) string { return typ + ">" + me }
	want := []string{key("post.reply.create"), key("post.quote.create"), key("post.repost.create"), key("post.mention.create"),
		key("like.create"), key("post.delete"), key("profile.update.screenname"), key("profile.update.url"),
		key("profile.update.geo"), key("profile.update.profile_picture"), key("profile.update.verified_badge"),
		key("profile.update.handle")}
	got := liveKeys(recv.waitFor("the post, like and profile events", 60*time.Second, func(ds []delivery) bool {
		return hasAll(liveKeys(ds), want)
	}))
	checks := []struct{ key, field, want string }{
		{key("post.reply.create"), "in_reply_to_user_id", me},
		{key("post.quote.create"), "author_id", bobID},
		{key("post.repost.create"), "author_id", bobID},
		{key("post.mention.create"), "author_id", bobID},
		{key("like.create"), "liked_tweet_id", bobPost},
		{key("post.delete"), "id", gone},
		{key("profile.update.screenname"), "after", "Heron Watcher"},
		{key("profile.update.url"), "after", "https://herons.example"},
		{key("profile.update.geo"), "after", "Estuary"},
		{key("profile.update.profile_picture"), "after", "https://img.example/heron.png"},
		{key("profile.update.verified_badge"), "after", "true"},
		{key("profile.update.handle"), "after", "heron_watcher"},
	}
	for _, c := range checks {
		if v, _ := dig(got[c.key], "payload", c.field).(string); v != c.want {
			t.Errorf("%s: payload.%s = %v, want %q (%v)", c.key, c.field, dig(got[c.key], "payload", c.field), c.want, got[c.key])
		}
	}
	if dir := dig(got[key("like.create")], "filter", "direction"); dir != "outbound" {
		t.Errorf("like.create direction %v", dir)
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong signature", bad)
	}

	lines := map[string]map[string]any{}
	for !hasAll(lines, want) {
		m, ok := stream.next(30 * time.Second)
		if !ok {
			t.Fatalf("the activity stream ended or went quiet with %v (want %v)", slices.Sorted(maps.Keys(lines)), want)
		}
		if k := liveKey(m.Data); k != "" {
			lines[k] = m.Data
		}
	}
	for _, k := range want {
		if lines[k]["event_uuid"] != got[k]["event_uuid"] {
			t.Errorf("%s: the stream's event_uuid %v is not the webhook's %v", k, lines[k]["event_uuid"], got[k]["event_uuid"])
		}
	}
}
