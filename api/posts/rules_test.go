package posts

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/validation"
)

// TestCreateRules: POST /2/tweets' body rules answer in the platform's
// words, naming nested fields as the client does.
func TestCreateRules(t *testing.T) {
	val := validation.New()
	registerRules(val)
	str := func(s string) *string { return &s }
	type want struct{ field, message string }
	tests := []struct {
		name string
		req  createRequest
		want []want
	}{
		{"text", createRequest{Text: str("hello")}, nil},
		{"no text with media", createRequest{Media: &mediaRequest{MediaIDs: []string{"1"}}}, nil},
		{"no text", createRequest{}, []want{{"text", "The `text` field is required and can not be empty."}}},
		{"empty text", createRequest{Text: str("")}, []want{{"text", "The `text` field is required and can not be empty."}}},
		{"blank text", createRequest{Text: str(" \u200b\u3164")}, []want{{"text", "The `text` field must contain at least one visible character, not only whitespace."}}},
		{"long text", createRequest{Text: str(strings.Repeat("a", 281))}, []want{{"text", "The `text` field is 281 characters long as the platform counts them; the limit is 280."}}},
		{"no media ids", createRequest{Media: &mediaRequest{}}, []want{{"media.media_ids", "The `media.media_ids` field must list 1 to 4 media ids; it lists 0."}}},
		{"five media ids", createRequest{Media: &mediaRequest{MediaIDs: []string{"1", "2", "3", "4", "5"}}}, []want{{"media.media_ids", "The `media.media_ids` field must list 1 to 4 media ids; it lists 5."}}},
		{"malformed media id", createRequest{Media: &mediaRequest{MediaIDs: []string{"1", "x"}}}, []want{{"media.media_ids", "The `media.media_ids` field value [x] does not match ^[0-9]{1,19}$."}}},
		{"repeated media id", createRequest{Media: &mediaRequest{MediaIDs: []string{"7", "07"}}}, []want{{"media.media_ids", "The `media.media_ids` field lists the media [07] more than once."}}},
		{"edit alone", createRequest{Text: str("x"), EditOptions: &editRequest{PreviousPostID: "5"}}, nil},
		{"edit with geo", createRequest{Text: str("x"), EditOptions: &editRequest{PreviousPostID: "5"}, Geo: &geoRequest{PlaceID: "p"}},
			[]want{{"edit_options.previous_post_id", "An edit changes the text and media only; leave out reply, quote_tweet_id and geo."}}},
		{"ids of references", createRequest{Text: str("x"), Reply: &replyRequest{InReplyToTweetID: "", ExcludeReplyUserIDs: []string{"1", "-2"}}, QuoteTweetID: str("9x")},
			[]want{{"reply.in_reply_to_tweet_id", "The `reply.in_reply_to_tweet_id` field value [] does not match ^[0-9]{1,19}$."},
				{"reply.exclude_reply_user_ids", "The `reply.exclude_reply_user_ids` value [-2] does not match ^[0-9]{1,19}$."},
				{"quote_tweet_id", "The `quote_tweet_id` field value [9x] does not match ^[0-9]{1,19}$."}}},
		{"place id", createRequest{Text: str("x"), Geo: &geoRequest{PlaceID: strings.Repeat("p", 65)}}, []want{{"geo.place_id", "The `geo.place_id` field must be 1 to 64 characters."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, e := range val.Struct(&tc.req) {
				got = append(got, want{e.Field, e.Message})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
