package searchquery_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	sq "github.com/aviary-dev/aviary/domain/searchquery"
)

// FuzzParse checks that Parse never panics, that every refusal is an
// *Error with a position inside the query, and that every accepted query
// prints (String) as a query that parses to the same tree and prints the
// same again. Run it with
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=1000000x ./domain/searchquery
//
// Crashers it finds are kept in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"cat", `"snow day"`, "a b OR c", "a OR b c", "(a OR b) c", "-(a b) c", "a -(-b)",
		"from:XDevelopers OR to:API", "@jack #Tag $BRK.a", `url:"https://developer.x.com/en docs"`,
		"url:example.com/a?b=c", "lang:zh-cn lang:und", "conversation_id:1334987486343299072",
		"is:reply is:quote is:retweet", "has:media has:links has:mentions",
		"min_likes:10 min_replies:0 min_reposts:2147483647", "https://example.com", "12:30 Note:this",
		"café 東京 😃 #東京", "#東京・タワー #l·l #cafe\u0301 #می\u200cخواهم #_ #\ufe0f\u20e3", "a\u00a0b\u3000c", `foo"bar"`, "a(b)", "((((a))))", "a (-b -c)",
		"", " ", "(", ")", "()", "OR", "a OR", "OR a", "a OR OR b", "-", "a -", "--a", "-OR a",
		"-a", "a OR -b", "foo:bar", "place:x", "is:blah", "min_likes:99999999999", `"abc`,
		`url:"x`, "from:", "@", "#1", "$100", "a\x00", "ok \xff", "lang:en-US-x",
		strings.Repeat("(", 40) + "a" + strings.Repeat(")", 40), strings.Repeat("a ", 70),
		"a has:hashtags has:cashtags has:images has:video_link has:geo is:verified -is:nullcast sample:15",
		`in_reply_to_tweet_id:1 retweets_of_tweet_id:2 retweets_of:jack source:"X for iPhone" url_contains:x place:"a b"`,
		"sample:0", "sample:101", `source:""`,
		`(a OR "b c") -(d OR e) -from:x url:"a b" #x OR (@y $z) -is:retweet has:media min_likes:5`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := sq.Parse(q)
		if err != nil {
			var qe *sq.Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q): error %T %v, want *searchquery.Error", q, err, err)
			}
			if qe.Pos < 0 || qe.Pos > len(q) {
				t.Fatalf("Parse(%q): error position %d outside [0, %d]: %s", q, qe.Pos, len(q), qe.Reason)
			}
			if qe.Reason == "" || !utf8.ValidString(qe.Reason) {
				t.Fatalf("Parse(%q): empty or invalid reason %q", q, qe.Reason)
			}
			return
		}
		if got == nil || got.Root == nil {
			t.Fatalf("Parse(%q) = %v, nil: no tree", q, got)
		}
		s := got.String()
		again, err := sq.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) printed as %q, which fails: %v", q, s, err)
		}
		if !reflect.DeepEqual(again.Root, got.Root) {
			t.Fatalf("Parse(%q) printed as %q parses to another tree:\n%#v\n%#v", q, s, got.Root, again.Root)
		}
		if s2 := again.String(); s2 != s {
			t.Fatalf("Parse(%q) prints %q, then %q", q, s, s2)
		}
	})
}
