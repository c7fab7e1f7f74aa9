package searchquery_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/aviary-dev/aviary/domain/posttext"
	sq "github.com/aviary-dev/aviary/domain/searchquery"
)

func and(c ...sq.Node) sq.Node      { return &sq.And{Children: c} }
func or(c ...sq.Node) sq.Node       { return &sq.Or{Children: c} }
func not(c sq.Node) sq.Node         { return &sq.Not{Child: c} }
func term(s string) sq.Node         { return &sq.Term{Text: s} }
func phrase(s string) sq.Node       { return &sq.Phrase{Text: s} }
func op(name, value string) sq.Node { return &sq.Operator{Name: name, Value: value} }
func num(name, v string, n int64) sq.Node {
	return &sq.Operator{Name: name, Value: v, Number: n}
}

type valid struct {
	q    string
	want sq.Node
	// str is the expected String(); "" means q itself.
	str string
}

func checkValid(t *testing.T, cases []valid) {
	t.Helper()
	for _, c := range cases {
		got, err := sq.Parse(c.q)
		if err != nil {
			t.Errorf("Parse(%q) = error %v (pos %d), want %s", c.q, err, posOf(err), c.want)
			continue
		}
		if !reflect.DeepEqual(got.Root, c.want) {
			t.Errorf("Parse(%q) = %s (%#v), want %s (%#v)", c.q, got, got.Root, c.want, c.want)
			continue
		}
		str := c.str
		if str == "" {
			str = c.q
		}
		if got.String() != str {
			t.Errorf("Parse(%q).String() = %q, want %q", c.q, got.String(), str)
		}
		again, err := sq.Parse(got.String())
		if err != nil || !reflect.DeepEqual(again.Root, got.Root) {
			t.Errorf("Parse(%q) again from %q = %v, %v; want the same tree", c.q, got.String(), again, err)
		}
	}
}

type invalid struct {
	q      string
	pos    int
	reason string
}

func checkInvalid(t *testing.T, cases []invalid) {
	t.Helper()
	for _, c := range cases {
		got, err := sq.Parse(c.q)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %q at %d", c.q, got, c.reason, c.pos)
			continue
		}
		var qe *sq.Error
		if !errors.As(err, &qe) {
			t.Errorf("Parse(%q) error %T %v, want *searchquery.Error", c.q, err, err)
			continue
		}
		if qe.Pos != c.pos || qe.Reason != c.reason {
			t.Errorf("Parse(%q) = error at %d: %s\n want error at %d: %s", c.q, qe.Pos, qe.Reason, c.pos, c.reason)
		}
		if qe.Error() != qe.Reason {
			t.Errorf("Parse(%q): Error() = %q, want the reason", c.q, qe.Error())
		}
	}
}

func posOf(err error) int {
	var qe *sq.Error
	if errors.As(err, &qe) {
		return qe.Pos
	}
	return -1
}

func TestParseTermsAndPhrases(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "cat", want: term("cat")},
		{q: "  cat\t", want: term("cat"), str: "cat"},
		{q: "Cat dog", want: and(term("Cat"), term("dog"))},
		{q: `"snow day"`, want: phrase("snow day")},
		{q: `" snow  day "`, want: phrase(" snow  day ")},
		{q: `"X API" OR #v2`, want: or(phrase("X API"), op(sq.OpHashtag, "v2"))},
		{q: "café 東京 😃", want: and(term("café"), term("東京"), term("😃"))},
		{q: "don't e-mail a-", want: and(term("don't"), term("e-mail"), term("a-"))},
		{q: "or and AND Or", want: and(term("or"), term("and"), term("AND"), term("Or"))},
		// A word ends at a quote or a parenthesis: they are the
		// language's own characters.
		{q: `foo"bar"`, want: and(term("foo"), phrase("bar")), str: `foo "bar"`},
		{q: "a(b)", want: and(term("a"), term("b")), str: "a b"},
		// Unicode white space separates words.
		{q: "a\u00a0b\u3000c", want: and(term("a"), term("b"), term("c")), str: "a b c"},
	})
	// Words with a colon that do not start with an operator name are
	// terms (":)" has a parenthesis, so it is refused below).
	checkValid(t, []valid{
		{q: "12:30 Note:this x", want: and(term("12:30"), term("Note:this"), term("x"))},
		{q: "https://example.com/a?b=c http://x", want: and(term("https://example.com/a?b=c"), term("http://x"))},
		{q: "ftp://host", want: term("ftp://host")},
		{q: "a-b:c", want: term("a-b:c")},
		{q: "Foo:bar NOTE:x", want: and(term("Foo:bar"), term("NOTE:x"))},
		{q: "_x:y", want: term("_x:y")},
		{q: "c# f# x@y", want: and(term("c#"), term("f#"), term("x@y"))},
	})
	checkInvalid(t, []invalid{
		{q: `"abc`, pos: 0, reason: `unterminated quote: the phrase opened at position 0 has no closing "`},
		{q: `a "b" "c`, pos: 6, reason: `unterminated quote: the phrase opened at position 6 has no closing "`},
		{q: `a ""`, pos: 2, reason: `empty phrase at position 2`},
		{q: `a "  "`, pos: 2, reason: `empty phrase at position 2`},
		{q: `:)`, pos: 1, reason: `unbalanced parenthesis: ")" at position 1 closes nothing`},
	})
}

