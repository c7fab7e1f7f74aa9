package posttext

import (
	"strings"
	"unicode"

	"github.com/aviary-dev/aviary/storage"
)

// maxUsername is the longest username; a longer run after @ is no mention.
const maxUsername = 15

const (
	fullwidthAt   = '＠'
	fullwidthHash = '＃'
	textStyle     = '\uFE0E'
	emojiStyle    = '\uFE0F'
	keycapMark    = '\u20E3'
)

func extractMentions(r []rune, inLink []bool) []storage.MentionEntity {
	var out []storage.MentionEntity
	for i := range r {
		if end, ok := mentionAt(r, i); ok && !overlaps(inLink, i, end) {
			out = append(out, storage.MentionEntity{Start: i, End: end, Username: string(r[i+1 : end])})
		}
	}
	return out
}

// mentionAt matches @ + 1-15 of [A-Za-z0-9_] at r[i] and returns its end.
func mentionAt(r []rune, i int) (int, bool) {
	if !isAtSign(r[i]) || !mentionMayFollow(r, i) {
		return 0, false
	}
	end := i + 1
	for end < len(r) && isUsernameRune(r[end]) {
		end++
	}
	if n := end - i - 1; n < 1 || n > maxUsername {
		return 0, false
	}
	if next := at(r, end); isAtSign(next) || isAccentedLatin(next) || hasPrefixFold(r, end, "://") {
		return 0, false
	}
	return end, true
}

// mentionMayFollow: an @ right after a word character or one of !#$%&*@
// (an e-mail address, say) is no mention, except in "RT@user".
func mentionMayFollow(r []rune, i int) bool {
	p := at(r, i-1)
	if !isASCIIAlnum(p) && !isAccentedLatin(p) && !strings.ContainsRune("_!#$%&*@＠", p) {
		return true
	}
	return i >= 2 && hasPrefixFold(r, i-2, "rt") && !isASCIIAlnum(at(r, i-3)) && !strings.ContainsRune("_+~.-", at(r, i-3))
}

func isAtSign(c rune) bool { return c == '@' || c == fullwidthAt }

func isUsernameRune(c rune) bool { return isASCIIAlnum(c) || c == '_' }

// extractTags collects the hashtags or cashtags that match finds.
func extractTags(r []rune, inLink []bool, match func([]rune, int) (int, bool)) []storage.TagEntity {
	var out []storage.TagEntity
	for i := range r {
		if end, ok := match(r, i); ok && !overlaps(inLink, i, end) {
			out = append(out, storage.TagEntity{Start: i, End: end, Tag: string(r[i+1 : end])})
		}
	}
	return out
}

// hashtagAt matches # or ＃ + letters, marks, digits and _ (at least one
// letter or mark) at r[i] and returns its end.
func hashtagAt(r []rune, i int) (int, bool) {
	if !isHashSign(r[i]) || !hashtagMayFollow(at(r, i-1)) {
		return 0, false
	}
	if next := at(r, i+1); next == emojiStyle || next == keycapMark {
		return 0, false // a keycap emoji: #️⃣
	}
	end, letter := i+1, false
	for end < len(r) && IsHashtagRune(r[end]) {
		letter = letter || unicode.IsLetter(r[end]) || unicode.IsMark(r[end])
		end++
	}
	if !letter || isHashSign(at(r, end)) || hasPrefixFold(r, end, "://") {
		return 0, false
	}
	return end, true
}

func hashtagMayFollow(p rune) bool {
	if p == textStyle || p == emojiStyle {
		return true
	}
	return p != '&' && p != '_' && !unicode.IsLetter(p) && !unicode.IsMark(p) && !unicode.IsDigit(p)
}

func isHashSign(c rune) bool { return c == '#' || c == fullwidthHash }

// IsHashtagRune reports whether c may be part of a hashtag: letters,
// marks, digits, _, and the joiners some scripts write inside words (ZWNJ,
// the Japanese middle dot, the Catalan middle dot).
func IsHashtagRune(c rune) bool {
	return unicode.IsLetter(c) || unicode.IsMark(c) || unicode.IsDigit(c) ||
		c == '_' || c == '\u200C' || c == '\u30FB' || c == '\u00B7'
}

// IsHashtag reports whether tag (without its sign) is a whole hashtag as
// Extract finds them: "#" + tag, on its own, is extracted as one hashtag
// whose tag is all of tag. That is: only hashtag runes (IsHashtagRune),
// at least one letter or mark, and not the keycap emoji's tail (U+FE0F
// or U+20E3 first). The search query language takes exactly these as #
// values (domain/searchquery keeps a copy of the rule, which its tests
// compare with this one for every code point).
func IsHashtag(tag string) bool {
	if tag == "" {
		return false
	}
	r := append([]rune{'#'}, []rune(tag)...)
	end, ok := hashtagAt(r, 0)
	return ok && end == len(r)
}

// cashtagAt matches $ + 1-6 ASCII letters, optionally . or _ and 1-2
// letters ($BRK.B), at r[i] and returns its end.
func cashtagAt(r []rune, i int) (int, bool) {
	if r[i] != '$' || isWordRune(at(r, i-1)) || at(r, i-1) == '_' || at(r, i-1) == '$' {
		return 0, false
	}
	end := asciiLettersEnd(r, i+1)
	if n := end - i - 1; n < 1 || n > 6 {
		return 0, false
	}
	if sep := at(r, end); sep == '.' || sep == '_' {
		if e := asciiLettersEnd(r, end+1); e-end-1 >= 1 && e-end-1 <= 2 && !isWordRune(at(r, e)) {
			return e, true
		}
	}
	if isWordRune(at(r, end)) {
		return 0, false
	}
	return end, true
}

func asciiLettersEnd(r []rune, i int) int {
	for i < len(r) && isASCIILetter(r[i]) {
		i++
	}
	return i
}

// Tags are the terms the search operators @, # and $ match for a post's
// entities: lower-cased, NFC-normalized, without the sign, each once, in
// text order. The url: terms are URLTerms(ExpandedURLs(e)).
func Tags(e storage.Entities) (mentions, hashtags, cashtags []string) {
	for _, m := range e.Mentions {
		mentions = appendTerm(mentions, m.Username)
	}
	for _, h := range e.Hashtags {
		hashtags = appendTerm(hashtags, h.Tag)
	}
	for _, c := range e.Cashtags {
		cashtags = appendTerm(cashtags, c.Tag)
	}
	return mentions, hashtags, cashtags
}

// ExpandedURLs are the expanded forms of a post's links, for URLTerms.
func ExpandedURLs(e storage.Entities) []string {
	out := make([]string, 0, len(e.URLs))
	for _, u := range e.URLs {
		out = append(out, u.ExpandedURL)
	}
	return out
}

// NormalizeTag is the form in which @, # and $ terms are stored and
// matched: one leading sign (@ ＠ # ＃ $) removed, NFC, lower case.
func NormalizeTag(s string) string {
	s = strings.TrimSpace(s)
	for _, sign := range []string{"@", "＠", "#", "＃", "$"} {
		if rest, ok := strings.CutPrefix(s, sign); ok {
			s = rest
			break
		}
	}
	return strings.ToLower(nfc(s))
}

func appendTerm(list []string, value string) []string {
	t := NormalizeTag(value)
	if t == "" || contains(list, t) {
		return list
	}
	return append(list, t)
}
