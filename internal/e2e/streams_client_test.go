package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	twitter "github.com/g8rswimmer/go-twitter/v2"
)

// TestStreamGoTwitterClient runs the filtered stream end to end with
// github.com/g8rswimmer/go-twitter/v2, only the base URL changed: rules
// added, listed and one deleted, and a stream with fields and expansions
// that receives the matching post a user creates through the library, not
// the one that matched only the deleted rule.
func TestStreamGoTwitterClient(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{"AVIARY_STREAM_KEEPALIVE=1s"}})
	ctx := t.Context()
	httpClient := &http.Client{Timeout: 30 * time.Second}
	app := &twitter.Client{Authorizer: bearerAuth{s.creds.BearerToken}, Client: httpClient, Host: s.baseURL}
	user := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL,
		token: userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}}, Client: httpClient, Host: s.baseURL}

	added, err := app.TweetSearchStreamAddRule(ctx, []twitter.TweetSearchStreamRule{
		{Value: "from:" + s.creds.Username + " owl", Tag: "owls"}, {Value: "#nightjar", Tag: "nightjars"}}, false)
	if err != nil || len(added.Rules) != 2 || added.Meta == nil || added.Meta.Summary.Created != 2 {
		t.Fatalf("TweetSearchStreamAddRule = %+v, %v", added, err)
	}
	ids := map[string]twitter.TweetSearchStreamRuleID{}
	for _, r := range added.Rules {
		ids[r.Tag] = r.ID
	}
	listed, err := app.TweetSearchStreamRules(ctx, nil)
	if err != nil || len(listed.Rules) != 2 {
		t.Fatalf("TweetSearchStreamRules = %+v, %v", listed, err)
	}
	deleted, err := app.TweetSearchStreamDeleteRuleByID(ctx, []twitter.TweetSearchStreamRuleID{ids["nightjars"]}, false)
	if err != nil || deleted.Meta == nil || deleted.Meta.Summary.Deleted != 1 {
		t.Fatalf("TweetSearchStreamDeleteRuleByID = %+v, %v", deleted, err)
	}

	// No client timeout on the stream: it stays open. Cancelling its
	// context ends the read the library blocks in, so Close returns.
	streamCtx, cancel := context.WithCancel(ctx)
	streamer := &twitter.Client{Authorizer: bearerAuth{s.creds.BearerToken}, Client: &http.Client{}, Host: s.baseURL}
	stream, err := streamer.TweetSearchStream(streamCtx, twitter.TweetSearchStreamOpts{
		TweetFields: []twitter.TweetField{twitter.TweetFieldAuthorID, twitter.TweetFieldCreatedAt, twitter.TweetFieldConversationID},
		Expansions:  []twitter.Expansion{twitter.ExpansionAuthorID},
		UserFields:  []twitter.UserField{twitter.UserFieldCreatedAt},
	})
	if err != nil {
		cancel()
		t.Fatalf("TweetSearchStream: %v", err)
	}
	defer func() { cancel(); stream.Close() }()

	unmatched := createPost(t, user, "A #nightjar calling at dusk")
	sent := time.Now()
	matched := createPost(t, user, "The barn owl is back in the oak")
	select {
	case msg := <-stream.Tweets():
		if msg == nil || msg.Raw == nil || len(msg.Raw.Tweets) != 1 {
			t.Fatalf("stream message %+v", msg)
		}
		tw := msg.Raw.Tweets[0]
		if tw.ID == unmatched {
			t.Fatalf("the post matching no rule (the deleted one's) was streamed")
		}
		if tw.ID != matched || tw.AuthorID != s.creds.UserID || tw.CreatedAt == "" || tw.ConversationID != matched {
			t.Errorf("streamed post %+v, want %s by %s with its fields", tw, matched, s.creds.UserID)
		}
		if inc := msg.Raw.Includes; inc == nil || len(inc.Users) != 1 || inc.Users[0].UserName != s.creds.Username || inc.Users[0].CreatedAt == "" {
			t.Errorf("includes %+v, want the author with created_at", inc)
		}
		t.Logf("post to receipt through go-twitter: %v", time.Since(sent))
	case err := <-stream.Err():
		t.Fatalf("stream error: %v", err)
	case d := <-stream.DisconnectionError():
		t.Fatalf("stream disconnected: %+v", d)
	case <-time.After(15 * time.Second):
		t.Fatalf("post %s not received within 15 s", matched)
	}
	if !stream.Connection() {
		t.Errorf("the library considers the stream dead (no keep-alive)")
	}
}