func TestParseBoolean(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "a b OR c", want: or(and(term("a"), term("b")), term("c"))},
		{q: "a OR b c", want: or(term("a"), and(term("b"), term("c")))},
		{q: "a OR b OR c", want: or(term("a"), term("b"), term("c"))},
		{q: "(a OR b) c", want: and(or(term("a"), term("b")), term("c"))},
		{q: "c (a OR b)", want: and(term("c"), or(term("a"), term("b")))},
		{q: "(a b) OR (c d)", want: or(and(term("a"), term("b")), and(term("c"), term("d"))), str: "a b OR c d"},
		// Groups of the same kind flatten; a group of one clause is the
		// clause.
		{q: "(a b) c", want: and(term("a"), term("b"), term("c")), str: "a b c"},
		{q: "(a OR b) OR c", want: or(term("a"), term("b"), term("c")), str: "a OR b OR c"},
		{q: "((((a))))", want: term("a"), str: "a"},
		{q: "(a)(b)", want: and(term("a"), term("b")), str: "a b"},
		// Negation of each kind of clause and of groups.
		{q: "cat -grumpy", want: and(term("cat"), not(term("grumpy")))},
		{q: `cat -"grumpy cat"`, want: and(term("cat"), not(phrase("grumpy cat")))},
		{q: "cat -from:jack -@bob -#meme -$aapl -is:retweet", want: and(term("cat"),
			not(op(sq.OpFrom, "jack")), not(op(sq.OpMention, "bob")), not(op(sq.OpHashtag, "meme")),
			not(op(sq.OpCashtag, "aapl")), not(op(sq.OpIs, sq.IsRetweet)))},
		{q: "skiing -(snow OR day)", want: and(term("skiing"), not(or(term("snow"), term("day"))))},
		{q: "skiing -(snow day)", want: and(term("skiing"), not(and(term("snow"), term("day"))))},
		{q: "a -(-b)", want: and(term("a"), not(not(term("b"))))},
		{q: "a -(b) -((c))", want: and(term("a"), not(term("b")), not(term("c"))), str: "a -b -c"},
		// A negated clause may stand beside one that is not, in any
		// group, and on each side of an OR that has one.
		{q: "a (-b -c)", want: and(term("a"), not(term("b")), not(term("c"))), str: "a -b -c"},
		{q: "a -b OR c -d", want: or(and(term("a"), not(term("b"))), and(term("c"), not(term("d"))))},
		{q: "-a b", want: and(not(term("a")), term("b"))},
	})
	checkInvalid(t, []invalid{
		{q: "", pos: 0, reason: "the query is empty"},
		{q: " \t\n\u3000", pos: 0, reason: "the query is empty"},
		{q: "(a", pos: 0, reason: `unbalanced parenthesis: "(" at position 0 is never closed`},
		{q: "a (b (c)", pos: 2, reason: `unbalanced parenthesis: "(" at position 2 is never closed`},
		{q: "a (", pos: 2, reason: `unbalanced parenthesis: "(" at position 2 is never closed`},
		{q: "(a OR b) c)", pos: 10, reason: `unbalanced parenthesis: ")" at position 10 closes nothing`},
		{q: "(a b)) c", pos: 5, reason: `unbalanced parenthesis: ")" at position 5 closes nothing`},
		{q: ") a", pos: 0, reason: `unbalanced parenthesis: ")" at position 0 closes nothing`},
		{q: "a ()", pos: 2, reason: `empty group "()" at position 2`},
		{q: "a ( )", pos: 2, reason: `empty group "()" at position 2`},
		{q: "-()", pos: 1, reason: `empty group "()" at position 1`},
		{q: "OR a", pos: 0, reason: `"OR" at position 0 has nothing before it`},
		{q: "a OR", pos: 2, reason: `"OR" at position 2 has nothing after it`},
		{q: "a OR OR b", pos: 5, reason: `"OR" at position 5 follows another "OR"`},
		{q: "(OR a)", pos: 1, reason: `"OR" at position 1 has nothing before it`},
		{q: "(a OR) b", pos: 3, reason: `"OR" at position 3 has nothing after it`},
		{q: "OR", pos: 0, reason: `"OR" at position 0 has nothing before it`},
		{q: "a -", pos: 2, reason: `"-" at position 2 has nothing after it`},
		{q: "a - b", pos: 2, reason: `"-" at position 2 has nothing after it`},
		{q: "(a -)", pos: 3, reason: `"-" at position 3 has nothing after it`},
		{q: "a --b", pos: 2, reason: `"-" at position 2 must be followed by a term, phrase, operator or group, not another "-"`},
		{q: "a -OR b", pos: 2, reason: `"-" at position 2 must be followed by a term, phrase, operator or group, not "OR"`},
		{q: "-a", pos: 0, reason: "a query needs at least one clause that is not negated"},
		{q: "-a -from:jack -(b OR c)", pos: 0, reason: "a query needs at least one clause that is not negated"},
		{q: "-(-a)", pos: 0, reason: "a query needs at least one clause that is not negated"},
		{q: "(-a -b)", pos: 0, reason: "a query needs at least one clause that is not negated"},
		{q: "a OR -b", pos: 5, reason: `each side of "OR" needs at least one clause that is not negated; the one at position 5 has none`},
		{q: "-a OR b", pos: 0, reason: `each side of "OR" needs at least one clause that is not negated; the one at position 0 has none`},
		{q: "x (a OR -b -c)", pos: 8, reason: `each side of "OR" needs at least one clause that is not negated; the one at position 8 has none`},
		{q: "a OR (-b)", pos: 5, reason: `each side of "OR" needs at least one clause that is not negated; the one at position 5 has none`},
	})
}

