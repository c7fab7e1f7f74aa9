package posttext

import (
	"strings"
	"testing"
)

func TestWeightedLength(t *testing.T) {
	tests := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"reference example", "Hello, world! 👋", 16},
		{"NFC café", "caf\u00e9", 4},
		{"NFD café is normalized", "cafe\u0301", 4},
		{"CJK counts double", "日本語のテキスト", 16},
		{"Hangul jamo compose to a syllable", "\u1112\u1161\u11ab", 2},
		{"a long link counts 23", "https://example.com/very/long/path/that/goes/on/and/on", 23},
		{"a short link counts 23", "see https://t.co", 27},
		{"a bare domain is a link", "example.com", 23},
		{"single emoji", "👾", 2},
		{"skin tone", "🙋🏽", 2},
		{"ZWJ sequence", "👨‍🎤", 2},
		{"family", "👨‍👩‍👧‍👦", 2},
		{"flags", "🇯🇵🇫🇷", 4},
		{"keycap", "#️⃣1️⃣", 4},
		{"subdivision flag", "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", 2},
		{"heart on fire", "❤️‍🔥", 2},
		{"text copyright", "©", 1},
		{"emoji copyright", "©\uFE0F", 2},
		{"em dash is light", "a—b", 3},
		{"ellipsis is heavy", "…", 2},
		{"280 Latin letters", strings.Repeat("a", 280), 280},
		{"140 CJK characters", strings.Repeat("你", 140), 280},
	}
	for _, tt := range tests {
		if got := WeightedLength(tt.text); got != tt.want {
			t.Errorf("%s: WeightedLength(%q) = %d, want %d", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestNFC(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"cafe\u0301", "caf\u00e9"},
		{"a\u0301\u0323", "\u1ea1\u0301"}, // reordered: dot below first, then composed
		{"\u212b", "\u00c5"},              // singleton: Angstrom sign
		{"\u0958", "\u0915\u093c"},        // composition exclusion stays decomposed
		{"\u1112\u1161\u11ab", "\ud55c"},  // Hangul LVT
		{"\ud55c\u0301", "\ud55c\u0301"},  // nothing to compose
		{"e\u0304\u0301", "\u1e17"},       // ḗ: two steps
		{"\u1f71", "\u03ac"},              // Greek oxia -> tonos
		{"q\u0303", "q\u0303"},            // no precomposed form
		{"\xffe\u0301", "\ufffd\u00e9"},   // invalid bytes become U+FFFD
	}
	for _, tt := range tests {
		if got := nfc(tt.in); got != tt.want {
			t.Errorf("nfc(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

// TestLongEmojiChainsWeighTheirParts: a sequence is one emoji only up to
// the longest real ones, so joiners and tags can not smuggle a long text
// past the limit.
func TestLongEmojiChainsWeighTheirParts(t *testing.T) {
	chain := strings.Repeat("👨\u200d", 1000) + "👨"
	if n := WeightedLength(chain); n <= MaxWeightedLength {
		t.Errorf("a chain of 1001 joined pictographs weighs %d, want over %d", n, MaxWeightedLength)
	}
	tags := "🏴" + strings.Repeat("\U000E0067", 1000)
	if n := WeightedLength(tags); n <= MaxWeightedLength {
		t.Errorf("a flag with 1000 tags weighs %d, want over %d", n, MaxWeightedLength)
	}
	for _, real := range []string{"👨\u200d👩\u200d👧\u200d👦", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "👩🏽\u200d❤️\u200d💋\u200d👨🏿"} {
		if n := WeightedLength(real); n != 2 {
			t.Errorf("%q weighs %d, want 2", real, n)
		}
	}
}
