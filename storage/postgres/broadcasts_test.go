package postgres_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func liveEvents(t *testing.T, db *postgres.DB, after int64) []events.Event {
	t.Helper()
	return eventsOf(t, db, after, func(typ events.Type) bool {
		return strings.HasPrefix(string(typ), "spaces.") || strings.HasPrefix(string(typ), "broadcast.")
	})
}

func payloadOf[T any](t *testing.T, e events.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		t.Fatalf("event %s: %v", e.Type, err)
	}
	return v
}

// TestSpaceEvents: starting and ending a Space append spaces.start and
// spaces.end with the host as they were; ending twice is a conflict that
// appends nothing.
func TestSpaceEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	host := factory.User(t, db, &factory.UserOpts{Name: "Host"})
	from := head(t, db)
	s, err := db.StartSpace(ctx, host.ID, "Birds at dawn")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ID) != 13 || s.HostID != host.ID || s.EndedAt != nil {
		t.Fatalf("space %+v", s)
	}
	ended, err := db.EndSpace(ctx, s.ID)
	if err != nil || ended.EndedAt == nil {
		t.Fatalf("end: %+v, %v", ended, err)
	}
	if _, err := db.EndSpace(ctx, s.ID); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("second end: %v, want ErrConflict", err)
	}
	if _, err := db.EndSpace(ctx, "1nosuchspace0"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("unknown space: %v, want ErrNotFound", err)
	}
	if _, err := db.StartSpace(ctx, 1, "nobody"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("unknown host: %v, want ErrNotFound", err)
	}
	evs := liveEvents(t, db, from)
	if len(evs) != 2 || evs[0].Type != events.SpacesStart || evs[1].Type != events.SpacesEnd {
		t.Fatalf("events %+v, want spaces.start, spaces.end", evs)
	}
	for _, e := range evs {
		p := payloadOf[events.Space](t, e)
		if p.ID != s.ID || p.Title != "Birds at dawn" || p.Host.ID != host.ID || p.Host.Name != "Host" || e.UserID != host.ID {
			t.Errorf("%s: %+v", e.Type, p)
		}
	}
}

// TestBroadcastEvents: a broadcast's start, chat, removal by a moderator
// and end each append their event; a removal by another user is refused
// (ErrNotModerator) and appends nothing; chat after the end is a conflict.
func TestBroadcastEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	owner, mod, viewer := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	from := head(t, db)
	b, err := db.StartBroadcast(ctx, owner.ID, "Live from the marsh", "en", []int64{mod.ID})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.AddBroadcastChat(ctx, b.ID, viewer.ID, "hello marsh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveBroadcastChat(ctx, b.ID, m.ID, viewer.ID); !errors.Is(err, storage.ErrNotModerator) {
		t.Errorf("removal by a viewer: %v, want ErrNotModerator", err)
	}
	removed, err := db.RemoveBroadcastChat(ctx, b.ID, m.ID, mod.ID)
	if err != nil || removed.RemovedAt == nil || removed.RemovedBy != mod.ID {
		t.Fatalf("removal by the moderator: %+v, %v", removed, err)
	}
	if _, err := db.RemoveBroadcastChat(ctx, b.ID, m.ID, owner.ID); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("second removal: %v, want ErrConflict", err)
	}
	if _, err := db.EndBroadcast(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddBroadcastChat(ctx, b.ID, viewer.ID, "too late"); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("chat after the end: %v, want ErrConflict", err)
	}
	evs := liveEvents(t, db, from)
	var types []events.Type
	for _, e := range evs {
		types = append(types, e.Type)
	}
	want := []events.Type{events.BroadcastStart, events.BroadcastChat, events.BroadcastChatRemove, events.BroadcastEnd}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	chat := payloadOf[events.BroadcastChatSent](t, evs[1])
	if chat.BroadcastID != b.ID || chat.OwnerID != owner.ID || chat.MessageID != m.ID || chat.Text != "hello marsh" || chat.Author.ID != viewer.ID {
		t.Errorf("broadcast.chat %+v", chat)
	}
	rm := payloadOf[events.BroadcastChatRemoved](t, evs[2])
	if rm.BroadcastID != b.ID || rm.MessageID != m.ID || rm.OwnerID != owner.ID || rm.RemovedBy != mod.ID || rm.AuthorID != viewer.ID {
		t.Errorf("broadcast.chat.remove %+v", rm)
	}
	end := payloadOf[events.Broadcast](t, evs[3])
	if end.ID != b.ID || end.Owner.ID != owner.ID || end.EndedAt.IsZero() || end.Title != "Live from the marsh" || end.Language != "en" {
		t.Errorf("broadcast.end %+v", end)
	}
}

