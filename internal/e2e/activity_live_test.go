package e2e

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveKey is "event_type>user id or keyword" of an activity envelope's
// data ("" for anything else).
func liveKey(data map[string]any) string {
	typ, _ := data["event_type"].(string)
	if typ == "" {
		return ""
	}
	filter, _ := data["filter"].(map[string]any)
	if kw, ok := filter["keyword"].(string); ok {
		return typ + ">" + kw
	}
	user, _ := filter["user_id"].(string)
	return typ + ">" + user
}

// liveKeys are the liveKeys of webhook deliveries, with each one's data.
func liveKeys(ds []delivery) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range ds {
		data, _ := d.Body["data"].(map[string]any)
		if k := liveKey(data); k != "" {
			out[k] = data
		}
	}
	return out
}

func hasAll(got map[string]map[string]any, want []string) bool {
	for _, k := range want {
		if got[k] == nil {
			return false
		}
	}
	return true
}

type exchanged struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// exchangeToken exchanges an OAuth 1.0a token of the demo app for an OAuth
// 2.0 grant (scope "": the token's whole level).
func exchangeToken(t *testing.T, s *stack, tok userToken, scope string) exchanged {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {tok.token},
		"subject_token_type": {"urn:x:params:oauth:token-type:oauth1_token"}, "oauth_token_secret": {tok.secret}}
	if scope != "" {
		form.Set("scope", scope)
	}
	r := s.oauth2Form(t, "/2/oauth2/token", form)
	var out exchanged
	if err := json.Unmarshal(r.Raw, &out); r.Status != http.StatusOK || err != nil || out.AccessToken == "" {
		t.Fatalf("token exchange for %q answered %d %s", scope, r.Status, r.Raw)
	}
	return out
}

// oauth2Form posts form to an OAuth 2.0 endpoint as the demo app's
// confidential client.
func (s *stack) oauth2Form(t *testing.T, path string, form url.Values) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.baseURL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(s.creds.ClientID, s.creds.ClientSecret)
	return s.send(req)
}

