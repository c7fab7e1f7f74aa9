package posttext

import "testing"

// Hostile: every term KeywordTerms counts a post under must be a keyword
// a query can name (NormalizeKeyword(t) == t), else its counts can never
// be asked for, and every keyword NormalizeKeyword accepts must be counted
// from a post holding it. wordTerm checks the 2..64 bound on the runes
// before NFC, NormalizeKeyword after, so decomposed (NFD) text disagrees.
func TestHostileCountedTermsAreQueryable(t *testing.T) {
	for _, text := range []string{
		"e\u0301",             // NFD "é": 2 runes counted, 1 rune after NFC: refused as a keyword
		"#big_data",           // the hashtag's word form "big_data" holds '_': refused as a keyword
		"#" + repeat("a", 70), // a hashtag over 64 runes is counted, refused as a keyword
	} {
		for _, term := range KeywordTerms(text) {
			if got, ok := NormalizeKeyword(term); !ok || got != term {
				t.Errorf("KeywordTerms(%q) counts %q, but NormalizeKeyword(%q) = %q, %v: its count can never be queried", text, term, term, got, ok)
			}
		}
	}
	// The other way: a 64-rune NFC keyword accepted by the endpoint whose
	// NFD spelling in a post (96 runes) is not counted.
	word := repeat("e\u0301", 32) + repeat("a", 32)
	k, ok := NormalizeKeyword(word)
	if !ok {
		t.Fatalf("NormalizeKeyword refused %q", word)
	}
	terms := KeywordTerms(word)
	found := false
	for _, term := range terms {
		found = found || term == k
	}
	if !found {
		t.Errorf("keyword %q is accepted (%d runes after NFC) but a post writing it decomposed counts terms %q", k, len([]rune(k)), terms)
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