func TestParseEntityOperators(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "@XDevelopers", want: op(sq.OpMention, "xdevelopers"), str: "@xdevelopers"},
		{q: "@a_1 @123456789012345", want: and(op(sq.OpMention, "a_1"), op(sq.OpMention, "123456789012345"))},
		{q: "#ThankUNext", want: op(sq.OpHashtag, "thankunext"), str: "#thankunext"},
		{q: "#café #東京 #a1 #_a #1a", want: and(op(sq.OpHashtag, "café"), op(sq.OpHashtag, "東京"),
			op(sq.OpHashtag, "a1"), op(sq.OpHashtag, "_a"), op(sq.OpHashtag, "1a"))},
		// What extraction takes in a hashtag: the joiners ZWNJ, ・ and ·,
		// and combining marks (normalized by the store, not here).
		{q: "#東京・タワー #L·L #می\u200cخواهم #Cafe\u0301", want: and(op(sq.OpHashtag, "東京・タワー"),
			op(sq.OpHashtag, "l·l"), op(sq.OpHashtag, "می\u200cخواهم"), op(sq.OpHashtag, "cafe\u0301")),
			str: "#東京・タワー #l·l #می\u200cخواهم #cafe\u0301"},
		{q: "$TWTR", want: op(sq.OpCashtag, "twtr"), str: "$twtr"},
		{q: "$a $abcdef $BRK.A $brk_b $x.yz", want: and(op(sq.OpCashtag, "a"), op(sq.OpCashtag, "abcdef"),
			op(sq.OpCashtag, "brk.a"), op(sq.OpCashtag, "brk_b"), op(sq.OpCashtag, "x.yz")), str: "$a $abcdef $brk.a $brk_b $x.yz"},
		{q: "(@a OR #b) $c", want: and(or(op(sq.OpMention, "a"), op(sq.OpHashtag, "b")), op(sq.OpCashtag, "c"))},
	})
	checkInvalid(t, []invalid{
		{q: "@", pos: 1, reason: `"@" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: "a @ b", pos: 3, reason: `"@" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: "@1234567890123456", pos: 1, reason: `"@" takes a username of 1 to 15 letters, digits or underscores; got "1234567890123456"`},
		{q: "@jack.dorsey", pos: 1, reason: `"@" takes a username of 1 to 15 letters, digits or underscores; got "jack.dorsey"`},
		{q: "@@jack", pos: 1, reason: `"@" takes a username of 1 to 15 letters, digits or underscores; got "@jack"`},
		{q: "@jöhn", pos: 1, reason: `"@" takes a username of 1 to 15 letters, digits or underscores; got "jöhn"`},
		{q: "#", pos: 1, reason: `"#" needs a value: a hashtag of letters, marks, digits and underscores, with at least one letter or mark`},
		{q: "we are #1", pos: 8, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "1"`},
		{q: "#a-b", pos: 1, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "a-b"`},
		{q: "##a", pos: 1, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "#a"`},
		{q: "#_", pos: 1, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "_"`},
		{q: "#1・2", pos: 1, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "1・2"`},
		{q: "#\ufe0f\u20e3", pos: 1, reason: `"#" takes a hashtag of letters, marks, digits and underscores, with at least one letter or mark; got "` + "\ufe0f\u20e3" + `"`}, // the keycap #️⃣
		{q: "$", pos: 1, reason: `"$" needs a value: a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters`},
		{q: "$100", pos: 1, reason: `"$" takes a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters; got "100"`},
		{q: "$abcdefg", pos: 1, reason: `"$" takes a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters; got "abcdefg"`},
		{q: "$brk.abc", pos: 1, reason: `"$" takes a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters; got "brk.abc"`},
		{q: "$brk.", pos: 1, reason: `"$" takes a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters; got "brk."`},
		{q: "$a.b.c", pos: 1, reason: `"$" takes a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters; got "a.b.c"`},
	})
}

func TestParseUserOperators(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "from:XDevelopers", want: op(sq.OpFrom, "XDevelopers")},
		{q: "to:jack_1", want: op(sq.OpTo, "jack_1")},
		{q: `from:"jack"`, want: op(sq.OpFrom, "jack"), str: "from:jack"},
		{q: "from:a OR from:b", want: or(op(sq.OpFrom, "a"), op(sq.OpFrom, "b"))},
		{q: "(from:a)", want: op(sq.OpFrom, "a"), str: "from:a"},
	})
	checkInvalid(t, []invalid{
		{q: "from:", pos: 5, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: "from: jack", pos: 5, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: "(to:)", pos: 4, reason: `"to:" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: `from:""`, pos: 5, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
		{q: "a from:jack-x", pos: 7, reason: `"from:" takes a username of 1 to 15 letters, digits or underscores; got "jack-x"`},
		{q: "to:abcdefghijklmnop", pos: 3, reason: `"to:" takes a username of 1 to 15 letters, digits or underscores; got "abcdefghijklmnop"`},
		{q: "from:@jack", pos: 5, reason: `"from:" takes a username of 1 to 15 letters, digits or underscores; got "@jack"`},
		{q: `from:"a b"`, pos: 5, reason: `"from:" takes a username of 1 to 15 letters, digits or underscores; got "a b"`},
		{q: `from:"jack`, pos: 5, reason: `unterminated quote: the value of "from:" opened at position 5 has no closing "`},
	})
}

