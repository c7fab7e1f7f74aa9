package streamrules

import (
	"strings"
	"unicode"

	"github.com/aviary-dev/aviary/domain/posttext"
)

// Tokens are the words of text as rules match them: runs of letters,
// digits and marks (the word runes of posttext's keyword terms), and each
// symbol (an emoji, a currency sign) on its own, lower-cased and
// NFC-normalized, never accent-folded: "Café" gives "café", which "cafe"
// does not match. Any other rune (space, punctuation, "_") separates words,
// so "don't" is "don" "t" and a rule term "don't" matches it as a phrase.
func Tokens(text string) []string {
	text = strings.ToLower(posttext.NFC(text))
	var out []string
	start := -1
	for i, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if start < 0 {
				start = i
			}
			continue
		case start >= 0:
			out = append(out, text[start:i])
			start = -1
		}
		if unicode.Is(unicode.So, r) || unicode.Is(unicode.Sc, r) {
			out = append(out, string(r))
		}
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}
