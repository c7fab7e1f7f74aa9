package streamrules_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", streamrules.MaxRuleLength-2) + " b"
	cases := []struct {
		rule string
		want streamrules.Kind // 0: accepted
	}{
		{"cat", 0},
		{`"snow day" #NoSchool`, 0},
		{"cat has:media -grumpy", 0},
		{`"X data" has:mentions (has:media OR has:links)`, 0},
		{"(happy OR happiness) lang:en -birthday -is:retweet", 0},
		{"from:XDevelopers OR to:api", 0},
		{"conversation_id:1334987486343299072", 0},
		{"url:example.com", 0},
		{"$twtr OR @XDevelopers -$fb", 0},
		{"skiing -snow -day -noschool", 0},
		{"(😃 OR 😡) 😬", 0},
		{long, 0},
		{long + "c", streamrules.Noncompliant},
		{"has:media", streamrules.Noncompliant},
		{"has:links OR is:retweet", streamrules.Noncompliant},
		{"#meme OR has:images", streamrules.Noncompliant},
		{"#meme has:images has:video_link has:geo has:hashtags has:cashtags", 0},
		{"#nowplaying is:verified -is:nullcast", 0},
		{`"mobile games" is:nullcast`, streamrules.Noncompliant}, // must be negated
		{"-is:nullcast", streamrules.Invalid},                    // no positive clause
		{"is:verified -is:nullcast", streamrules.Noncompliant},
		{"#nowplaying @spotify sample:15", 0},
		{"sample:15", streamrules.Noncompliant},
		{"a sample:0", streamrules.Invalid},
		{"retweets_of:XDevelopers", 0},
		{"retweets_of_tweet_id:1539382664746020864", 0},
		{"in_reply_to_tweet_id:1539382664746020864", 0},
		{`source:"X for iPhone"`, 0},
		{"url_contains:photos", 0},
		{`place:"new york city" OR place:seattle`, 0},
		{"min_followers:1000", streamrules.Invalid},
		{"a followers_count:1000..10000", streamrules.Invalid},
		{"bio:developer", streamrules.Invalid},
		{"#meme OR has:media", streamrules.Noncompliant},
		{"lang:en is:reply", streamrules.Noncompliant},
		{"skiing -(snow OR day OR noschool)", streamrules.Noncompliant},
		{"skiing -(snow day)", streamrules.Noncompliant},
		{"cat min_likes:10", streamrules.Noncompliant},
		{"-cat", streamrules.Invalid},
		{"cat OR -dog", streamrules.Invalid},
		{"(cat", streamrules.Invalid},
		{"foo:bar", streamrules.Invalid},
		{"place_country:US", streamrules.Invalid},
		{"", streamrules.Invalid},
		{"ok \xff", streamrules.Invalid},
	}
	for _, tc := range cases {
		err := streamrules.Check(tc.rule)
		var re *streamrules.Error
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("Check(%.40q) = %v, want nil", tc.rule, err)
		case tc.want != 0 && (!errors.As(err, &re) || re.Kind != tc.want || re.Reason == ""):
			t.Errorf("Check(%.40q) = %#v, want kind %d", tc.rule, err, tc.want)
		}
	}
	if err := streamrules.CheckLength("cat dog", 5); err == nil {
		t.Errorf("CheckLength over 5 accepted")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"Hello, World!":      {"hello", "world"},
		"Café cafe\u0301":    {"café", "café"},
		"don't e-mail":       {"don", "t", "e", "mail"},
		"a😃b #tag @x $5":     {"a", "😃", "b", "tag", "x", "$", "5"},
		"東京タワー":              {"東京タワー"},
		"   ":                nil,
		"snake_case":         {"snake", "case"},
		"DIACRÍTICA diacrít": {"diacrítica", "diacrít"},
	}
	for in, want := range cases {
		if got := streamrules.Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// post is the payload the cases match against.
var post = events.Post{
	ID: 10, AuthorID: 1, AuthorUsername: "Alice", Text: "Snow day! Diacrítica en el CAFÉ 😃 don't panic #NoSchool @Bob $TWTR https://t.co/x",
	Lang: "es", ConversationID: 7, InReplyToPostID: 7, InReplyToUserID: 2, InReplyToUsername: "Bob",
	MediaCount: 1, Mentions: []string{"bob"}, Hashtags: []string{"noschool"}, Cashtags: []string{"twtr"},
	URLTerms: []string{"example.com/a", "example.com"},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule string
		want bool
	}{
		{"snow", true},
		{"SNOW", true},
		{"rain", false},
		{`"snow day"`, true},
		{`"day snow"`, false},
		{"snow day", true},
		{"diacrítica", true},
		{"diacritica", false},
		{"café", true},
		{"cafe", false},
		{"don't", true},
		{`"don't panic"`, true},
		{"😃", true},
		{"😡", false},
		{"(😃 OR 😡) snow", true},
		{"from:alice", true},
		{"from:ALICE", true},
		{"from:bob", false},
		{"to:bob", true},
		{"to:alice", false},
		{"@bob", true},
		{"@BOB", true},
		{"@carol", false},
		{"#noschool", true},
		{"#NoSchool", true},
		{"#school", false},
		{"$twtr", true},
		{"$fb", false},
		{"url:example.com", true},
		{"url:https://example.com/a/", true},
		{"url:other.org", false},
		{"snow lang:es", true},
		{"snow lang:en", false},
		{"conversation_id:7", true},
		{"conversation_id:8", false},
		{"snow is:reply", true},
		{"snow is:quote", false},
		{"snow -is:retweet", true},
		{"snow has:media", true},
		{"snow has:links", true},
		{"snow has:mentions", true},
		{"snow -grumpy", true},
		{"snow -day", false},
		{"rain OR snow", true},
		{"rain OR hail", false},
		{"(rain OR snow) (day OR night)", true},
		{"(rain OR snow) (week OR night)", false},
		{"snow -from:bob -@carol", true},
		{"snow -@bob", false},
		{"!!!", false},
		{"snow -!!!", true},
	}
	for i, tc := range cases {
		if err := streamrules.Check(tc.rule); err != nil {
			t.Fatalf("Check(%q): %v", tc.rule, err)
		}
		set := streamrules.NewSet([]storage.StreamRule{{ID: int64(i + 1), AppID: 5, Value: tc.rule, Tag: "t"}})
		hits := set.Match(post)
		if got := len(hits) == 1; got != tc.want {
			t.Errorf("rule %q matched = %v (%v), want %v", tc.rule, got, hits, tc.want)
		}
	}
}

