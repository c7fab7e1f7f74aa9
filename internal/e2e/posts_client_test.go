package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	twitter "github.com/g8rswimmer/go-twitter/v2"
)

// TestGoTwitterPostsUsersAndSearch drives posts lookup, users, likes,
// reposts, search and counts with github.com/g8rswimmer/go-twitter/v2,
// pointed at Aviary's base URL and nothing else changed.
func TestGoTwitterPostsUsersAndSearch(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local"})
	ctx := t.Context()
	httpClient := &http.Client{Timeout: 30 * time.Second}
	demo := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL,
		token: userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}}, Client: httpClient, Host: s.baseURL}
	friendTok := s.userToken("friend")
	friend := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL, token: friendTok}, Client: httpClient, Host: s.baseURL}
	app := &twitter.Client{Authorizer: bearerAuth{s.creds.BearerToken}, Client: httpClient, Host: s.baseURL}

	// A post that summons @friend, and friend's reply to it.
	question := createPost(t, demo, "Which birds visit your garden, @friend? #birding")
	answer, err := friend.CreateTweet(ctx, twitter.CreateTweetRequest{Text: "Mostly robins and finches #birding",
		Reply: &twitter.CreateTweetReply{InReplyToTweetID: question}})
	if err != nil {
		t.Fatalf("reply: %v", err)
	}
	reply := answer.Tweet.ID
	// Unsummoned replies of a self-serve app are refused.
	_, err = friend.CreateTweet(ctx, twitter.CreateTweetRequest{Text: "me too", Reply: &twitter.CreateTweetReply{InReplyToTweetID: createPost(t, demo, "quiet post")}})
	wantStatus(t, "an unsummoned reply", err, http.StatusForbidden)

	// Lookup with fields and expansions, as the library's dictionaries read them.
	looked, err := app.TweetLookup(ctx, []string{question, reply, "42"}, twitter.TweetLookupOpts{
		TweetFields: []twitter.TweetField{twitter.TweetFieldAuthorID, twitter.TweetFieldConversationID, twitter.TweetFieldReferencedTweets,
			twitter.TweetFieldEntities, twitter.TweetFieldPublicMetrics, twitter.TweetFieldInReplyToUserID, twitter.TweetFieldCreatedAt, twitter.TweetFieldLanguage},
		UserFields: []twitter.UserField{twitter.UserFieldPublicMetrics, twitter.UserFieldCreatedAt},
		Expansions: []twitter.Expansion{twitter.ExpansionAuthorID, twitter.ExpansionReferencedTweetsID, twitter.ExpansionEntitiesMentionsUserName, twitter.ExpansionInReplyToUserID},
	})
	if err != nil || looked.Raw == nil || len(looked.Raw.Tweets) != 2 || len(looked.Raw.Errors) != 1 {
		t.Fatalf("TweetLookup = %+v, %v; want 2 posts and 1 error", looked, err)
	}
	if e := looked.Raw.Errors[0]; e.Value != "42" || e.Parameter != "ids" || e.ResourceType != "tweet" {
		t.Errorf("lookup error = %+v", e)
	}
	dicts := looked.Raw.TweetDictionaries()
	q, r := dicts[question], dicts[reply]
	if q == nil || r == nil {
		t.Fatalf("dictionaries = %v", dicts)
	}
	if q.Author == nil || q.Author.UserName != s.creds.Username || len(q.Mentions) != 1 || q.Mentions[0].User == nil || q.Mentions[0].User.UserName != "friend" {
		t.Errorf("question dictionary: author %+v, mentions %+v", q.Author, q.Mentions)
	}
	if r.Tweet.ConversationID != question || r.InReplyUser == nil || r.InReplyUser.ID != s.creds.UserID ||
		len(r.ReferencedTweets) != 1 || r.ReferencedTweets[0].Reference.Type != "replied_to" || r.ReferencedTweets[0].TweetDictionary.Tweet.ID != question {
		t.Errorf("reply dictionary: %+v %+v", r.Tweet, r.ReferencedTweets)
	}
	if q.Tweet.PublicMetrics == nil || q.Tweet.PublicMetrics.Replies != 1 || q.Tweet.Language != "en" {
		t.Errorf("question metrics %+v, lang %q", q.Tweet.PublicMetrics, q.Tweet.Language)
	}

	// Likes and reposts move the counters.
	friendID := lookupUsername(t, app, "friend")
	if res, err := friend.UserLikes(ctx, friendID, question); err != nil || res.Data == nil || !res.Data.Liked {
		t.Errorf("UserLikes = %+v, %v", res, err)
	}
	if res, err := friend.UserRetweet(ctx, friendID, question); err != nil || res.Data == nil || !res.Data.Retweeted {
		t.Errorf("UserRetweet = %+v, %v", res, err)
	}
	single, err := app.TweetLookup(ctx, []string{question}, twitter.TweetLookupOpts{TweetFields: []twitter.TweetField{twitter.TweetFieldPublicMetrics}})
	if err != nil || len(single.Raw.Tweets) != 1 {
		t.Fatalf("single lookup = %+v, %v", single, err)
	}
	if m := single.Raw.Tweets[0].PublicMetrics; m == nil || m.Likes != 1 || m.Retweets != 1 {
		t.Errorf("metrics after like and repost = %+v", m)
	}
	if res, err := friend.DeleteUserLikes(ctx, friendID, question); err != nil || res.Data == nil || res.Data.Liked {
		t.Errorf("DeleteUserLikes = %+v, %v", res, err)
	}

	// Users.
	// go-twitter signs before it adds the query string, so user-context
	// calls go without options (its users pass fields with OAuth 2.0).
	me, err := friend.AuthUserLookup(ctx, twitter.UserLookupOpts{})
	if err != nil || len(me.Raw.Users) != 1 || me.Raw.Users[0].UserName != "friend" || me.Raw.Users[0].ID != friendID {
		t.Errorf("AuthUserLookup = %+v, %v", me, err)
	}
	users, err := app.UserLookup(ctx, []string{s.creds.UserID, friendID}, twitter.UserLookupOpts{UserFields: []twitter.UserField{twitter.UserFieldPublicMetrics}})
	if err != nil || len(users.Raw.Users) != 2 || users.Raw.Users[1].PublicMetrics == nil || users.Raw.Users[1].PublicMetrics.Tweets != 2 {
		t.Errorf("UserLookup = %+v, %v (want friend with 2 posts: the reply and the repost)", users, err)
	}

	// Search: pages of a keyword search, the repost excluded, then counts.
	var want []string
	for i := range 11 {
		want = append(want, createPost(t, demo, fmt.Sprintf("Spotted a heron by the pond, day %d #birding", i)))
	}
	want = append(want, reply, question)
	slices.Reverse(want[:11])
	time.Sleep(2100 * time.Millisecond) // searches leave out the last 2 s (docs/search.md)
	var got []string
	next := ""
	for range 5 {
		res, err := app.TweetRecentSearch(ctx, "#birding", twitter.TweetRecentSearchOpts{MaxResults: 10, NextToken: next})
		if err != nil {
			t.Fatalf("TweetRecentSearch: %v", err)
		}
		for _, tw := range res.Raw.Tweets {
			got = append(got, tw.ID)
		}
		if next = res.Meta.NextToken; next == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("search pages = %v, want %v", got, want)
	}
	all, err := app.TweetSearch(ctx, "from:friend is:reply", twitter.TweetSearchOpts{})
	if err != nil || len(all.Raw.Tweets) != 1 || all.Raw.Tweets[0].ID != reply {
		t.Errorf("TweetSearch (full archive) = %+v, %v", all, err)
	}
	counts, err := app.TweetRecentCounts(ctx, "#birding", twitter.TweetRecentCountsOpts{Granularity: twitter.GranularityDay})
	if err != nil || counts.Meta == nil || counts.Meta.TotalTweetCount != 13 || len(counts.TweetCounts) < 7 {
		t.Errorf("TweetRecentCounts = %+v, %v", counts, err)
	}
	_, err = app.TweetRecentSearch(ctx, "(unbalanced", twitter.TweetRecentSearchOpts{})
	wantStatus(t, "a malformed query", err, http.StatusBadRequest)
}

// lookupUsername finds a user's id through the library.
func lookupUsername(t *testing.T, c *twitter.Client, name string) string {
	t.Helper()
	res, err := c.UserNameLookup(t.Context(), []string{name}, twitter.UserLookupOpts{})
	if err != nil || len(res.Raw.Users) != 1 {
		t.Fatalf("UserNameLookup(%s) = %+v, %v", name, res, err)
	}
	return res.Raw.Users[0].ID
}