// TestActivityLiveEventsEndToEnd (issue 29): the events that do not come
// from public endpoints, each produced by its action through the built
// binary and received over GET /2/activity/stream and over a signed
// webhook: spaces.start/.end (`admin space`), broadcast.start/.end,
// broadcast.chat and broadcast.chat.remove (`admin broadcast`), the banner
// and affiliate badge updates (`admin user update`), news.new from the
// news worker (a keyword in the story matches, another does not), and
// oauth.revoke when the user invalidates their token (and, for a user
// holding an OAuth 2.0 grant too, only when its refresh token is revoked
// as well); a broadcast.chat
// subscription with an OAuth 2.0 token lacking broadcast.read is refused.
func TestActivityLiveEventsEndToEnd(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1,
		env: append(slices.Clone(webhookEnv), "AVIARY_NEWS_INTERVAL=1s", "AVIARY_INSIGHTS_PAIR_SAMPLE=1")})
	recv, hookID := newWebhookReceiver(t, s)
	hostTok := s.userToken("host_live")
	s.run("admin", "user", "create", "--username", "viewer_live")
	host, err := s.db.UserByUsername(t.Context(), "host_live")
	if err != nil {
		t.Fatal(err)
	}
	app, err := s.db.AppByName(t.Context(), "aviary-demo")
	if err != nil {
		t.Fatal(err)
	}
	hostID := strconv.FormatInt(host.ID, 10)
	subscribe := func(r response) {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("POST /2/activity/subscriptions answered %d %s", r.Status, r.Raw)
		}
	}
	for _, typ := range []string{"spaces.start", "spaces.end", "broadcast.start", "broadcast.end",
		"profile.update.banner_picture", "profile.update.affiliate_badge"} {
		subscribe(s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
			"event_type": typ, "filter": map[string]any{"user_id": hostID}, "webhook_id": hookID}))
	}
	for _, kw := range []string{"eclipse", "volcano"} {
		subscribe(s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
			"event_type": "news.new", "filter": map[string]any{"keyword": kw}, "webhook_id": hookID}))
	}
	for _, typ := range []string{"broadcast.chat", "broadcast.chat.remove", "oauth.revoke"} {
		subscribe(s.signedJSONAt(hostTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
			"event_type": typ, "filter": map[string]any{"user_id": hostID}, "webhook_id": hookID}))
	}
	// grant_live holds two grants (OAuth 1.0a and OAuth 2.0): oauth.revoke
	// only when the second ends.
	grantTok := s.userToken("grant_live")
	grantUser, err := s.db.UserByUsername(t.Context(), "grant_live")
	if err != nil {
		t.Fatal(err)
	}
	grantID := strconv.FormatInt(grantUser.ID, 10)
	subscribe(s.signedJSONAt(grantTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", map[string]any{
		"event_type": "oauth.revoke", "filter": map[string]any{"user_id": grantID}, "webhook_id": hookID}))
	grantOAuth2 := exchangeToken(t, s, grantTok, "")
	if grantOAuth2.RefreshToken == "" {
		t.Fatalf("the exchange gave no refresh token: %+v", grantOAuth2)
	}
	narrow := exchangeToken(t, s, userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}, "tweet.read users.read offline.access")
	if strings.Contains(narrow.Scope, "broadcast.read") {
		t.Fatalf("the narrow exchange granted %q", narrow.Scope)
	}
	refused := s.do(http.MethodPost, "/2/activity/subscriptions", "Bearer "+narrow.AccessToken, map[string]any{
		"event_type": "broadcast.chat", "filter": map[string]any{"user_id": s.creds.UserID}})
	if refused.Status != http.StatusForbidden || !strings.Contains(string(refused.Raw), "broadcast.read") {
		t.Errorf("broadcast.chat without broadcast.read answered %d %s, want 403 naming broadcast.read", refused.Status, refused.Raw)
	}

	stream := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if stream.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream answered %d %s", stream.Status, stream.Raw)
	}
	s.waitConnections(s.baseURL, "active", 1, 10*time.Second)

	var space, bcast, msg map[string]any
	s.runJSON(&space, "admin", "space", "start", "--host", "host_live", "--title", "Dawn chorus")
	if r := s.bearerAt(s.baseURL, http.MethodGet, "/2/spaces/"+space["id"].(string)+"?space.fields=title,host_ids", nil); r.Status != http.StatusOK ||
		dig(r.Body, "data", "state") != "live" || dig(r.Body, "data", "title") != "Dawn chorus" || dig(r.Body, "data", "host_ids", 0) != hostID {
		t.Errorf("GET /2/spaces/{id} answered %d %s", r.Status, r.Raw)
	}
	s.run("admin", "space", "end", "--space", space["id"].(string))
	s.runJSON(&bcast, "admin", "broadcast", "start", "--user", "host_live", "--title", "Marsh live")
	bID := bcast["id"].(string)
	s.runJSON(&msg, "admin", "broadcast", "chat", "--broadcast", bID, "--user", "viewer_live", "--text", "hello marsh")
	msgID := msg["id"].(string)
	s.run("admin", "broadcast", "chat-remove", "--broadcast", bID, "--message", msgID, "--by", "host_live")
	s.run("admin", "broadcast", "end", "--broadcast", bID)
	s.run("admin", "user", "update", "--user", "host_live", "--banner", "https://img.example/banner.png", "--affiliate", "on")
	demoTok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	for _, text := range []string{
		"The total #eclipse is starting over the valley",
		"Eclipse glasses on, the sky goes dark #eclipse",
		"Watching the eclipse from the rooftop with friends",
		"Never seen an eclipse like this one #eclipse",
		"Eclipse totality lasted almost three minutes",
		"Best eclipse photos so far from the valley #eclipse",
	} {
		s.mustPostAt(demoTok, s.baseURL, text)
	}
	user := func(k string) string { return k + ">" + hostID }
	want := []string{user("spaces.start"), user("spaces.end"), user("broadcast.start"), user("broadcast.chat"),
		user("broadcast.chat.remove"), user("broadcast.end"), user("profile.update.banner_picture"),
		user("profile.update.affiliate_badge"), "news.new>eclipse"}
	recv.waitFor("the spaces, broadcast, profile and news events", 120*time.Second, func(ds []delivery) bool {
		return hasAll(liveKeys(ds), want)
	})
	// grant_live's OAuth 1.0a token goes, its OAuth 2.0 grant stays: no
	// event. Then the host's only grant ends last (broadcast.chat needs
	// it, oauth.revoke outlives it): its event, appended after, shows the
	// sink went past grant_live's revocation.
	for _, tok := range []userToken{grantTok, hostTok} {
		if r := s.signed(tok, http.MethodPost, "/1.1/oauth/invalidate_token.json", nil); r.Status != http.StatusOK {
			t.Fatalf("invalidate_token answered %d %s", r.Status, r.Raw)
		}
	}
	want = append(want, user("oauth.revoke"))
	got := liveKeys(recv.waitFor("oauth.revoke", 30*time.Second, func(ds []delivery) bool { return hasAll(liveKeys(ds), want) }))
	if got["oauth.revoke>"+grantID] != nil {
		t.Errorf("oauth.revoke for grant_live while its OAuth 2.0 grant lives: %v", got["oauth.revoke>"+grantID])
	}
	// Revoking the refresh token (RFC 7009) ends grant_live's last grant.
	if r := s.oauth2Form(t, "/2/oauth2/revoke", url.Values{"token": {grantOAuth2.RefreshToken}}); r.Status != http.StatusOK {
		t.Fatalf("POST /2/oauth2/revoke answered %d %s", r.Status, r.Raw)
	}
	want = append(want, "oauth.revoke>"+grantID)
	got = liveKeys(recv.waitFor("grant_live's oauth.revoke", 30*time.Second, func(ds []delivery) bool { return hasAll(liveKeys(ds), want) }))

	checks := []struct {
		key, path, want string
	}{
		{user("spaces.start"), "broadcast_id", space["id"].(string)},
		{user("spaces.start"), "event_type", "spaces_start"},
		{user("spaces.end"), "event_type", "spaces_end"},
		{user("broadcast.start"), "broadcast_state", "Running"},
		{user("broadcast.start"), "title", "Marsh live"},
		{user("broadcast.end"), "broadcast_state", "Ended"},
		{user("broadcast.chat"), "message", "hello marsh"},
		{user("broadcast.chat"), "message_id", msgID},
		{user("broadcast.chat.remove"), "message_id", msgID},
		{user("broadcast.chat.remove"), "broadcast_id", bID},
		{user("profile.update.banner_picture"), "after", "https://img.example/banner.png"},
		{user("profile.update.affiliate_badge"), "after", "true"},
		{user("oauth.revoke"), "user_id", hostID},
		{user("oauth.revoke"), "app_id", strconv.FormatInt(app.ID, 10)},
		{"oauth.revoke>" + grantID, "user_id", grantID},
	}
	for _, c := range checks {
		payload, _ := got[c.key]["payload"].(map[string]any)
		if v, _ := payload[c.path].(string); v != c.want {
			t.Errorf("%s payload %s = %v, want %q (%v)", c.key, c.path, payload[c.path], c.want, payload)
		}
	}
	if name, _ := dig(got[user("broadcast.chat")], "payload", "author", "data", "username").(string); name != "viewer_live" {
		t.Errorf("broadcast.chat author %v", got[user("broadcast.chat")])
	}
	if summary, _ := dig(got["news.new>eclipse"], "payload", "summary").(string); dig(got["news.new>eclipse"], "payload", "id") == nil ||
		!strings.Contains(strings.ToLower(summary+" "+dig(got["news.new>eclipse"], "payload", "name").(string)), "eclipse") {
		t.Errorf("news.new payload %v", got["news.new>eclipse"])
	}
	for _, d := range recv.deliveries() {
		data, _ := d.Body["data"].(map[string]any)
		if data["event_uuid"] != d.EventID {
			t.Errorf("webhook delivery %s: event_uuid and x-aviary-event-id %q differ", d.Raw, d.EventID)
		}
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong signature", bad)
	}

	lines := map[string]map[string]any{}
	for !hasAll(lines, want) {
		m, ok := stream.next(30 * time.Second)
		if !ok {
			t.Fatalf("the activity stream ended or went quiet after %v (want %v)", slices.Sorted(maps.Keys(lines)), want)
		}
		if k := liveKey(m.Data); k != "" {
			lines[k] = m.Data
		}
	}
	if p, _ := lines[user("broadcast.chat")]["payload"].(map[string]any); p["message"] != "hello marsh" {
		t.Errorf("stream broadcast.chat %v", lines[user("broadcast.chat")])
	}
	// The non-matching keyword: no news.new on either path.
	if got := liveKeys(recv.deliveries()); got["news.new>volcano"] != nil || lines["news.new>volcano"] != nil {
		t.Errorf("a story without the word volcano reached its subscription: %v / %v", got["news.new>volcano"], lines["news.new>volcano"])
	}
}