func TestParseURLAndLang(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "url:example.com", want: op(sq.OpURL, "example.com")},
		{q: "url:https://developer.x.com/en", want: op(sq.OpURL, "https://developer.x.com/en")},
		{q: `url:"https://developer.twitter.com"`, want: op(sq.OpURL, "https://developer.twitter.com"), str: "url:https://developer.twitter.com"},
		{q: `url:"a b(c)"`, want: op(sq.OpURL, "a b(c)")},
		{q: `url:"x"y`, want: and(op(sq.OpURL, "x"), term("y")), str: "url:x y"},
		{q: "url:a:b", want: op(sq.OpURL, "a:b")},
		{q: "lang:en", want: op(sq.OpLang, "en")},
		{q: "lang:und", want: op(sq.OpLang, "und")},
		{q: "lang:EN", want: op(sq.OpLang, "en"), str: "lang:en"},
		{q: "lang:zh-cn lang:zh-TW lang:sr-latn lang:es-419", want: and(op(sq.OpLang, "zh-CN"), op(sq.OpLang, "zh-TW"),
			op(sq.OpLang, "sr-Latn"), op(sq.OpLang, "es-419")), str: "lang:zh-CN lang:zh-TW lang:sr-Latn lang:es-419"},
		{q: "lang:fil", want: op(sq.OpLang, "fil")},
	})
	checkInvalid(t, []invalid{
		{q: "url:", pos: 4, reason: `"url:" needs a value: a URL or a part of one`},
		{q: `url:""`, pos: 4, reason: `"url:" needs a value: a URL or a part of one`},
		{q: `url:"http://x`, pos: 4, reason: `unterminated quote: the value of "url:" opened at position 4 has no closing "`},
		{q: "lang:", pos: 5, reason: `"lang:" needs a value: a language code such as en, pt or zh-CN`},
		{q: "lang:e", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "e"`},
		{q: "lang:english", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "english"`},
		{q: "lang:en-", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "en-"`},
		{q: "lang:en-x", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "en-x"`},
		{q: "lang:en_US", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "en_US"`},
		{q: "lang:e1", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "e1"`},
		{q: "lang:en-US-x", pos: 5, reason: `"lang:" takes a language code such as en, pt or zh-CN; got "en-US-x"`},
	})
}

