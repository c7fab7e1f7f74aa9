package posttext

// Emoji sequences, simplified from UTS #51: flags (two regional
// indicators), keycaps, and pictographs with presentation selectors,
// skin tone modifiers and tag sequences, joined by ZWJ.
const (
	zwj       = '\u200D'
	tagFirst  = 0xE0020
	tagCancel = 0xE007F
	// maxZWJElements and maxTags bound one sequence: the longest
	// recommended emoji join 4 people (7 elements with their joined
	// hearts and kisses) and subdivision flags carry up to 6 tags. Longer
	// chains are not one emoji: what follows starts anew, so a chain of a
	// thousand joined pictographs weighs as much as its parts.
	maxZWJElements = 8
	maxTags        = 8
)

// emojiLength is the number of code points of the emoji sequence at r[i],
// 0 when there is none.
func emojiLength(r []rune, i int) int {
	n := emojiElement(r, i)
	if n == 0 {
		return 0
	}
	j := i + n
	for elements := 1; elements < maxZWJElements && at(r, j) == zwj; elements++ {
		m := emojiElement(r, j+1)
		if m == 0 {
			break
		}
		j += 1 + m
	}
	return j - i
}

func emojiElement(r []rune, i int) int {
	c := at(r, i)
	switch {
	case isRegionalIndicator(c):
		if isRegionalIndicator(at(r, i+1)) {
			return 2
		}
		return 1
	case c == '#' || c == '*' || c >= '0' && c <= '9':
		return keycapLength(r, i)
	case c == '©' || c == '®':
		if at(r, i+1) == emojiStyle {
			return 2
		}
		return 0
	case isPictographic(c):
		return pictographLength(r, i)
	}
	return 0
}

// keycapLength matches 1️⃣: a digit, # or *, an optional U+FE0F, U+20E3.
func keycapLength(r []rune, i int) int {
	j := i + 1
	if at(r, j) == emojiStyle {
		j++
	}
	if at(r, j) != keycapMark {
		return 0
	}
	return j + 1 - i
}

// pictographLength takes a pictograph with its presentation selector and
// skin tone modifier (either order) and a tag sequence (🏴 subdivision flags).
func pictographLength(r []rune, i int) int {
	j := i + 1
	for k := 0; k < 2 && (at(r, j) == emojiStyle || isSkinTone(at(r, j))); k++ {
		j++
	}
	for tags, c := 0, at(r, j); tags < maxTags && c >= tagFirst && c <= tagCancel; tags, c = tags+1, at(r, j) {
		j++
		if c == tagCancel {
			break
		}
	}
	return j - i
}

func isRegionalIndicator(c rune) bool { return c >= 0x1F1E6 && c <= 0x1F1FF }

func isSkinTone(c rune) bool { return c >= 0x1F3FB && c <= 0x1F3FF }

// pictographs are the ranges of Extended_Pictographic code points (the
// ones the standard library has no table for), coarsened to blocks.
var pictographs = [][2]rune{
	{0x203C, 0x203C}, {0x2049, 0x2049}, {0x2122, 0x2122}, {0x2139, 0x2139},
	{0x2194, 0x2199}, {0x21A9, 0x21AA}, {0x231A, 0x231B}, {0x2328, 0x2328},
	{0x23CF, 0x23CF}, {0x23E9, 0x23F3}, {0x23F8, 0x23FA}, {0x24C2, 0x24C2},
	{0x25AA, 0x25AB}, {0x25B6, 0x25B6}, {0x25C0, 0x25C0}, {0x25FB, 0x25FE},
	{0x2600, 0x27BF}, {0x2934, 0x2935}, {0x2B05, 0x2B07}, {0x2B1B, 0x2B1C},
	{0x2B50, 0x2B50}, {0x2B55, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1F000, 0x1F1E5}, {0x1F200, 0x1FAFF},
	{0x1FC00, 0x1FFFD},
}

func isPictographic(c rune) bool {
	if c < 0x203C {
		return false
	}
	for _, p := range pictographs {
		if c >= p[0] && c <= p[1] {
			return true
		}
	}
	return false
}
