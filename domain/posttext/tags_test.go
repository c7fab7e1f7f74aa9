package posttext

import (
	"reflect"
	"strings"
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

func TestIsHashtag(t *testing.T) {
	for tag, want := range map[string]bool{
		"Go": true, "東京・タワー": true, "l·l": true, "می\u200cخواهم": true, "cafe\u0301": true, "1st": true, "_a": true,
		"": false, "1": false, "_": false, "・": false, "a-b": false, "a#b": false, "#a": false, "a b": false,
		"\ufe0f\u20e3": false, "\u20e3": false, "a\ufe0f": true,
	} {
		if got := IsHashtag(tag); got != want {
			t.Errorf("IsHashtag(%+q) = %v, want %v", tag, got, want)
		}
		// Whatever IsHashtag takes, Extract finds as one whole hashtag.
		e := Extract("#" + tag)
		whole := len(e.Hashtags) == 1 && e.Hashtags[0].Tag == tag
		if whole != want {
			t.Errorf("Extract(%+q) = %+v; whole hashtag %v, want %v", "#"+tag, e.Hashtags, whole, want)
		}
	}
}

func TestURLTermsBounded(t *testing.T) {
	long := "https://www.example.com/" + strings.Repeat("x", MaxURLTermBytes)
	edge := "https://example.org/" + strings.Repeat("y", MaxURLTermBytes-len("example.org/"))
	got := URLTerms([]string{long, edge})
	want := []string{"www.example.com", "example.com", NormalizeURL(edge), "example.org"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("URLTerms = %.80q, want %.80q", got, want)
	}
	if n := len(NormalizeURL(edge)); n != MaxURLTermBytes {
		t.Fatalf("edge term is %d bytes, want %d", n, MaxURLTermBytes)
	}
}