func TestParseConversationAndCounts(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "conversation_id:1334987486343299072", want: num(sq.OpConversationID, "1334987486343299072", 1334987486343299072)},
		{q: "conversation_id:9223372036854775807", want: num(sq.OpConversationID, "9223372036854775807", 9223372036854775807)},
		{q: "conversation_id:007", want: num(sq.OpConversationID, "7", 7), str: "conversation_id:7"},
		{q: "min_likes:0", want: num(sq.OpMinLikes, "0", 0)},
		{q: "min_likes:100", want: num(sq.OpMinLikes, "100", 100)},
		{q: "min_replies:10", want: num(sq.OpMinReplies, "10", 10)},
		{q: "min_reposts:2147483647", want: num(sq.OpMinReposts, "2147483647", 2147483647)},
		{q: `"breaking news" min_reposts:50`, want: and(phrase("breaking news"), num(sq.OpMinReposts, "50", 50))},
		{q: `min_likes:"5"`, want: num(sq.OpMinLikes, "5", 5), str: "min_likes:5"},
	})
	checkInvalid(t, []invalid{
		{q: "conversation_id:", pos: 16, reason: `"conversation_id:" needs a value: a post id (1 to 19 digits, at most 9223372036854775807)`},
		{q: "conversation_id:abc", pos: 16, reason: `"conversation_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "abc"`},
		{q: "conversation_id:-1", pos: 16, reason: `"conversation_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "-1"`},
		{q: "conversation_id:12345678901234567890", pos: 16, reason: `"conversation_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "12345678901234567890"`},
		{q: "conversation_id:9223372036854775808", pos: 16, reason: `"conversation_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "9223372036854775808"`},
		{q: "conversation_id:1e5", pos: 16, reason: `"conversation_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "1e5"`},
		{q: "a min_likes:", pos: 12, reason: `"min_likes:" needs a value: a whole number from 0 to 2147483647`},
		{q: "min_likes:abc", pos: 10, reason: `"min_likes:" takes a whole number from 0 to 2147483647; got "abc"`},
		{q: "min_likes:-5", pos: 10, reason: `"min_likes:" takes a whole number from 0 to 2147483647; got "-5"`},
		{q: "min_likes:+5", pos: 10, reason: `"min_likes:" takes a whole number from 0 to 2147483647; got "+5"`},
		{q: "min_replies:1.5", pos: 12, reason: `"min_replies:" takes a whole number from 0 to 2147483647; got "1.5"`},
		{q: "min_reposts:2147483648", pos: 12, reason: `"min_reposts:" takes a whole number from 0 to 2147483647; got "2147483648"`},
		{q: "min_likes:٣", pos: 10, reason: `"min_likes:" takes a whole number from 0 to 2147483647; got "٣"`},
	})
}

