package e2e

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// activityKey is "event_type>filter user id" of an activity envelope
// (a webhook body or a stream line's data); "" for anything else.
func activityKey(data map[string]any) string {
	typ, _ := data["event_type"].(string)
	filter, _ := data["filter"].(map[string]any)
	user, _ := filter["user_id"].(string)
	if typ == "" {
		return ""
	}
	return typ + ">" + user
}

func webhookActivity(ds []delivery) []string {
	var out []string
	for _, d := range ds {
		data, _ := d.Body["data"].(map[string]any)
		if k := activityKey(data); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// TestActivityEndToEnd: subscriptions (inserted directly: the
// subscriptions API is another branch's), actions through the public API
// and the admin command, and their activity events received over a signed
// webhook and over GET /2/activity/stream; a protected author's post is
// not delivered; the stream shows in GET /2/connections, a second one is
// TooManyConnections, the connections endpoint terminates it; a replay of
// the window includes the activity deliveries.
func TestActivityEndToEnd(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: webhookEnv})
	recv, hookID := newWebhookReceiver(t, s)
	hook, _ := strconv.ParseInt(hookID, 10, 64)
	app, err := s.db.AppByName(t.Context(), "aviary-demo")
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := strconv.ParseInt(s.creds.UserID, 10, 64)
	bobTok := s.userToken("bob_activity")
	bob, err := s.db.UserByUsername(t.Context(), "bob_activity")
	if err != nil {
		t.Fatal(err)
	}
	shyTok := s.userToken("shy_activity")
	s.run("admin", "user", "state", "--user", "shy_activity", "--state", "protected")
	shy, err := s.db.UserByUsername(t.Context(), "shy_activity")
	if err != nil {
		t.Fatal(err)
	}
	db := storagetest.OpenDB(t, s.dbURL)
	for _, sub := range []storage.ActivitySubscription{
		{EventType: "post.create", FilterUserID: demo, Tag: "posts"},
		{EventType: "post.mention.create", FilterUserID: demo},
		{EventType: "like.create", FilterUserID: demo, Direction: "inbound"},
		{EventType: "like.create", FilterUserID: bob.ID, Direction: "inbound"}, // bob's posts: none are liked
		{EventType: "profile.update.bio", FilterUserID: demo},
		{EventType: "post.create", FilterUserID: shy.ID}, // protected: never delivered
	} {
		sub.AppID, sub.WebhookID = app.ID, hook
		factory.ActivitySubscriptionRow(t, db, sub)
	}

	stream := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if stream.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream answered %d %s", stream.Status, stream.Raw)
	}
	s.waitConnections(s.baseURL, "active", 1, 10*time.Second)
	second := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if second.Status != http.StatusTooManyRequests || !strings.Contains(string(second.Raw), "TooManyConnections") {
		t.Errorf("a second activity stream answered %d %s, want 429 TooManyConnections", second.Status, second.Raw)
	}
	refused := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, map[string][]string{"end_time": {"2026-01-01T00:00:00Z"}})
	if refused.Status != http.StatusBadRequest || !strings.Contains(string(refused.Raw), "end_time") {
		t.Errorf("end_time answered %d %s, want 400 naming end_time (the stream is open-ended)", refused.Status, refused.Raw)
	}

	demoTok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	start := time.Now()
	post := s.mustPostAt(demoTok, s.baseURL, "an activity heron")
	s.mustPostAt(shyTok, s.baseURL, "a protected heron")
	s.mustPostAt(bobTok, s.baseURL, "hello @"+s.creds.Username)
	if r := s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/users/"+strconv.FormatInt(bob.ID, 10)+"/likes",
		map[string]any{"tweet_id": post}); r.Status != http.StatusOK {
		t.Fatalf("like answered %d %s", r.Status, r.Raw)
	}
	s.run("admin", "user", "update", "--user", s.creds.Username, "--bio", "watching herons")

	me := strconv.FormatInt(demo, 10)
	want := []string{"post.create>" + me, "post.mention.create>" + me, "like.create>" + me, "profile.update.bio>" + me}
	got := recv.waitFor("the four activity events", 30*time.Second, func(ds []delivery) bool { return len(webhookActivity(ds)) >= 4 })
	t.Logf("action to webhook receipt of the last event: %v", time.Since(start))
	if keys := webhookActivity(got); !slices.Equal(keys, want) {
		t.Errorf("webhook received %v, want %v", keys, want)
	}
	for _, d := range got {
		data, _ := d.Body["data"].(map[string]any)
		if data["event_uuid"] != d.EventID || data["payload"] == nil {
			t.Errorf("webhook delivery %s: event_uuid and x-aviary-event-id %q differ, or no payload", d.Raw, d.EventID)
		}
		switch data["event_type"] {
		case "post.create":
			payload, _ := data["payload"].(map[string]any)
			if payload["id"] != post || data["tag"] != "posts" {
				t.Errorf("post.create delivery %s: want post %s tagged posts", d.Raw, post)
			}
		case "profile.update.bio":
			payload, _ := data["payload"].(map[string]any)
			if payload["after"] != "watching herons" {
				t.Errorf("bio delivery %s", d.Raw)
			}
		case "like.create":
			payload, _ := data["payload"].(map[string]any)
			filter, _ := data["filter"].(map[string]any)
			if payload["liked_tweet_id"] != post || filter["direction"] != "inbound" {
				t.Errorf("like delivery %s", d.Raw)
			}
		}
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong signature", bad)
	}

	var lines []string
	for len(lines) < len(want) {
		m, ok := stream.next(20 * time.Second)
		if !ok {
			t.Fatalf("the activity stream ended or went quiet after %v (want %v)", lines, want)
		}
		if k := activityKey(m.Data); k != "" {
			lines = append(lines, k)
		}
	}
	if !slices.Equal(lines, want) {
		t.Errorf("activity stream received %v, want %v", lines, want)
	}

	conns := s.connectionList(s.baseURL, "active")
	if len(conns) != 1 || conns[0]["endpoint_name"] != storage.EndpointActivityStream {
		t.Errorf("GET /2/connections = %v, want the one activity_stream", conns)
	}
	if r := s.bearerAt(s.baseURL, http.MethodDelete, "/2/connections/"+storage.EndpointActivityStream, nil); r.Status != http.StatusOK {
		t.Errorf("DELETE /2/connections/activity_stream answered %d %s", r.Status, r.Raw)
	}
	stream.waitEnd(15 * time.Second)

	// A new stream with backfill_minutes gets the events again, in order.
	back := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, map[string][]string{"backfill_minutes": {"5"}})
	if back.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream?backfill_minutes=5 answered %d %s", back.Status, back.Raw)
	}
	lines = nil
	for len(lines) < len(want) {
		m, ok := back.next(20 * time.Second)
		if !ok {
			t.Fatalf("the backfilled stream ended or went quiet after %v (want %v)", lines, want)
		}
		if k := activityKey(m.Data); k != "" {
			lines = append(lines, k)
		}
	}
	if !slices.Equal(lines, want) {
		t.Errorf("backfill received %v, want %v", lines, want)
	}
	back.close()

	// Replay of the window: the activity deliveries again, then the status.
	before := len(recv.deliveries())
	from := start.UTC().Add(-time.Minute).Format("200601021504")
	to := time.Now().UTC().Format("200601021504")
	rep := s.bearerAt(s.baseURL, http.MethodPost, "/2/webhooks/replay", map[string]any{"webhook_id": hookID, "from_date": from, "to_date": to})
	repData, _ := rep.Body["data"].(map[string]any)
	job, _ := repData["job_id"].(string)
	if job == "" {
		t.Fatalf("POST /2/webhooks/replay answered %d %s", rep.Status, rep.Raw)
	}
	got = recv.waitFor("the replay's status event", 60*time.Second, func(ds []delivery) bool {
		return slices.ContainsFunc(ds[before:], func(d delivery) bool { return replayStatus(d, job) != "" })
	})
	if keys := webhookActivity(got[before:]); !slices.Equal(keys, want) {
		t.Errorf("the replay delivered %v, want %v", keys, want)
	}
}

// newWebhookReceiver starts a signed receiver and registers it as a webhook
// of the demo app (its bearer token); it returns the receiver and the
// webhook's id.
func newWebhookReceiver(t *testing.T, s *stack) (*receiver, string) {
	t.Helper()
	recv := newReceiver(t, s.creds.ConsumerSecret)
	created := s.bearerAt(s.baseURL, http.MethodPost, "/2/webhooks", map[string]any{"url": recv.url()})
	hookData, _ := created.Body["data"].(map[string]any)
	hookID, _ := hookData["id"].(string)
	if created.Status != http.StatusOK || hookID == "" {
		t.Fatalf("POST /2/webhooks answered %d %s", created.Status, created.Raw)
	}
	return recv, hookID
}
