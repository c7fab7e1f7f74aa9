package activity

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/events"
)

func event(t *testing.T, typ events.Type, payload any) events.Event {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return events.Event{Seq: 7, Type: typ, Payload: body}
}

// short is a derived event as "type>user[/direction]".
func short(ds []Derived) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Type + ">" + itoa(d.UserID)
		if d.Direction != "" {
			out[i] += "/" + d.Direction
		}
	}
	return out
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestDerive: which activity events each log event stands for, and for
// whom (the filtered user).
func TestDerive(t *testing.T) {
	t.Parallel()
	const author, other, third = 1, 2, 3
	tests := []struct {
		name string
		ev   events.Event
		want []string
	}{
		{"plain post", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author}), []string{"post.create>1"}},
		{"reply to another", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, InReplyToPostID: 9, InReplyToUserID: other}),
			[]string{"post.create>1", "post.reply.create>2"}},
		{"reply to self", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, InReplyToPostID: 9, InReplyToUserID: author}),
			[]string{"post.create>1"}},
		{"mention of self and of two others", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, MentionIDs: []int64{author, other, third}}),
			[]string{"post.create>1", "post.mention.create>2", "post.mention.create>3"}},
		{"repost of another", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, RepostOfID: 9, RepostOfAuthorID: other}),
			[]string{"post.create>1", "post.repost.create>2"}},
		{"repost of self", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, RepostOfID: 9, RepostOfAuthorID: author}),
			[]string{"post.create>1"}},
		{"quote of another mentioning a third", event(t, events.PostCreate, events.Post{ID: 10, AuthorID: author, QuoteOfID: 9,
			QuoteOfAuthorID: other, MentionIDs: []int64{third}}),
			[]string{"post.create>1", "post.quote.create>2", "post.mention.create>3"}},
		{"an edit is the author's post.create only", event(t, events.PostCreate, events.Post{ID: 11, AuthorID: author, EditOfID: 10,
			InReplyToUserID: other, MentionIDs: []int64{third}}), []string{"post.create>1"}},
		{"delete", event(t, events.PostDelete, events.PostDeleted{ID: 10, AuthorID: author}), []string{"post.delete>1"}},
		{"like of another's post", event(t, events.LikeCreate, events.Like{UserID: other, PostID: 10, PostAuthorID: author}),
			[]string{"like.create>2/outbound", "like.create>1/inbound"}},
		{"like of one's own post", event(t, events.LikeCreate, events.Like{UserID: author, PostID: 10, PostAuthorID: author}),
			[]string{"like.create>1/outbound", "like.create>1/inbound"}},
		{"bio", event(t, events.ProfileUpdateBio, events.ProfileUpdated{UserID: author, Before: "a", After: "b"}),
			[]string{"profile.update.bio>1"}},
		{"unknown type", event(t, "bookmark.create", map[string]int{}), []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Derive(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if s := short(got); !slices.Equal(s, tc.want) {
				t.Errorf("Derive = %v, want %v", s, tc.want)
			}
		})
	}
}

// TestDeriveUndecodable: a payload that does not decode is an error.
func TestDeriveUndecodable(t *testing.T) {
	t.Parallel()
	for _, typ := range []events.Type{events.PostCreate, events.PostDelete, events.LikeCreate, events.ProfileUpdateBio} {
		if _, err := Derive(events.Event{Seq: 1, Type: typ, Payload: []byte("{")}); err == nil {
			t.Errorf("%s: Derive of a broken payload: no error", typ)
		}
	}
}