func TestMatchOrdersHitsByAppThenRule(t *testing.T) {
	t.Parallel()
	set := streamrules.NewSet([]storage.StreamRule{
		{ID: 30, AppID: 2, Value: "snow", Tag: "b"},
		{ID: 10, AppID: 2, Value: "day", Tag: "a"},
		{ID: 20, AppID: 1, Value: "from:alice"},
		{ID: 40, AppID: 1, Value: "rain"},
		{ID: 50, AppID: 1, Value: "(broken"}, // left out
	})
	if set.Len() != 4 {
		t.Errorf("Len = %d, want 4", set.Len())
	}
	got := set.Match(post)
	want := []events.RuleHit{{AppID: 1, RuleID: 20}, {AppID: 2, RuleID: 10, Tag: "a"}, {AppID: 2, RuleID: 30, Tag: "b"}}
	if !slices.Equal(got, want) {
		t.Errorf("Match = %v, want %v", got, want)
	}
	if hits := streamrules.NewSet(nil).Match(post); hits != nil {
		t.Errorf("empty set matched %v", hits)
	}
}

// FuzzCheck checks that Check never panics, and that a rule it accepts
// compiles and matches posts without panicking.
//
//	go test -run='^$' -fuzz=FuzzCheck -fuzztime=200000x ./domain/streamrules
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"cat", `"snow day" -x`, "has:media", "a OR (b -c) #d @e $F url:x.y lang:en is:reply has:links",
		"-(a b) c", "from:x OR to:y", "conversation_id:1", "(😃 OR 😡) 😬", "min_likes:1 a", "\xff", "",
		"a has:images has:geo is:verified -is:nullcast sample:50 source:web url_contains:x place:p retweets_of:y",
		"in_reply_to_tweet_id:1 OR retweets_of_tweet_id:2"} {
		f.Add(s, "snow day 😃 café")
	}
	f.Fuzz(func(t *testing.T, rule, text string) {
		if err := streamrules.Check(rule); err != nil {
			var re *streamrules.Error
			if !errors.As(err, &re) || re.Reason == "" {
				t.Fatalf("Check(%q) = %v, want an *Error with a reason", rule, err)
			}
			return
		}
		set := streamrules.NewSet([]storage.StreamRule{{ID: 1, AppID: 1, Value: rule}})
		if set.Len() != 1 {
			t.Fatalf("accepted rule %q did not compile", rule)
		}
		p := post
		p.Text = text
		set.Match(p)
		set.Match(events.Post{})
	})
}

