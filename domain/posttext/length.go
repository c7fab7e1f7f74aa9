package posttext

// MaxWeightedLength is the longest a post's text may be, in WeightedLength.
const MaxWeightedLength = 280

// The platform's counting configuration (twitter-text v3): weights are in
// hundredths of a character.
const (
	weightScale          = 100
	defaultWeight        = 200 // a character outside the ranges, an emoji
	transformedURLLength = 23  // every link counts as a t.co link
)

// lightRanges are the code point ranges that weigh 100 (one character).
var lightRanges = [][2]rune{{0, 4351}, {8192, 8205}, {8208, 8223}, {8242, 8247}}

// WeightedLength is the length of a post's text as the platform counts it
// against MaxWeightedLength: after NFC normalization, every link counts 23,
// every emoji (with its modifiers, joiners and variation selectors) 2,
// characters in lightRanges (Latin, common punctuation) 1, all others 2.
func WeightedLength(text string) int {
	r := []rune(nfc(text))
	urls := extractURLs(r)
	total := 0
	for i := 0; i < len(r); {
		if len(urls) > 0 && urls[0].Start == i {
			total += transformedURLLength * weightScale
			i = urls[0].End
			urls = urls[1:]
			continue
		}
		if n := emojiLength(r, i); n > 0 {
			total += defaultWeight
			i += n
			continue
		}
		total += weight(r[i])
		i++
	}
	return total / weightScale
}

func weight(c rune) int {
	for _, lr := range lightRanges {
		if c >= lr[0] && c <= lr[1] {
			return weightScale
		}
	}
	return defaultWeight
}
