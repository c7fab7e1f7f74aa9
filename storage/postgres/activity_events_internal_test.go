package postgres

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// TestExplicitMentions: the mentions a post.mention.create goes to.
func TestExplicitMentions(t *testing.T) {
	t.Parallel()
	m := func(start int, name string, id int64) storage.MentionEntity {
		return storage.MentionEntity{Start: start, End: start + 1 + len(name), Username: name, UserID: id}
	}
	tests := []struct {
		name string
		post storage.Post
		want []int64
	}{
		{"plain post", storage.Post{Text: "hi @ann and @bo", Entities: storage.Entities{Mentions: []storage.MentionEntity{m(3, "ann", 1), m(12, "bo", 2)}}},
			[]int64{1, 2}},
		{"reply: the leading run is implicit", storage.Post{Text: "@ann @bo thanks @cy", InReplyToPostID: 9,
			Entities: storage.Entities{Mentions: []storage.MentionEntity{m(0, "ann", 1), m(5, "bo", 2), m(16, "cy", 3)}}}, []int64{3}},
		{"reply without a leading mention", storage.Post{Text: "thanks @ann", InReplyToPostID: 9,
			Entities: storage.Entities{Mentions: []storage.MentionEntity{m(7, "ann", 1)}}}, []int64{1}},
		{"not a reply: a leading mention is explicit", storage.Post{Text: "@ann hi",
			Entities: storage.Entities{Mentions: []storage.MentionEntity{m(0, "ann", 1)}}}, []int64{1}},
		{"repost: none", storage.Post{Text: "RT @ann: x", RepostOfID: 9,
			Entities: storage.Entities{Mentions: []storage.MentionEntity{m(3, "ann", 1)}}}, nil},
		{"unresolved and repeated", storage.Post{Text: "@ann @nobody @ann",
			Entities: storage.Entities{Mentions: []storage.MentionEntity{m(0, "ann", 1), m(5, "nobody", 0), m(13, "ann", 1)}}}, []int64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := explicitMentions(tc.post); !slices.Equal(got, tc.want) {
				t.Errorf("explicitMentions = %v, want %v", got, tc.want)
			}
		})
	}
}