// BenchmarkMatch matches posts against 1,000 rules of 100 apps (the
// platform's cap of one app, over several apps), reporting ns per post.
func BenchmarkMatch(b *testing.B) {
	words := strings.Fields("snow day rain cat dog meme happy sad news sport game music film book art food travel code data cloud")
	rules := make([]storage.StreamRule, 0, 1000)
	for i := range 1000 {
		w := func(k int) string { return words[(i*7+k*13)%len(words)] }
		var v string
		switch i % 5 {
		case 0:
			v = fmt.Sprintf("%s %s -is:retweet", w(0), w(1))
		case 1:
			v = fmt.Sprintf(`"%s %s" OR #%s`, w(0), w(1), w(2))
		case 2:
			v = fmt.Sprintf("(%s OR %s) lang:en has:media", w(0), w(1))
		case 3:
			v = fmt.Sprintf("from:user%d OR @user%d", i, i+1)
		default:
			v = fmt.Sprintf("%s -%s -%s url:example.com", w(0), w(1), w(2))
		}
		rules = append(rules, storage.StreamRule{ID: int64(i + 1), AppID: int64(i%100 + 1), Value: v})
	}
	set := streamrules.NewSet(rules)
	if set.Len() != len(rules) {
		b.Fatalf("%d of %d rules compiled", set.Len(), len(rules))
	}
	p := events.Post{AuthorUsername: "user42", Lang: "en", MediaCount: 1, Mentions: []string{"user7"}, Hashtags: []string{"art"},
		URLTerms: []string{"example.com"},
		Text:     "A snow day with the cat: happy news about music, film and food, then travel and code #art @user7 https://example.com"}
	b.ReportAllocs()
	b.ResetTimer()
	hits := 0
	for b.Loop() {
		hits = len(set.Match(p))
	}
	b.ReportMetric(float64(hits), "hits/post")
}

func TestMatchEvent(t *testing.T) {
	t.Parallel()
	set := streamrules.NewSet([]storage.StreamRule{{ID: 5, AppID: 2, Value: "cat", Tag: "c"}})
	payload := func(p events.Post) []byte {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	hit := []events.RuleHit{{AppID: 2, RuleID: 5, Tag: "c"}}
	for _, tt := range []struct {
		name    string
		ev      events.Event
		want    events.Match
		ok, err bool
	}{
		{"match", events.Event{Seq: 9, Type: events.PostCreate, SubjectID: 3, Payload: payload(events.Post{ID: 3, Text: "a Cat"})},
			events.Match{Seq: 9, PostID: 3, Rules: hit}, true, false},
		{"post id from the subject", events.Event{Seq: 10, Type: events.PostCreate, SubjectID: 4, Payload: payload(events.Post{Text: "cat"})},
			events.Match{Seq: 10, PostID: 4, Rules: hit}, true, false},
		{"no rule matches", events.Event{Seq: 11, Type: events.PostCreate, SubjectID: 5, Payload: payload(events.Post{ID: 5, Text: "dog"})},
			events.Match{}, false, false},
		{"not a creation", events.Event{Seq: 12, Type: events.PostDelete, SubjectID: 3, Payload: payload(events.Post{ID: 3, Text: "cat"})},
			events.Match{}, false, false},
		{"undecodable", events.Event{Seq: 13, Type: events.PostCreate, SubjectID: 6, Payload: []byte("not json")},
			events.Match{}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := set.MatchEvent(tt.ev)
			if ok != tt.ok || (err != nil) != tt.err || got.Seq != tt.want.Seq || got.PostID != tt.want.PostID || !slices.Equal(got.Rules, tt.want.Rules) {
				t.Errorf("MatchEvent = %+v, %v, %v; want %+v, %v, error %v", got, ok, err, tt.want, tt.ok, tt.err)
			}
		})
	}
}