func TestParseIsHas(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "a is:reply is:quote is:retweet", want: and(term("a"), op(sq.OpIs, "reply"), op(sq.OpIs, "quote"), op(sq.OpIs, "retweet"))},
		{q: "a has:media has:links has:mentions", want: and(term("a"), op(sq.OpHas, "media"), op(sq.OpHas, "links"), op(sq.OpHas, "mentions"))},
		// Conjunction-required on the platform; accepted alone here.
		{q: "has:media", want: op(sq.OpHas, "media")},
		{q: "has:links OR is:retweet", want: or(op(sq.OpHas, "links"), op(sq.OpIs, "retweet"))},
	})
	checkInvalid(t, []invalid{
		{q: "is:blah", pos: 3, reason: `"is:" takes reply, quote, retweet, verified or nullcast; got "blah"`},
		{q: "a is:Reply", pos: 5, reason: `"is:" takes reply, quote, retweet, verified or nullcast; got "Reply"`},
		{q: "a is:verifed", pos: 5, reason: `"is:" takes reply, quote, retweet, verified or nullcast; got "verifed"`},
		{q: "is:", pos: 3, reason: `"is:" needs a value: reply, quote, retweet, verified or nullcast`},
		{q: "has:videos", pos: 4, reason: `"has:" takes media, links, mentions, hashtags, cashtags, images, video_link or geo; got "videos"`},
		{q: "has:", pos: 4, reason: `"has:" needs a value: media, links, mentions, hashtags, cashtags, images, video_link or geo`},
	})
}

// TestParseOperatorNamesAnyCase: operators are case-insensitive (the
// reference's build-a-query and build-a-rule pages), so an operator name
// in any case is that operator, printed in lower case; values keep their
// own rules, and OR is the operator only in upper case.
func TestParseOperatorNamesAnyCase(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "FROM:alice", want: op(sq.OpFrom, "alice"), str: "from:alice"},
		{q: "snow LANG:en", want: and(term("snow"), op(sq.OpLang, "en")), str: "snow lang:en"},
		{q: "Has:media -Is:retweet", want: and(op(sq.OpHas, "media"), not(op(sq.OpIs, "retweet"))), str: "has:media -is:retweet"},
		{q: "Min_Likes:5 CONVERSATION_ID:12", want: and(num(sq.OpMinLikes, "5", 5), num(sq.OpConversationID, "12", 12)),
			str: "min_likes:5 conversation_id:12"},
		{q: `Url:"a b" To:jack`, want: and(op(sq.OpURL, "a b"), op(sq.OpTo, "jack")), str: `url:"a b" to:jack`},
		{q: "a or b", want: and(term("a"), term("or"), term("b"))},
		{q: "HTTPS://example.com", want: term("HTTPS://example.com")},
	})
	checkInvalid(t, []invalid{
		{q: "PLACE_COUNTRY:US", pos: 0, reason: `operator "place_country:" is not supported`},
		{q: "FROM:", pos: 5, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
	})
}

