package posttext

import (
	"reflect"
	"testing"
)

func TestTags(t *testing.T) {
	e := Extract("@Jack @jack hi #Go #GO #cafe\u0301 #café $AAPL $aapl https://Example.com/a www.example.com")
	mentions, hashtags, cashtags := Tags(e)
	check := func(name string, got, want []string) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("mentions", mentions, []string{"jack"})
	check("hashtags", hashtags, []string{"go", "café"})
	check("cashtags", cashtags, []string{"aapl"})
	check("ExpandedURLs", ExpandedURLs(e), []string{"https://Example.com/a", "http://www.example.com"})
	check("URLTerms", URLTerms(ExpandedURLs(e)), []string{"example.com/a", "example.com", "www.example.com"})

	m, h, c := Tags(Extract("no entities"))
	if m != nil || h != nil || c != nil {
		t.Errorf("Tags of no entities = %q %q %q, want nil", m, h, c)
	}
}

func TestNormalizeTag(t *testing.T) {
	for in, want := range map[string]string{
		"#Go": "go", "＃Go": "go", "@Jack": "jack", "$AAPL": "aapl", "Cafe\u0301": "café", "##x": "#x", " #Tag ": "tag",
	} {
		if got := NormalizeTag(in); got != want {
			t.Errorf("NormalizeTag(%q) = %q, want %q", in, got, want)
		}
	}
}
