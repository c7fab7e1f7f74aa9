package streamrules_test

import (
	"testing"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// TestHostileMatch: cases from the platform's build-a-rule and operators
// pages, and normalization edges.
func TestHostileMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule, text, lang string
		want             bool
	}{
		{"apple OR iphone ipad", "apple pie", "en", true},
		{"apple OR iphone ipad", "my iphone", "en", false},
		{"ipad iphone OR android", "android phone", "en", true},
		{"café", "cafe\u0301 au lait", "en", true},
		{"cafe\u0301", "café au lait", "en", true},
		{"snow lang:EN", "snow", "en", true},
		{"snow lang:zh-CN", "snow", "zh-CN", true},
		{"snow lang:zh-cn", "snow", "zh-CN", true},
		{`"coca cola"`, "I like coca-cola", "en", true},
		{"coca-cola", "coca cola please", "en", true},
		{"grumpy cat", "CAT Grumpy", "en", true},
		{"ß", "SS", "de", false},
		{"👍", "nice 👍🏽", "en", true},
		{"x -y", "x", "en", true},
		{"cat OR", "cat", "en", false},
		{"from:Alice", "anything", "en", true},
	}
	for i, c := range cases {
		if err := streamrules.Check(c.rule); err != nil {
			t.Logf("Check(%q): %v", c.rule, err)
			continue
		}
		set := streamrules.NewSet([]storage.StreamRule{{ID: int64(i + 1), AppID: 1, Value: c.rule}})
		got := len(set.Match(events.Post{ID: 1, Text: c.text, Lang: c.lang, AuthorUsername: "alice"})) == 1
		if got != c.want {
			t.Errorf("rule %q on %q (lang %s) = %v, want %v", c.rule, c.text, c.lang, got, c.want)
		}
	}
}
