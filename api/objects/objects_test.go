package objects

import (
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

func TestParseTweetOptions(t *testing.T) {
	tests := []struct {
		query     string
		expand    []string
		wantField string // a field the tweet set must show
		badParams []string
	}{
		{query: "", wantField: "edit_history_tweet_ids"},
		{query: "tweet.fields=author_id,lang", wantField: "lang"},
		{query: "expansions=referenced_posts,edit_history_post_ids", expand: []string{ExpandEditHistory, ExpandReferenced}},
		{query: "expansions=geo.place_id", expand: []string{ExpandPlace}, wantField: "geo"},
		{query: "expansions=article.cover_media", expand: nil},
		{query: "tweet.fields=nope&expansions=author_id,nah&user.fields=", badParams: []string{"expansions", "tweet.fields", "user.fields"}},
		{query: "tweet.fields=lang,lang", badParams: []string{"tweet.fields"}},
		// post.fields, the description's name, is read and checked like tweet.fields.
		{query: "post.fields=author_id,created_at", wantField: "created_at"},
		{query: "tweet.fields=lang&post.fields=source", wantField: "lang,source"},
		{query: "tweet.fields=lang&post.fields=lang", wantField: "lang"},
		{query: "post.fields=nope", badParams: []string{"post.fields"}},
		{query: "post.fields=", badParams: []string{"post.fields"}},
		{query: "post.fields=lang,lang&tweet.fields=lang", badParams: []string{"post.fields"}},
		{query: "post.fields=secret&tweet.fields=hidden", badParams: []string{"post.fields", "tweet.fields"}},
		// An expansion shows its link in the post.
		{query: "expansions=author_id", expand: []string{ExpandAuthor}, wantField: "author_id"},
		{query: "expansions=referenced_tweets.id.author_id", expand: []string{ExpandReferencedUsers}, wantField: "referenced_tweets,author_id"},
		{query: "expansions=attachments.media_keys,in_reply_to_user_id", expand: []string{ExpandMedia, ExpandReplyUser}, wantField: "attachments,in_reply_to_user_id"},
		{query: "expansions=entities.mentions.username", expand: []string{ExpandMentions}, wantField: linkMentions},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			o, err := ParseTweetOptions(httptest.NewRequest("GET", "/2/tweets?"+tc.query, nil))
			if tc.badParams != nil {
				var e *apierr.Error
				if !errorsAs(err, &e) {
					t.Fatalf("err = %v, want an invalid-request", err)
				}
				var got []string
				for _, p := range e.Params {
					for name := range p.Parameters {
						if !slices.Contains(got, name) {
							got = append(got, name)
						}
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.badParams) {
					t.Errorf("parameters named %v, want %v", got, tc.badParams)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var expand []string
			for k := range o.Expand {
				expand = append(expand, k)
			}
			slices.Sort(expand)
			if !slices.Equal(expand, tc.expand) {
				t.Errorf("expansions %v, want %v", expand, tc.expand)
			}
			for _, f := range strings.Split(tc.wantField, ",") {
				if f != "" && !o.Tweet.Has(f) {
					t.Errorf("field %s not shown", f)
				}
			}
			if !o.Tweet.Has("id") || !o.User.Has("username") || !o.Media.Has("media_key") {
				t.Error("a default field is missing")
			}
		})
	}
}

// TestParseOptionsNamesTheParameterSent: a bad post.fields value is
// reported under post.fields, in the message and the parameters echoed.
func TestParseOptionsNamesTheParameterSent(t *testing.T) {
	for _, param := range []string{TweetFieldsParam, PostFieldsParam} {
		_, err := ParseTweetOptions(httptest.NewRequest("GET", "/2/tweets?"+param+"=author_id,secret", nil))
		var e *apierr.Error
		if !errorsAs(err, &e) || len(e.Params) != 1 {
			t.Fatalf("%s: err = %v, want one invalid parameter", param, err)
		}
		p := e.Params[0]
		if !slices.Equal(p.Parameters[param], []string{"secret"}) || len(p.Parameters) != 1 || !strings.Contains(p.Message, "`"+param+"`") {
			t.Errorf("%s: error %+v, want it to name %s and echo [secret]", param, p, param)
		}
	}
	o, err := ParseUserOptions(httptest.NewRequest("GET", "/2/users/me?post.fields=created_at&expansions=pinned_tweet_id", nil))
	if err != nil || !o.Tweet.Has("created_at") || !o.User.Has("pinned_tweet_id") {
		t.Errorf("user options = %+v, %v; want post.fields read and pinned_tweet_id linked", o, err)
	}
}

func errorsAs(err error, target **apierr.Error) bool { return errors.As(err, target) }

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
