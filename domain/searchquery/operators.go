package searchquery

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// hints says what each operator takes, for the reasons of refused values;
// its keys are the operators the language knows.
var hints = map[string]string{
	OpFrom:           "a username of 1 to 15 letters, digits or underscores",
	OpTo:             "a username of 1 to 15 letters, digits or underscores",
	OpMention:        "a username of 1 to 15 letters, digits or underscores",
	OpHashtag:        "a hashtag of letters, marks, digits and underscores, with at least one letter or mark",
	OpCashtag:        "a cashtag of 1 to 6 letters, optionally followed by . or _ and 1 or 2 letters",
	OpURL:            "a URL or a part of one",
	OpLang:           "a language code such as en, pt or zh-CN",
	OpConversationID: "a post id (1 to 19 digits, at most 9223372036854775807)",
	OpIs:             "reply, quote, retweet, verified or nullcast",
	OpHas:            "media, links, mentions, hashtags, cashtags, images, video_link or geo",
	OpMinLikes:       "a whole number from 0 to 2147483647",
	OpMinReplies:     "a whole number from 0 to 2147483647",
	OpMinReposts:     "a whole number from 0 to 2147483647",
	// The filtered stream's operators (search refuses them: CheckSearch).
	OpInReplyToTweetID:  "a post id (1 to 19 digits, at most 9223372036854775807)",
	OpRetweetsOf:        "a username of 1 to 15 letters, digits or underscores",
	OpRetweetsOfTweetID: "a post id (1 to 19 digits, at most 9223372036854775807)",
	OpSample:            "a whole number from 1 to 100 (a percentage)",
	OpSource:            "the name of the app a post was made with",
	OpURLContains:       "a part of a URL",
	OpPlace:             "a place id",
}

// unsupported are operators of the platform's language that Aviary does
// not offer: they are refused as such rather than as unknown.
var unsupported = map[string]bool{
	"context": true, "entity": true, "list": true, "quotes_of_tweet_id": true,
	"place_country": true, "point_radius": true, "bounding_box": true,
	"bio": true, "bio_name": true, "bio_location": true,
	"from_affiliate_of": true, "to_affiliate_of": true, "url_title": true, "url_description": true,
	"min_followers": true, "followers_count": true, "tweets_count": true, "following_count": true,
	"listed_count": true,
}

// display is how a reason names an operator: "from:", "@".
func display(name string) string {
	switch name {
	case OpMention, OpHashtag, OpCashtag:
		return name
	}
	return name + ":"
}

// operator checks value (found at pos) for operator name and returns the
// node with the value in its canonical form.
func operator(name string, pos int, value string) (Node, error) {
	if value == "" {
		return nil, errorf(pos, "%q needs a value: %s", display(name), hints[name])
	}
	bad := func() error {
		return errorf(pos, "%q takes %s; got %q", display(name), hints[name], value)
	}
	op := &Operator{Name: name, Value: value}
	switch name {
	case OpFrom, OpTo, OpRetweetsOf:
		if !isUsername(value) {
			return nil, bad()
		}
	case OpMention:
		if !isUsername(value) {
			return nil, bad()
		}
		op.Value = strings.ToLower(value)
	case OpHashtag:
		op.Value = strings.ToLower(value)
		if !isHashtag(value) || !isHashtag(op.Value) {
			return nil, bad()
		}
	case OpCashtag:
		if !isCashtag(value) {
			return nil, bad()
		}
		op.Value = strings.ToLower(value)
	case OpURL:
	case OpLang:
		tag, ok := canonicalLang(value)
		if !ok {
			return nil, bad()
		}
		op.Value = tag
	case OpConversationID, OpInReplyToTweetID, OpRetweetsOfTweetID:
		n, ok := number(value, math.MaxInt64)
		if !ok {
			return nil, bad()
		}
		op.Value, op.Number = strconv.FormatInt(n, 10), n
	case OpIs:
		switch value {
		case IsReply, IsQuote, IsRetweet, IsVerified, IsNullcast:
		default:
			return nil, bad()
		}
	case OpHas:
		switch value {
		case HasMedia, HasLinks, HasMentions, HasHashtags, HasCashtags, HasImages, HasVideoLink, HasGeo:
		default:
			return nil, bad()
		}
	case OpSample:
		n, ok := number(value, 100)
		if !ok || n < 1 {
			return nil, bad()
		}
		op.Value, op.Number = strconv.FormatInt(n, 10), n
	case OpSource, OpURLContains, OpPlace:
	case OpMinLikes, OpMinReplies, OpMinReposts:
		n, ok := number(value, math.MaxInt32)
		if !ok {
			return nil, bad()
		}
		op.Value, op.Number = strconv.FormatInt(n, 10), n
	}
	return op, nil
}

