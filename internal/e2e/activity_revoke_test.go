package e2e

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestActivityPrivateStopsOnRevoke: carol subscribes the app to her
// private like.create events with her own OAuth 1.0a token through POST
// /2/activity/subscriptions, and the app (app-only) to bob's public
// post.create; a like of carol's post is delivered; carol's token is
// invalidated; the next like is not delivered, while bob's post, made
// after it, still is (the control: the sink is running and past the like).
func TestActivityPrivateStopsOnRevoke(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: webhookEnv})
	recv, hookID := newWebhookReceiver(t, s)
	carolTok, bobTok := s.userToken("carol_revoke"), s.userToken("bob_revoke")
	carol, err := s.db.UserByUsername(t.Context(), "carol_revoke")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := s.db.UserByUsername(t.Context(), "bob_revoke")
	if err != nil {
		t.Fatal(err)
	}
	carolID, bobID := strconv.FormatInt(carol.ID, 10), strconv.FormatInt(bob.ID, 10)
	subscribe := func(r response) {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("POST /2/activity/subscriptions answered %d %s", r.Status, r.Raw)
		}
	}
	subscribe(s.signedJSONAt(carolTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
		"event_type": "like.create", "filter": map[string]any{"user_id": carolID, "direction": "inbound"}, "webhook_id": hookID}))
	subscribe(s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
		"event_type": "post.create", "filter": map[string]any{"user_id": bobID}, "webhook_id": hookID}))

	first := s.mustPostAt(carolTok, s.baseURL, "a heron to like")
	second := s.mustPostAt(carolTok, s.baseURL, "a heron liked after the revocation")
	like := func(post string) {
		t.Helper()
		if r := s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/users/"+bobID+"/likes", map[string]any{"tweet_id": post}); r.Status != http.StatusOK {
			t.Fatalf("like answered %d %s", r.Status, r.Raw)
		}
	}
	like(first)
	recv.waitFor("the like before the revocation", 30*time.Second, func(ds []delivery) bool {
		return slices.Contains(webhookActivity(ds), "like.create>"+carolID)
	})

	if r := s.signed(carolTok, http.MethodPost, "/1.1/oauth/invalidate_token.json", nil); r.Status != http.StatusOK {
		t.Fatalf("invalidate_token answered %d %s", r.Status, r.Raw)
	}
	like(second)
	s.mustPostAt(bobTok, s.baseURL, "a public heron after the like")
	recv.waitFor("bob's post.create (the control)", 30*time.Second, func(ds []delivery) bool {
		return slices.Contains(webhookActivity(ds), "post.create>"+bobID)
	})
	time.Sleep(2 * time.Second) // deliveries of one batch may arrive out of order
	want := []string{"like.create>" + carolID, "post.create>" + bobID}
	if keys := webhookActivity(recv.deliveries()); !slices.Equal(keys, want) {
		t.Errorf("webhook received %v, want %v (no like after carol revoked the app)", keys, want)
	}
}
