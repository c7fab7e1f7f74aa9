package activity

import "testing"

func TestKeywordMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		keyword, text string
		want          bool
	}{
		{"mars", "Mars rover lands", true},
		{"Mars", "a landing on mars.", true},
		{"mars", "Marshall speaks", false},
		{"mars", "The Martian", false},
		{"solar eclipse", "A total Solar   Eclipse over the valley", true},
		{"solar eclipse", "solar panels and an eclipse", false},
		{"#eclipse", "watching the #eclipse today", true},
		{"#eclipse", "eclipse glasses", false},
		{"eclipse", "watching the #eclipse today", true},
		{"eclipse", "#eclipse2026", false},
		{"ai", "AI: what changed", true},
		{"ai", "said the rain", false},
		{"café", "Le Café opens", true},
		{"  ", "anything", false},
		{"x", "", false},
		{"news", "news, news", true},
		{"ab", "aab ab", true},
	}
	for _, tt := range tests {
		if got := KeywordMatches(tt.keyword, tt.text); got != tt.want {
			t.Errorf("KeywordMatches(%q, %q) = %v, want %v", tt.keyword, tt.text, got, tt.want)
		}
	}
}
