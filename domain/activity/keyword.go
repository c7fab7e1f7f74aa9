package activity

import (
	"strings"
	"unicode"
)

// NormalizeKeywordText is s as keyword matching compares it: lower-cased,
// every run of white space one space, trimmed.
func NormalizeKeywordText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// KeywordMatches reports whether a news.new subscription's keyword matches
// text (a story's headline or summary), docs/activity.md "News": compared
// case-insensitively with white space collapsed, the keyword (a word or a
// phrase of several) must occur in text as whole words: the character
// before it and the one after it, where the keyword's own first or last
// character is a word character (a letter, a digit or "_"), must not be a
// word character. So "mars" matches "Mars rover lands" and "to Mars." but
// not "Marshall", and "#eclipse" matches "the #eclipse today".
func KeywordMatches(keyword, text string) bool {
	kw, t := NormalizeKeywordText(keyword), NormalizeKeywordText(text)
	if kw == "" {
		return false
	}
	first, last := []rune(kw)[0], lastRune(kw)
	for from := 0; from <= len(t)-len(kw); {
		i := strings.Index(t[from:], kw)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(kw)
		if !(wordRune(first) && start > 0 && wordRune(lastRune(t[:start]))) &&
			!(wordRune(last) && end < len(t) && wordRune([]rune(t[end:])[0])) {
			return true
		}
		from = start + len(string(first))
	}
	return false
}

func wordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}
