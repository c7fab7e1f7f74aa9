package render

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

func TestEditControls(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	root := (now.Add(-20*time.Minute).UnixMilli() - ids.Epoch) << 22
	tests := []struct {
		name          string
		post          storage.Post
		eligible      bool
		remaining     int64
		editableUntil time.Time
	}{
		{"fresh", storage.Post{ID: 1, CreatedAt: now.Add(-time.Minute)}, true, 5, now.Add(59 * time.Minute)},
		{"window closed", storage.Post{ID: 1, CreatedAt: now.Add(-2 * time.Hour)}, false, 5, now.Add(-time.Hour)},
		{"edited twice", storage.Post{ID: root + 2, EditHistory: []int64{root, root + 1, root + 2}, CreatedAt: now}, true, 3, now.Add(40 * time.Minute)},
		{"five edits", storage.Post{ID: root + 5, EditHistory: []int64{root, root + 1, root + 2, root + 3, root + 4, root + 5}, CreatedAt: now}, false, 0, now.Add(40 * time.Minute)},
		{"superseded", storage.Post{ID: root, EditHistory: []int64{root, root + 1}, SupersededAt: &now, CreatedAt: now.Add(-20 * time.Minute)}, false, 4, now.Add(40 * time.Minute)},
		{"repost", storage.Post{ID: 1, RepostOfID: 2, CreatedAt: now}, false, 5, now.Add(time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := editControls(tc.post, now)
			if c.IsEditEligible != tc.eligible || c.EditsRemaining != tc.remaining || c.EditableUntil != tc.editableUntil.Format("2006-01-02T15:04:05.000Z") {
				t.Errorf("got %+v, want eligible %v, remaining %d, until %s", c, tc.eligible, tc.remaining, tc.editableUntil)
			}
		})
	}
}

// TestRenderMentionLink: the entities.mentions.username expansion shows
// the mentions, not the post's other entities.
func TestRenderMentionLink(t *testing.T) {
	p := storage.Post{ID: 10, Text: "@bo #go", Entities: storage.Entities{
		Mentions: []storage.MentionEntity{{Start: 0, End: 3, Username: "bo", UserID: 4}},
		Hashtags: []storage.TagEntity{{Start: 4, End: 7, Tag: "go"}}}}
	got := renderTweet(p, tweetContext{fields: TweetFields.With(linkMentions)})
	if got.Entities == nil || len(got.Entities.Mentions) != 1 || got.Entities.Mentions[0].ID != "4" || got.Entities.Hashtags != nil {
		t.Errorf("entities = %+v, want the mention only", got.Entities)
	}
	if plain := renderTweet(storage.Post{ID: 11, Text: "#go", Entities: storage.Entities{Hashtags: p.Entities.Hashtags}},
		tweetContext{fields: TweetFields.With(linkMentions)}); plain.Entities != nil {
		t.Errorf("a post without mentions shows entities %+v", plain.Entities)
	}
}

func TestRenderTweetShowsOnlyAskedFields(t *testing.T) {
	p := storage.Post{ID: 10, AuthorID: 7, Text: "hi #go", Lang: "en", ConversationID: 9, InReplyToPostID: 9, InReplyToUserID: 8,
		QuoteOfID: 3, MediaIDs: []int64{5, 6}, Metrics: storage.PostMetrics{Likes: 2, Reposts: 1},
		Entities: storage.Entities{Hashtags: []storage.TagEntity{{Start: 3, End: 6, Tag: "go"}}}, CreatedAt: time.Unix(0, 0)}
	media := map[int64]storage.Media{5: {ID: 5, Key: "3_5", Kind: storage.MediaPhoto}}
	plain := renderTweet(p, tweetContext{fields: TweetFields.With(), media: media})
	if plain.AuthorID != "" || plain.Lang != "" || plain.PublicMetrics != nil || plain.Entities != nil || len(plain.EditHistoryTweetIDs) != 1 {
		t.Errorf("defaults only: %+v", plain)
	}
	full := renderTweet(p, tweetContext{fields: TweetFields.With("author_id", "lang", "public_metrics", "entities", "referenced_tweets",
		"attachments", "in_reply_to_user_id", "conversation_id"), media: media})
	refs := make([]string, len(full.ReferencedTweets))
	for i, r := range full.ReferencedTweets {
		refs[i] = r.Type + ":" + r.ID
	}
	if full.AuthorID != "7" || full.Lang != "en" || full.PublicMetrics.LikeCount != 2 || full.PublicMetrics.RetweetCount != 1 ||
		full.PublicMetrics.RepostCount != 1 || full.Entities.Hashtags[0].Tag != "go" || strings.Join(refs, ",") != "quoted:3,replied_to:9" ||
		!slices.Equal(full.Attachments.MediaKeys, []string{"3_5"}) || full.InReplyToUserID != "8" || full.ConversationID != "9" {
		t.Errorf("asked fields: %+v", full)
	}
}

// TestRenderCardURI: card_uri shows when asked for and the post has a
// card (an ads post's), never otherwise.
func TestRenderCardURI(t *testing.T) {
	cases := []struct {
		name   string
		card   string
		fields []string
		want   string
	}{
		{"asked, with a card", "card://1", []string{"card_uri"}, "card://1"},
		{"not asked", "card://1", nil, ""},
		{"asked, no card", "", []string{"card_uri"}, ""},
	}
	for _, c := range cases {
		got := renderTweet(storage.Post{ID: 1, Text: "x", CardURI: c.card}, tweetContext{fields: TweetFields.With(c.fields...)})
		if got.CardURI != c.want {
			t.Errorf("%s: card_uri = %q, want %q", c.name, got.CardURI, c.want)
		}
	}
}
