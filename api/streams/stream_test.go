package streams_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
)

// TestStreamDeliversMatches: the match the real matcher computes for a
// post's logged event, published on the bus, reaches the stream of the app
// it matched, rendered with the request's fields and expansions exactly as
// GET /2/tweets renders the post, with that app's rules only.
func TestStreamDeliversMatches(t *testing.T) {
	b := setupStreams(t, options{})
	cats, dogs := b.rule(t, b.App.ID, "cats", "cats"), b.rule(t, b.App.ID, "#dogs", "")
	b.rule(t, b.Other.ID, "cats -#dogs", "other")
	fields := "?tweet.fields=author_id,created_at,entities&expansions=author_id&user.fields=username,created_at"
	s := open(t, b.Srv.URL, "/2/tweets/search/stream"+fields, b.Bearer)
	if s.Resp.StatusCode != 200 || s.Resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("open: %d %v", s.Resp.StatusCode, s.Resp.Header)
	}
	other := open(t, b.Srv.URL, "/2/tweets/search/stream", b.OtherBearer)
	id, n := b.post(t, "cats and #dogs")
	b.dispatch(t, n)
	line, ok := s.next(t, 5*time.Second)
	if !ok {
		t.Fatal("no post within 5s")
	}
	got := decode(t, line)
	want := b.Get(t, "/2/tweets/"+id+fields[0:len(fields)], b.Bearer).Body
	for _, part := range []string{"data", "includes"} {
		if g, w := apitest.CanonicalJSON(t, mustJSON(got[part])), apitest.CanonicalJSON(t, mustJSON(want[part])); g != w {
			t.Errorf("%s on the stream %s, GET /2/tweets/{id} %s", part, g, w)
		}
	}
	wantRules := fmt.Sprintf(`[{"id":"%d","tag":"cats"},{"id":"%d"}]`, cats.ID, dogs.ID)
	if rules := apitest.CanonicalJSON(t, mustJSON(got["matching_rules"])); rules != wantRules {
		t.Errorf("matching_rules %s, want %s", rules, wantRules)
	}
	if line, ok := other.next(t, 500*time.Millisecond); ok {
		t.Errorf("the other app's stream got %s", line)
	}
}

// TestStreamLineIsTheWebhookMessage: a stream's line is, byte for byte,
// the message a webhook stream link with the same fields and expansions
// delivers (render.Messages on the link's canonical query) plus "\r\n".
func TestStreamLineIsTheWebhookMessage(t *testing.T) {
	b := setupStreams(t, options{})
	cats, dogs := b.rule(t, b.App.ID, "cats", "cats"), b.rule(t, b.App.ID, "#dogs", "")
	b.rule(t, b.Other.ID, "cats", "other")
	raw := "user.fields=created_at,public_metrics&expansions=author_id,entities.mentions.username&tweet.fields=lang,created_at,entities"
	s := open(t, b.Srv.URL, "/2/tweets/search/stream?"+raw, b.Bearer)
	_, id := b.post(t, "cats and #dogs @nobody")
	matches := b.dispatch(t, id)
	line, ok := s.next(t, 5*time.Second)
	if !ok {
		t.Fatal("no post within 5s")
	}
	var hits []events.RuleHit
	for _, h := range matches[0].Rules {
		if h.AppID == b.App.ID {
			hits = append(hits, h)
		}
	}
	if len(hits) != 2 || hits[0].RuleID != cats.ID || hits[1].RuleID != dogs.ID {
		t.Fatalf("the app's hits %+v, want cats then dogs", hits)
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	m := render.Messages{Hydrator: &render.Hydrator{Store: b.DB}}
	msg, err := m.Render(context.Background(), id, render.CanonicalQuery(values), hits)
	if err != nil {
		t.Fatal(err)
	}
	if line != string(msg) {
		t.Errorf("stream line\n%s\nwebhook message\n%s", line, msg)
	}
}

// TestKeepAlive: an idle stream sends "\r\n" every keep-alive interval.
func TestKeepAlive(t *testing.T) {
	b := setupStreams(t, options{keepAlive: 100 * time.Millisecond})
	s := open(t, b.Srv.URL, "/2/tweets/search/stream", b.Bearer)
	for i := range 3 {
		select {
		case line, ok := <-s.Lines:
			if !ok || line != "" {
				t.Fatalf("keep-alive %d: %q (open %v)", i, line, ok)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("no keep-alive %d within 2s", i)
		}
	}
}

// TestQuery: backfill_minutes takes 0 to 5; fields are checked as on
// every post endpoint; app-only.
func TestQuery(t *testing.T) {
	b := setupStreams(t, options{})
	for _, tt := range []struct {
		path, authz string
		status      int
	}{
		{"/2/tweets/search/stream?backfill_minutes=6", b.Bearer, 400},
		{"/2/tweets/search/stream?backfill_minutes=x", b.Bearer, 400},
		{"/2/tweets/search/stream?tweet.fields=nope", b.Bearer, 400},
		{"/2/tweets/search/stream?since_id=1", b.Bearer, 400},
		{"/2/tweets/search/stream", "oauth:reader", 403},
		{"/2/tweets/search/stream", "", 401},
	} {
		if r := b.Call(t, "GET", tt.path, tt.authz, "", nil); r.Status != tt.status {
			t.Errorf("GET %s: %d %s, want %d", tt.path, r.Status, r.Raw, tt.status)
		}
	}
}

func mustJSON(v any) string {
	return string(apitest.JSONBody(v))
}