// isUsername reports whether s is a valid username: 1 to 15 ASCII letters,
// digits or underscores.
func isUsername(s string) bool {
	if len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isHashtag reports whether s is a hashtag without its sign, exactly as
// domain/posttext extracts them from a post (posttext.IsHashtag, which the
// tests check this against rune by rune; the query language cannot import
// posttext, which imports storage, which imports the query language):
// hashtag runes only, at least one letter or mark, and not the tail of the
// keycap emoji #️⃣ (U+FE0F or U+20E3 first).
func isHashtag(s string) bool {
	letter := false
	for i, r := range s {
		if !isHashtagRune(r) || i == 0 && (r == '\uFE0F' || r == '\u20E3') {
			return false
		}
		letter = letter || unicode.IsLetter(r) || unicode.IsMark(r)
	}
	return letter
}

// isHashtagRune is posttext.IsHashtagRune: letters, marks, digits, _, and
// the joiners some scripts write inside words (ZWNJ U+200C, the Japanese
// middle dot U+30FB, the Catalan middle dot U+00B7).
func isHashtagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) ||
		r == '_' || r == '\u200C' || r == '\u30FB' || r == '\u00B7'
}

// isCashtag reports whether s is a cashtag without its sign, as the
// platform recognizes them: 1 to 6 ASCII letters, optionally followed by
// "." or "_" and 1 or 2 letters ($BRK.A).
func isCashtag(s string) bool {
	head, tail := s, ""
	if i := strings.IndexAny(s, "._"); i >= 0 {
		head, tail = s[:i], s[i+1:]
		if len(tail) < 1 || len(tail) > 2 || !isLetters(tail) {
			return false
		}
	}
	return len(head) >= 1 && len(head) <= 6 && isLetters(head)
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// canonicalLang checks a BCP 47 language tag of the form the platform
// reports (a 2- or 3-letter language, optionally "-" and a region or
// script subtag of 2 to 8 letters or digits) and returns it in canonical
// case: "en", "zh-CN", "sr-Latn", "es-419", "und".
func canonicalLang(s string) (string, bool) {
	lang, sub, hasSub := strings.Cut(s, "-")
	if len(lang) < 2 || len(lang) > 3 || !isLetters(lang) {
		return "", false
	}
	lang = strings.ToLower(lang)
	if !hasSub {
		return lang, true
	}
	if len(sub) < 2 || len(sub) > 8 {
		return "", false
	}
	for i := 0; i < len(sub); i++ {
		if c := sub[i]; !(c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'z') {
			return "", false
		}
	}
	switch {
	case len(sub) == 2 && isLetters(sub):
		sub = strings.ToUpper(sub)
	case len(sub) == 4 && isLetters(sub):
		sub = strings.ToUpper(sub[:1]) + strings.ToLower(sub[1:])
	default:
		sub = strings.ToLower(sub)
	}
	return lang + "-" + sub, true
}

// number parses s, ASCII digits only (no sign), as a value from 0 to max.
func number(s string, max int64) (int64, bool) {
	if len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > max {
		return 0, false
	}
	return n, true
}