// The filtered stream's operators parse (search refuses them afterwards:
// TestCheckSearch).
func TestParseStreamOperators(t *testing.T) {
	t.Parallel()
	checkValid(t, []valid{
		{q: "a is:verified -is:nullcast", want: and(term("a"), op(sq.OpIs, "verified"), not(op(sq.OpIs, "nullcast")))},
		{q: "a has:hashtags has:cashtags has:images has:video_link has:geo", want: and(term("a"), op(sq.OpHas, "hashtags"),
			op(sq.OpHas, "cashtags"), op(sq.OpHas, "images"), op(sq.OpHas, "video_link"), op(sq.OpHas, "geo"))},
		{q: "in_reply_to_tweet_id:1539382664746020864", want: num(sq.OpInReplyToTweetID, "1539382664746020864", 1539382664746020864)},
		{q: "retweets_of_tweet_id:007", want: num(sq.OpRetweetsOfTweetID, "7", 7), str: "retweets_of_tweet_id:7"},
		{q: "retweets_of:XDevelopers", want: op(sq.OpRetweetsOf, "XDevelopers")},
		{q: "a sample:15", want: and(term("a"), num(sq.OpSample, "15", 15))},
		{q: "a sample:100", want: and(term("a"), num(sq.OpSample, "100", 100))},
		{q: `source:"X for iPhone"`, want: op(sq.OpSource, "X for iPhone")},
		{q: "url_contains:photos", want: op(sq.OpURLContains, "photos")},
		{q: `place:"new york city" OR place:5a110d312052166f`, want: or(op(sq.OpPlace, "new york city"), op(sq.OpPlace, "5a110d312052166f"))},
	})
	checkInvalid(t, []invalid{
		{q: "a sample:0", pos: 9, reason: `"sample:" takes a whole number from 1 to 100 (a percentage); got "0"`},
		{q: "a sample:101", pos: 9, reason: `"sample:" takes a whole number from 1 to 100 (a percentage); got "101"`},
		{q: "a sample:", pos: 9, reason: `"sample:" needs a value: a whole number from 1 to 100 (a percentage)`},
		{q: "retweets_of:@jack", pos: 12, reason: `"retweets_of:" takes a username of 1 to 15 letters, digits or underscores; got "@jack"`},
		{q: "in_reply_to_tweet_id:x", pos: 21, reason: `"in_reply_to_tweet_id:" takes a post id (1 to 19 digits, at most 9223372036854775807); got "x"`},
		{q: "source:", pos: 7, reason: `"source:" needs a value: the name of the app a post was made with`},
	})
}

func TestCheckSearch(t *testing.T) {
	t.Parallel()
	cases := map[string]string{ // query -> the operator named, "" when accepted
		"a has:media is:reply -is:retweet": "",
		"a has:hashtags":                   `"has:hashtags"`,
		"a -is:nullcast":                   `"is:nullcast"`,
		"(a OR b is:verified) c":           `"is:verified"`,
		"a OR place:x":                     `"place:"`,
		"a sample:5":                       `"sample:"`,
		"source:web":                       `"source:"`,
		"url_contains:x":                   `"url_contains:"`,
		"retweets_of:jack":                 `"retweets_of:"`,
		"retweets_of_tweet_id:1":           `"retweets_of_tweet_id:"`,
		"in_reply_to_tweet_id:1":           `"in_reply_to_tweet_id:"`,
	}
	for q, want := range cases {
		parsed, err := sq.Parse(q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", q, err)
		}
		err = sq.CheckSearch(parsed)
		var qe *sq.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckSearch(%q) = %v, want nil", q, err)
		case want != "" && (!errors.As(err, &qe) || !strings.Contains(qe.Reason, want) || !strings.Contains(qe.Reason, "not supported by Aviary's search")):
			t.Errorf("CheckSearch(%q) = %v, want a refusal naming %s", q, err, want)
		}
	}
}

func TestParseUnknownOperators(t *testing.T) {
	t.Parallel()
	checkInvalid(t, []invalid{
		{q: "foo:bar", pos: 0, reason: `unknown operator "foo:"`},
		{q: "cat foo:", pos: 4, reason: `unknown operator "foo:"`},
		{q: "min_faves:10", pos: 0, reason: `unknown operator "min_faves:"`},
		{q: "min_retweets:10", pos: 0, reason: `unknown operator "min_retweets:"`},
		{q: "re: meeting", pos: 0, reason: `unknown operator "re:"`},
		{q: "https:", pos: 0, reason: `unknown operator "https:"`},
		{q: "a -foo_bar:1", pos: 3, reason: `unknown operator "foo_bar:"`},
		{q: "min_followers:10", pos: 0, reason: `operator "min_followers:" is not supported`},
		{q: "x place_country:US", pos: 2, reason: `operator "place_country:" is not supported`},
		{q: "followers_count:10..20", pos: 0, reason: `operator "followers_count:" is not supported`},
		{q: "context:10.1", pos: 0, reason: `operator "context:" is not supported`},
	})
}

