package posttext

import (
	"slices"
	"testing"
)

func TestKeywordTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"The Go release", []string{"the", "go", "release"}},
		{"go go GO", []string{"go"}},
		{"#GoLang rocks $ACME @Gopher", []string{"#golang", "golang", "rocks", "$acme", "acme", "@gopher"}},
		{"read https://example.com/golang/news now", []string{"read", "now"}},
		{"a b c ok", []string{"ok"}},
		{"Café déjà-vu", []string{"café", "déjà", "vu"}},
		{"développeurs #Tech", []string{"développeurs", "#tech", "tech"}},
		{"", []string{}},
		{"🎉🎉 !!", []string{}},
	}
	for _, tt := range tests {
		got := KeywordTerms(tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("KeywordTerms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestNormalizeKeyword(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"Developers", "developers", true},
		{"  golang ", "golang", true},
		{"#Tech", "#tech", true},
		{"$ACME", "$acme", true},
		{"@Some_User", "@some_user", true},
		{"#big_data", "#big_data", true},
		{"big data", "", false},
		{"big_data", "big_data", true}, // a tag's word form
		{"x", "", false},
		{"#", "", false},
		{"", "", false},
		{"c++", "", false},
		{"déjà", "déjà", true},
	}
	for _, tt := range tests {
		got, ok := NormalizeKeyword(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeKeyword(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	// A normalized keyword names the term KeywordTerms counts.
	for _, kw := range []string{"Developers", "#Tech", "$ACME", "@Gopher"} {
		term, _ := NormalizeKeyword(kw)
		if !slices.Contains(KeywordTerms("text with "+kw), term) {
			t.Errorf("KeywordTerms does not count %q under %q", kw, term)
		}
	}
	if !IsStopword("the") || IsStopword("golang") {
		t.Error("IsStopword")
	}
}
