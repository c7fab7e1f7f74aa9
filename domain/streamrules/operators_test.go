package streamrules_test

import (
	"fmt"
	"testing"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// TestMatchStreamOperators checks each of the stream-only operators on a
// post that has what it asks and on one that has not.
func TestMatchStreamOperators(t *testing.T) {
	t.Parallel()
	rich := events.Post{ID: 10, AuthorUsername: "alice", Text: "snow", InReplyToPostID: 7, RepostOfID: 8,
		RepostOfUsername: "Bob", AuthorVerified: true, Source: "Aviary Web", PlaceID: "5a110d312052166f",
		MediaKinds: []string{"video", "photo"}, Hashtags: []string{"x"}, Cashtags: []string{"twtr"},
		URLTerms: []string{"example.com/Photos/1", "example.com"}}
	plain := events.Post{ID: 11, AuthorUsername: "alice", Text: "snow", MediaKinds: []string{"animated_gif"},
		Quoted: &events.QuotedPost{Text: "x", Hashtags: []string{"q"}, URLTerms: []string{"other.org"}}}
	cases := []struct {
		rule        string
		rich, plain bool
	}{
		{"snow has:hashtags", true, false}, // the quoted post's hashtags do not count
		{"snow -has:hashtags", false, true},
		{"snow has:cashtags", true, false},
		{"snow has:images", true, false},
		{"snow has:video_link", true, false},
		{"snow has:media", false, false}, // MediaCount is what has:media reads
		{"snow has:geo", true, false},
		{"snow is:verified", true, false},
		{"snow -is:verified", false, true},
		{"snow -is:nullcast", true, true},
		{"in_reply_to_tweet_id:7", true, false},
		{"in_reply_to_tweet_id:8", false, false},
		{"retweets_of_tweet_id:8", true, false},
		{"retweets_of_tweet_id:7", false, false},
		{"retweets_of:bob", true, false},
		{"retweets_of:BOB", true, false},
		{"retweets_of:alice", false, false},
		{`source:"aviary web"`, true, false},
		{"source:Aviary", false, false},
		{"url_contains:photos", true, false},
		{"url_contains:other", false, true}, // a quote matches on the quoted post's URLs too
		{"url_contains:nothing", false, false},
		{"place:5a110d312052166f", true, false},
		{"place:5A110D312052166F", true, false},
		{"place:seattle", false, false},
		{"snow sample:100", true, true},
	}
	for i, tc := range cases {
		if err := streamrules.Check(tc.rule); err != nil {
			t.Fatalf("Check(%q): %v", tc.rule, err)
		}
		set := streamrules.NewSet([]storage.StreamRule{{ID: int64(i + 1), AppID: 5, Value: tc.rule}})
		for _, p := range []struct {
			name string
			post events.Post
			want bool
		}{{"rich", rich, tc.rich}, {"plain", plain, tc.plain}} {
			if got := len(set.Match(p.post)) == 1; got != p.want {
				t.Errorf("rule %q on the %s post matched = %v, want %v", tc.rule, p.name, got, p.want)
			}
		}
	}
}

// TestSample checks that sample:N keeps about N% of posts, the same ones
// every time, and that a smaller sample is inside a larger one.
func TestSample(t *testing.T) {
	t.Parallel()
	sets := map[int]*streamrules.Set{}
	for _, n := range []int{1, 15, 50, 100} {
		sets[n] = streamrules.NewSet([]storage.StreamRule{{ID: 1, AppID: 1, Value: fmt.Sprintf("snow sample:%d", n)}})
	}
	const posts = 20000
	counts := map[int]int{}
	for id := int64(1); id <= posts; id++ {
		p := events.Post{ID: id * 7919, Text: "snow"}
		in := map[int]bool{}
		for n, set := range sets {
			in[n] = len(set.Match(p)) == 1
			if in[n] != (len(set.Match(p)) == 1) {
				t.Fatalf("sample:%d is not deterministic for post %d", n, p.ID)
			}
			if in[n] {
				counts[n]++
			}
		}
		if in[1] && !in[15] || in[15] && !in[50] || in[50] && !in[100] {
			t.Fatalf("post %d: the samples do not nest: %v", p.ID, in)
		}
	}
	for n, c := range counts {
		if got := float64(c) * 100 / posts; got < float64(n)*0.8-0.3 || got > float64(n)*1.2+0.3 {
			t.Errorf("sample:%d kept %.2f%% of the posts", n, got)
		}
	}
	if counts[100] != posts {
		t.Errorf("sample:100 kept %d of %d posts", counts[100], posts)
	}
}
