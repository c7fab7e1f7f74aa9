package posttext

import (
	"unicode"

	"github.com/aviary-dev/aviary/storage"
)

// Extract finds the entities of a post's text as the platform does (the
// rules are in docs/post-text.md): links, @mentions, #hashtags and
// $cashtags, each kind in text order, with offsets counted in code points
// of text (start inclusive, end exclusive). A mention, hashtag or cashtag
// inside a link is part of the link. Mentions carry no UserID: the API
// fills it in for the users that exist.
func Extract(text string) storage.Entities {
	return extract([]rune(text))
}

func extract(r []rune) storage.Entities {
	urls := extractURLs(r)
	inLink := linkMask(len(r), urls)
	return storage.Entities{
		URLs:     urls,
		Mentions: extractMentions(r, inLink),
		Hashtags: extractTags(r, inLink, hashtagAt),
		Cashtags: extractTags(r, inLink, cashtagAt),
	}
}

// linkMask marks the code points that belong to a link.
func linkMask(n int, urls []storage.URLEntity) []bool {
	mask := make([]bool, n)
	for _, u := range urls {
		for i := u.Start; i < u.End; i++ {
			mask[i] = true
		}
	}
	return mask
}

func overlaps(mask []bool, start, end int) bool {
	for i := start; i < end; i++ {
		if mask[i] {
			return true
		}
	}
	return false
}

// at is r[i], or 0 outside the text.
func at(r []rune, i int) rune {
	if i < 0 || i >= len(r) {
		return 0
	}
	return r[i]
}

// hasPrefixFold reports whether r[i:] starts with the ASCII string p,
// ignoring ASCII case.
func hasPrefixFold(r []rune, i int, p string) bool {
	if len(r)-i < len(p) {
		return false
	}
	for j := 0; j < len(p); j++ {
		if lowerASCII(r[i+j]) != rune(p[j]) {
			return false
		}
	}
	return true
}

func lowerASCII(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCIILetter(c rune) bool { return lowerASCII(c) >= 'a' && lowerASCII(c) <= 'z' }

func isASCIIAlnum(c rune) bool { return isASCIILetter(c) || c >= '0' && c <= '9' }

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

// isAccentedLatin is a Latin letter outside ASCII (é, ß, ł, ...).
func isAccentedLatin(c rune) bool { return c > 0x7F && unicode.Is(unicode.Latin, c) }
