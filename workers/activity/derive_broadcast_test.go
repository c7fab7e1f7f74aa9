package activity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// TestDeriveLive: the filtered user, app and keyword texts of each live
// type, and the payloads' exact values where the page fixes a format.
func TestDeriveLive(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 7, 23, 21, 44, 5, 0, time.UTC)
	host := events.UserCard{ID: 5, Username: "host", Name: "Host", CreatedAt: at, Posts: 3, Verified: true}
	tests := []struct {
		name    string
		ev      events.Event
		user    int64
		app     int64
		match   []string
		payload string
	}{
		{"spaces.start", event(t, events.SpacesStart, events.Space{ID: "1abcdefghijkl", Host: host}), 5, 0, nil, ""},
		{"broadcast.chat to the owner", event(t, events.BroadcastChat, events.BroadcastChatSent{BroadcastID: "1b", OwnerID: 9, MessageID: 12,
			Text: "hi", Author: host}), 9, 0, nil, ""},
		{"broadcast.chat.remove to the owner", event(t, events.BroadcastChatRemove, events.BroadcastChatRemoved{BroadcastID: "1b", OwnerID: 9,
			MessageID: 12, AuthorID: 5, RemovedBy: 9}), 9, 0, nil, `{"broadcast_id":"1b","message_id":"12"}`},
		{"news.new", event(t, events.NewsNew, events.NewsStory{ID: 4, Name: "Heron season", Summary: "Herons."}), 0, 0,
			[]string{"Heron season", "Herons."}, ""},
		{"oauth.revoke for one app", event(t, events.OAuthRevoke, events.OAuthRevoked{UserID: 5, AppID: 29820954, At: at}), 5, 29820954, nil,
			`{"app_id":"29820954","date_time":"2026-07-23T21:44:05+00:00","user_id":"5"}`},
	}
	for _, tt := range tests {
		ds, err := Derive(tt.ev)
		if err != nil || len(ds) != 1 {
			t.Fatalf("%s: %v, %v", tt.name, ds, err)
		}
		d := ds[0]
		if d.Type != string(tt.ev.Type) || d.UserID != tt.user || d.AppID != tt.app || len(d.Match) != len(tt.match) || d.Body == nil {
			t.Errorf("%s: derived %+v", tt.name, d)
		}
		if tt.payload != "" && string(d.Body) != tt.payload {
			t.Errorf("%s: payload %s, want %s", tt.name, d.Body, tt.payload)
		}
	}
	if _, err := Derive(events.Event{Type: events.SpacesStart, Payload: json.RawMessage(`[`)}); err == nil {
		t.Error("an undecodable spaces.start derived")
	}
}

// TestDerivedAccepts: an app-bound event reaches that app's subscriptions
// only; a keyword event the subscriptions whose keyword is a word or
// phrase of one of its texts.
func TestDerivedAccepts(t *testing.T) {
	t.Parallel()
	revoke := Derived{AppID: 7}
	news := Derived{Match: []string{"Solar eclipse over the valley", "Posts about it."}}
	tests := []struct {
		d    Derived
		sub  storage.ActivitySubscription
		want bool
	}{
		{revoke, storage.ActivitySubscription{AppID: 7}, true},
		{revoke, storage.ActivitySubscription{AppID: 8}, false},
		{news, storage.ActivitySubscription{FilterKeyword: "ECLIPSE"}, true},
		{news, storage.ActivitySubscription{FilterKeyword: "eclipse over"}, true},
		{news, storage.ActivitySubscription{FilterKeyword: "valley posts"}, false}, // not across headline and summary
		{news, storage.ActivitySubscription{FilterKeyword: "eclip"}, false},
		{Derived{}, storage.ActivitySubscription{AppID: 8}, true},
	}
	for i, tt := range tests {
		if got := tt.d.accepts(tt.sub); got != tt.want {
			t.Errorf("case %d: accepts = %v, want %v", i, got, tt.want)
		}
	}
}