func TestParseTextAndLimits(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("(", sq.MaxDepth) + "a" + strings.Repeat(")", sq.MaxDepth)
	tooDeep := "x " + strings.Repeat("(", sq.MaxDepth+1) + "a" + strings.Repeat(")", sq.MaxDepth+1)
	clauses := make([]string, sq.MaxClauses)
	want := make([]sq.Node, sq.MaxClauses)
	for i := range clauses {
		clauses[i] = "w"
		want[i] = term("w")
	}
	many := strings.Join(clauses, " ")
	checkValid(t, []valid{
		{q: deep, want: term("a"), str: "a"},
		{q: many, want: and(want...)},
	})
	checkInvalid(t, []invalid{
		{q: tooDeep, pos: 2 + sq.MaxDepth, reason: "parentheses nest more than 32 deep at position 34"},
		{q: many + " -(x)", pos: len(many) + 3, reason: "the query has more than 64 clauses (terms, phrases and operators)"},
		{q: "ok \xff", pos: 3, reason: "the query is not valid UTF-8: byte 0xff at position 3"},
		{q: "\"caf\xc3\"", pos: 4, reason: "the query is not valid UTF-8: byte 0xc3 at position 4"},
		{q: "a\x00b", pos: 1, reason: "the query holds a control character (U+0000) at position 1"},
		{q: "東京 a\x1b", pos: 8, reason: "the query holds a control character (U+001B) at position 8"},
		{q: "a \u0085\u0080", pos: 4, reason: "the query holds a control character (U+0080) at position 4"},
		// Positions are byte offsets: each of 東京 takes 3 bytes.
		{q: "東京 )", pos: 7, reason: `unbalanced parenthesis: ")" at position 7 closes nothing`},
		{q: "东京 from:", pos: 12, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
	})
}

// The first problem from the left is the one reported.
func TestParseReportsTheFirstProblem(t *testing.T) {
	t.Parallel()
	checkInvalid(t, []invalid{
		{q: "foo:x )", pos: 0, reason: `unknown operator "foo:"`},
		{q: "a ) foo:x", pos: 2, reason: `unbalanced parenthesis: ")" at position 2 closes nothing`},
		{q: "(a -b from:", pos: 11, reason: `"from:" needs a value: a username of 1 to 15 letters, digits or underscores`},
	})
}

func TestQueryString(t *testing.T) {
	t.Parallel()
	var nilQuery *sq.Query
	if nilQuery.String() != "" || (&sq.Query{}).String() != "" {
		t.Errorf("empty queries print %q, %q; want empty", nilQuery.String(), (&sq.Query{}).String())
	}
	q, err := sq.Parse(`(a OR "b c") -(d OR e) -from:x url:"a b"`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.String(), `(a OR "b c") -(d OR e) -from:x url:"a b"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestHashtagsAsExtracted checks, for every code point, that the parser
// takes a #value exactly when domain/posttext extracts it as a whole
// hashtag (posttext.IsHashtag): the rune inside a tag, and for hashtag
// runes first and alone. The
// query language keeps its own copy of the rule (it cannot import posttext:
// posttext imports storage, which imports the query language).
func TestHashtagsAsExtracted(t *testing.T) {
	t.Parallel()
	parses := func(tag string) bool {
		q, err := sq.Parse("#" + tag)
		if err != nil {
			return false
		}
		o, ok := q.Root.(*sq.Operator)
		return ok && o.Name == sq.OpHashtag
	}
	mismatches := 0
	for r := rune(0); r <= unicode.MaxRune && mismatches < 10; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates: not in UTF-8
		}
		tags := []string{"a" + string(r) + "b"}
		if posttext.IsHashtagRune(r) {
			// First, and alone (the letter rule, the keycap's tail).
			tags = append(tags, string(r)+"b", string(r))
		}
		for _, tag := range tags {
			if got, want := parses(tag), posttext.IsHashtag(tag); got != want {
				t.Errorf("#%+q (U+%04X): parser takes it %v, extraction %v", tag, r, got, want)
				mismatches++
			}
		}
	}
	for _, tag := range []string{"東京・タワー", "l·l", "می\u200cخواهم", "cafe\u0301", "_a", "1st"} {
		if !posttext.IsHashtag(tag) || !parses(tag) {
			t.Errorf("#%s: extraction %v, parser %v; want both true", tag, posttext.IsHashtag(tag), parses(tag))
		}
	}
}
