package postgres_test

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestRepostEventCarriesOriginalEntities: a repost's post.create payload
// carries the reposted post's hashtags, cashtags, mentions, links and media
// count (beside the mention of its author), as a retweet carries the
// original's entities on the platform: the stream rule "#coffee is:retweet"
// matches a repost of a #coffee post, and "#coffee -is:retweet" does not.
func TestRepostEventCarriesOriginalEntities(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_rp"})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob_rp"})
	carol := factory.User(t, db, &factory.UserOpts{Username: "carol_rp"})
	text := "#coffee $BEAN @carol_rp https://example.com/x"
	orig := factory.Post(t, db, &factory.PostOpts{Author: alice, App: app, Text: text, MediaIDs: []int64{77},
		Entities: storage.Entities{
			Hashtags: []storage.TagEntity{{Start: 0, End: 7, Tag: "coffee"}},
			Cashtags: []storage.TagEntity{{Start: 8, End: 13, Tag: "BEAN"}},
			Mentions: []storage.MentionEntity{{Start: 14, End: 23, Username: "carol_rp", UserID: carol.ID}},
			URLs:     []storage.URLEntity{{Start: 24, End: 45, URL: "https://example.com/x", ExpandedURL: "https://example.com/x"}},
		}})
	start := head(t, db)
	repost, err := db.Repost(ctx, bob.ID, app.ID, orig.ID)
	if err != nil {
		t.Fatalf("Repost: %v", err)
	}
	evs := eventsAfter(t, db, start)
	if len(evs) != 1 || evs[0].SubjectID != repost.ID {
		t.Fatalf("events after the repost: %v", describe(evs))
	}
	p := decodePost(t, evs[0])
	if !slices.Contains(p.Hashtags, "coffee") || !slices.Contains(p.Cashtags, "bean") ||
		!slices.Contains(p.Mentions, "alice_rp") || !slices.Contains(p.Mentions, "carol_rp") ||
		!slices.Contains(p.URLTerms, "example.com") || p.MediaCount != 1 {
		t.Errorf("repost payload = %+v", p)
	}
	set := streamrules.NewSet([]storage.StreamRule{
		{ID: 1, AppID: 1, Value: "#coffee is:retweet"},
		{ID: 2, AppID: 1, Value: "#coffee -is:retweet"},
		{ID: 3, AppID: 1, Value: "@carol_rp has:media has:links"},
	})
	var got []int64
	for _, h := range set.Match(p) {
		got = append(got, h.RuleID)
	}
	if !slices.Equal(got, []int64{1, 3}) {
		t.Errorf("rules matched by the repost = %v, want [1 3]", got)
	}
}

// TestQuoteEventCarriesQuotedContent: a quote's post.create payload
// carries the quoted post's text and entities, because the filtered
// stream matches a quote on its own content and on the quoted post's
// (build-a-rule, "Quote Tweet matching"), unlike search.
func TestQuoteEventCarriesQuotedContent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_q"})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob_q"})
	orig := factory.Post(t, db, &factory.PostOpts{Author: alice, App: app, Text: "grumpy cat #memes",
		Entities: storage.Entities{Hashtags: []storage.TagEntity{{Start: 11, End: 17, Tag: "memes"}}}})
	start := head(t, db)
	quote, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, AppID: app.ID, Text: "so true", QuoteOfID: orig.ID})
	if err != nil {
		t.Fatalf("quote: %v", err)
	}
	evs := eventsAfter(t, db, start)
	if len(evs) != 1 || evs[0].SubjectID != quote.ID {
		t.Fatalf("events after the quote: %v", describe(evs))
	}
	p := decodePost(t, evs[0])
	if p.Quoted == nil || p.Quoted.Text != "grumpy cat #memes" || !slices.Equal(p.Quoted.Hashtags, []string{"memes"}) {
		t.Fatalf("quote payload = %+v (quoted %+v)", p, p.Quoted)
	}
	set := streamrules.NewSet([]storage.StreamRule{
		{ID: 1, AppID: 1, Value: `"grumpy cat" is:quote`},
		{ID: 2, AppID: 1, Value: "#memes"},
		{ID: 3, AppID: 1, Value: "true -grumpy"},
		{ID: 4, AppID: 1, Value: `"true grumpy"`}, // not across the two texts
		{ID: 5, AppID: 1, Value: "so"},
	})
	var got []int64
	for _, h := range set.Match(p) {
		got = append(got, h.RuleID)
	}
	if !slices.Equal(got, []int64{1, 2, 5}) {
		t.Errorf("rules matched by the quote = %v, want [1 2 5]", got)
	}
}
