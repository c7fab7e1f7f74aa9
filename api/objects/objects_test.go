package objects

import (
	"errors"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/render"
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
		{query: "expansions=referenced_posts,edit_history_post_ids", expand: []string{render.ExpandEditHistory, render.ExpandReferenced}},
		{query: "expansions=geo.place_id", expand: []string{render.ExpandPlace}, wantField: "geo"},
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
		{query: "expansions=author_id", expand: []string{render.ExpandAuthor}, wantField: "author_id"},
		{query: "expansions=referenced_tweets.id.author_id", expand: []string{render.ExpandReferencedUsers}, wantField: "referenced_tweets,author_id"},
		{query: "expansions=attachments.media_keys,in_reply_to_user_id", expand: []string{render.ExpandMedia, render.ExpandReplyUser}, wantField: "attachments,in_reply_to_user_id"},
		{query: "expansions=entities.mentions.username", expand: []string{render.ExpandMentions}, wantField: "entities.mentions"},
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
	for _, param := range []string{render.TweetFieldsParam, render.PostFieldsParam} {
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

// TestStoredQueryReadsAsTheRequest: the canonical query a webhook stream
// link stores reads back (render.ParseTweetQuery, in the workers) into the
// options ParseTweetOptions read from the request, so the link's posts
// show what the stream with that request shows.
func TestStoredQueryReadsAsTheRequest(t *testing.T) {
	for _, query := range []string{
		"",
		"tweet.fields=lang,created_at&expansions=author_id,referenced_posts",
		"user.fields=created_at&post.fields=source&tweet.fields=lang&media.fields=width&expansions=attachments.media_keys,entities.mentions.username",
		"expansions=referenced_tweets.id.author_id,edit_history_post_ids,article.cover_media&poll.fields=options&place.fields=id",
	} {
		t.Run(query, func(t *testing.T) {
			want, err := ParseTweetOptions(httptest.NewRequest("GET", "/2/tweets/search/stream?"+query, nil))
			if err != nil {
				t.Fatal(err)
			}
			values, err := url.ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := render.ParseTweetQuery(render.CanonicalQuery(values))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Expand, want.Expand) {
				t.Errorf("expansions %v, want %v", got.Expand, want.Expand)
			}
			sets := []struct {
				name      string
				got, want render.FieldSet
				all       []string
			}{
				{"tweet", got.Tweet, want.Tweet, slices.Concat(render.TweetFields.Allowed, []string{"entities.mentions"})},
				{"user", got.User, want.User, render.UserFields.Allowed},
				{"media", got.Media, want.Media, render.MediaFields.Allowed},
			}
			for _, s := range sets {
				for _, f := range s.all {
					if s.got.Has(f) != s.want.Has(f) {
						t.Errorf("%s field %s: shown %v, want %v", s.name, f, s.got.Has(f), s.want.Has(f))
					}
				}
			}
		})
	}
}