// TestBannerAndAffiliateEvents: user update's banner and affiliate badge
// append their profile.update events when they change, none otherwise.
func TestBannerAndAffiliateEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	u := factory.User(t, db, nil)
	banner, on := "https://img.example/banner.png", true
	from := head(t, db)
	for range 2 {
		if _, _, err := db.UpdateUserProfile(ctx, u.ID, postgres.ProfileUpdate{Banner: &banner, Affiliate: &on}); err != nil {
			t.Fatal(err)
		}
	}
	evs := eventsOf(t, db, from, func(typ events.Type) bool { return strings.HasPrefix(string(typ), events.ProfileUpdatePrefix) })
	if len(evs) != 2 || evs[0].Type != events.ProfileUpdateBanner || evs[1].Type != events.ProfileUpdateAffiliateBadge {
		t.Fatalf("events %+v, want banner then affiliate, once", evs)
	}
	if p := payloadOf[events.ProfileUpdated](t, evs[0]); p.Before != "" || p.After != banner {
		t.Errorf("banner %+v", p)
	}
	if p := payloadOf[events.ProfileUpdated](t, evs[1]); p.Before != "false" || p.After != "true" {
		t.Errorf("affiliate %+v", p)
	}
	got, badge, err := db.UserBannerAndBadge(ctx, u.ID)
	if err != nil || got != banner || !badge {
		t.Errorf("UserBannerAndBadge = %q, %v, %v", got, badge, err)
	}
}

// TestNewsNewEvent: a created story appends news.new; refreshing it does
// not.
func TestNewsNewEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	now := time.Now().UTC()
	from := head(t, db)
	first, created, err := db.UpsertNewsStory(ctx, newsStory("heron"), now, nil)
	if err != nil || !created {
		t.Fatal(created, err)
	}
	if _, created, err := db.UpsertNewsStory(ctx, newsStory("heron"), now.Add(time.Minute), nil); err != nil || created {
		t.Fatal(created, err)
	}
	evs := eventsOf(t, db, from, func(typ events.Type) bool { return typ == events.NewsNew })
	if len(evs) != 1 {
		t.Fatalf("%d news.new events, want 1", len(evs))
	}
	p := payloadOf[events.NewsStory](t, evs[0])
	if p.ID != first.ID || p.Name != "Story about heron" || p.Summary != "Posts mention heron." || !slices.Equal(p.PostIDs, []int64{3, 2, 1}) ||
		!strings.Contains(string(p.Contexts), "heron") {
		t.Errorf("news.new %+v", p)
	}
}

// TestOAuthRevokeEvent: oauth.revoke is appended when a revocation ends a
// user's last live grant to an app: not while another grant lives, not
// for an access token whose refresh token lives, not twice.
func TestOAuthRevokeEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app, err := db.CreateApp(ctx, "revoke-app", "")
	if err != nil {
		t.Fatal(err)
	}
	u := factory.User(t, db, nil)
	tok, err := db.EnsureAccessToken(ctx, app.ID, u.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	grant(t, db, app.ID, u.ID, "code-r", "access-r", "refresh-r")
	revokes := func() []events.OAuthRevoked {
		var out []events.OAuthRevoked
		for _, e := range eventsOf(t, db, 0, func(typ events.Type) bool { return typ == events.OAuthRevoke }) {
			out = append(out, payloadOf[events.OAuthRevoked](t, e))
		}
		return out
	}
	if err := db.RevokeAccessToken(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}
	if got := revokes(); len(got) != 0 {
		t.Fatalf("the OAuth 2.0 grant lives, yet %+v", got)
	}
	if _, err := db.RevokeOAuth2Token(ctx, "access-r", app.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := revokes(); len(got) != 0 {
		t.Fatalf("the refresh token lives, yet %+v", got)
	}
	for range 2 {
		if _, err := db.RevokeOAuth2Token(ctx, "refresh-r", app.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	got := revokes()
	if len(got) != 1 || got[0].UserID != u.ID || got[0].AppID != app.ID || got[0].At.IsZero() {
		t.Fatalf("revocations %+v, want one for the user and app", got)
	}
	// A new OAuth 1.0a grant, revoked: a second event.
	tok2, err := db.EnsureAccessToken(ctx, app.ID, u.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAccessToken(ctx, tok2.Token); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAccessToken(ctx, tok2.Token); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second revoke: %v, want ErrNotFound", err)
	}
	if got := revokes(); len(got) != 2 {
		t.Errorf("%d revocations, want 2", len(got))
	}
}

// TestActivityKeywordSubscriptions: the keyword lookup returns the
// news.new subscriptions whose keyword occurs in a text (case and white
// space aside), in id order, and no others.
func TestActivityKeywordSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app, err := db.CreateApp(ctx, "keyword-app", "")
	if err != nil {
		t.Fatal(err)
	}
	u := factory.User(t, db, nil)
	sub := func(typ, kw string, user int64) int64 {
		return factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: typ, FilterKeyword: kw, FilterUserID: user})
	}
	eclipse, phrase := sub("news.new", "Eclipse", 0), sub("news.new", "solar  eclipse", 0)
	sub("news.new", "volcano", 0)
	sub("post.create", "", u.ID)
	got, err := db.ActivityKeywordSubscriptions(ctx, "news.new", []string{"A total SOLAR eclipse", "over the valley"})
	if err != nil {
		t.Fatal(err)
	}
	var idsGot []int64
	for _, s := range got {
		idsGot = append(idsGot, s.ID)
	}
	if !slices.Equal(idsGot, []int64{eclipse, phrase}) {
		t.Errorf("matched %v, want %v", idsGot, []int64{eclipse, phrase})
	}
	if none, err := db.ActivityKeywordSubscriptions(ctx, "news.new", nil); err != nil || len(none) != 0 {
		t.Errorf("no texts: %v, %v", none, err)
	}
}
