package activity_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestSinkLiveEvents drives the stream sink with the events of Spaces,
// broadcasts, chat, news, an OAuth revocation and the banner and badge
// updates, as the real writes append them: each reaches the subscription
// of its filtered user (the chat the broadcast owner's); news.new only the
// keyword subscriptions whose keyword is a word or phrase of the story;
// oauth.revoke only the revoked app's subscription (not the one of the app
// the user still grants); payloads in the
// reference's shapes.
func TestSinkLiveEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app, other := factory.App(t, db, nil), factory.App(t, db, nil)
	host, viewer := factory.User(t, db, &factory.UserOpts{Name: "Host"}), factory.User(t, db, nil)
	subs := map[int64]string{}
	sub := func(s storage.ActivitySubscription) {
		if s.AppID == 0 {
			s.AppID = app.ID
		}
		subs[factory.ActivitySubscriptionRow(t, db, s)] = s.EventType + ">" + s.FilterKeyword
	}
	for _, typ := range []string{"spaces.start", "spaces.end", "broadcast.start", "broadcast.end", "broadcast.chat",
		"broadcast.chat.remove", "oauth.revoke", "profile.update.banner_picture", "profile.update.affiliate_badge"} {
		sub(storage.ActivitySubscription{EventType: typ, FilterUserID: host.ID})
	}
	sub(storage.ActivitySubscription{EventType: "broadcast.chat", FilterUserID: viewer.ID}) // the author: not theirs
	sub(storage.ActivitySubscription{AppID: other.ID, EventType: "oauth.revoke", FilterKeyword: "", FilterUserID: host.ID, CreatedBy: host.ID})
	sub(storage.ActivitySubscription{EventType: "news.new", FilterKeyword: "solar eclipse"})
	sub(storage.ActivitySubscription{EventType: "news.new", FilterKeyword: "ECLIPSE"})
	sub(storage.ActivitySubscription{EventType: "news.new", FilterKeyword: "eclip"})   // not a word of it
	sub(storage.ActivitySubscription{EventType: "news.new", FilterKeyword: "volcano"}) // not in it

	space, err := db.StartSpace(ctx, host.ID, "Dawn chorus")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EndSpace(ctx, space.ID); err != nil {
		t.Fatal(err)
	}
	b, err := db.StartBroadcast(ctx, host.ID, "Marsh live", "en", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.AddBroadcastChat(ctx, b.ID, viewer.ID, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveBroadcastChat(ctx, b.ID, m.ID, host.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EndBroadcast(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	banner, on := "https://img.example/banner.png", true
	if _, _, err := db.UpdateUserProfile(ctx, host.ID, postgres.ProfileUpdate{Banner: &banner, Affiliate: &on}); err != nil {
		t.Fatal(err)
	}
	story := storage.NewsStory{LeadTerm: "eclipse", Keywords: []string{"eclipse"}, Name: "Solar Eclipse over the valley",
		Summary: "Posts about the eclipse.", Hook: "Look up"}
	if _, _, err := db.UpsertNewsStory(ctx, story, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	tok, err := db.EnsureAccessToken(ctx, other.ID, host.ID, storage.AccessReadWrite) // the other app's grant ends
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAccessToken(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}

	published := streamLog(ctx, t, db)
	var got []string
	payloads := map[string]map[string]any{}
	for _, a := range published {
		e := decode(t, a.Body)
		got = append(got, subs[a.SubscriptionID])
		payloads[subs[a.SubscriptionID]] = e.Data.Payload
		if wantApp := app.ID; a.AppID != wantApp && !(e.Data.EventType == "oauth.revoke" && a.AppID == other.ID) {
			t.Errorf("delivered to app %d: %s", a.AppID, a.Body)
		}
	}
	want := []string{"spaces.start>", "spaces.end>", "broadcast.start>", "broadcast.chat>", "broadcast.chat.remove>",
		"broadcast.end>", "profile.update.banner_picture>", "profile.update.affiliate_badge>",
		"news.new>solar eclipse", "news.new>ECLIPSE", "oauth.revoke>"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	user := func(p map[string]any, key string) map[string]any {
		u, _ := p[key].(map[string]any)
		data, _ := u["data"].(map[string]any)
		return data
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"spaces.start", payloads["spaces.start>"]["broadcast_id"] == space.ID && payloads["spaces.start>"]["event_type"] == "spaces_start" &&
			user(payloads["spaces.start>"], "user")["id"] == id(host.ID)},
		{"spaces.end", payloads["spaces.end>"]["event_type"] == "spaces_end"},
		{"broadcast.start", payloads["broadcast.start>"]["broadcast_state"] == "Running" && payloads["broadcast.start>"]["title"] == "Marsh live" &&
			payloads["broadcast.start>"]["created_timestamp_ms_str"] != nil && user(payloads["broadcast.start>"], "user")["name"] == "Host"},
		{"broadcast.end", payloads["broadcast.end>"]["broadcast_state"] == "Ended" && payloads["broadcast.end>"]["duration_ms_str"] != nil},
		{"broadcast.chat", payloads["broadcast.chat>"]["message"] == "hello" && payloads["broadcast.chat>"]["message_id"] == id(m.ID) &&
			user(payloads["broadcast.chat>"], "author")["id"] == id(viewer.ID)},
		{"broadcast.chat.remove", payloads["broadcast.chat.remove>"]["message_id"] == id(m.ID) && payloads["broadcast.chat.remove>"]["broadcast_id"] == b.ID},
		{"banner", payloads["profile.update.banner_picture>"]["after"] == banner},
		{"affiliate", payloads["profile.update.affiliate_badge>"]["after"] == "true"},
		{"news.new", payloads["news.new>ECLIPSE"]["name"] == story.Name && payloads["news.new>ECLIPSE"]["category"] == "News"},
		{"oauth.revoke", payloads["oauth.revoke>"]["user_id"] == id(host.ID) && payloads["oauth.revoke>"]["app_id"] == id(other.ID) &&
			payloads["oauth.revoke>"]["date_time"] != nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s payload: %v", c.name, payloads)
		}
	}
}

// TestLiveEnvelopesMatchOpenAPI: the envelopes of the new types match the
// description's ActivityStreamResponse (without the payload, as
// TestEnvelopesMatchOpenAPI checks it), and the banner and affiliate
// payloads its ProfileUpdateActivityResponsePayload; the description's
// payload mapping has no Spaces, broadcast or OAuth schema, and its news
// schema is not the event-payloads page's (docs/activity.md, "News").
func TestLiveEnvelopesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	schemas := openapiSchemas(t)
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	host, viewer := factory.User(t, db, nil), factory.User(t, db, nil)
	for _, typ := range []string{"spaces.start", "broadcast.start", "broadcast.chat", "broadcast.chat.remove",
		"profile.update.banner_picture", "profile.update.affiliate_badge"} {
		factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: typ, FilterUserID: host.ID, Tag: "t"})
	}
	factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: "news.new", FilterKeyword: "heron"})
	if _, err := db.StartSpace(ctx, host.ID, "s"); err != nil {
		t.Fatal(err)
	}
	b, err := db.StartBroadcast(ctx, host.ID, "b", "en", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.AddBroadcastChat(ctx, b.ID, viewer.ID, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveBroadcastChat(ctx, b.ID, m.ID, host.ID); err != nil {
		t.Fatal(err)
	}
	banner, on := "https://img.example/b.png", true
	if _, _, err := db.UpdateUserProfile(ctx, host.ID, postgres.ProfileUpdate{Banner: &banner, Affiliate: &on}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.UpsertNewsStory(ctx, storage.NewsStory{LeadTerm: "heron", Name: "Heron season", Summary: "Herons."}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	published := streamLog(ctx, t, db)
	envelopeSchema := withoutPayload(t, schemas["ActivityStreamResponse"].Value)
	profile := schemas["ProfileUpdateActivityResponsePayload"].Value
	seen := map[string]bool{}
	for _, a := range published {
		var env map[string]any
		if err := json.Unmarshal(a.Body, &env); err != nil {
			t.Fatal(err)
		}
		data, _ := env["data"].(map[string]any)
		typ, _ := data["event_type"].(string)
		seen[typ] = true
		if strings.HasPrefix(typ, "profile.update.") {
			if err := profile.VisitJSON(data["payload"], openapi3.MultiErrors()); err != nil {
				t.Errorf("%s payload: %v\nbody: %s", typ, err, a.Body)
			}
		}
		delete(data, "payload")
		if err := envelopeSchema.VisitJSON(env, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s envelope does not match ActivityStreamResponse: %v\nbody: %s", typ, err, a.Body)
		}
	}
	if len(seen) != 7 {
		t.Errorf("rendered %v, want the seven types", seen)
	}
}
