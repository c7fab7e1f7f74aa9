package posttext

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
)

func link(start, end int, u, expanded, display string) storage.URLEntity {
	return storage.URLEntity{Start: start, End: end, URL: u, ExpandedURL: expanded, DisplayURL: display}
}

func TestExtractURLs(t *testing.T) {
	tests := []struct {
		text string
		want []storage.URLEntity
	}{
		{"see https://example.com/a.", []storage.URLEntity{link(4, 25, "https://example.com/a", "https://example.com/a", "example.com/a")}},
		{"www.example.org/docs, ok", []storage.URLEntity{link(0, 20, "www.example.org/docs", "http://www.example.org/docs", "example.org/docs")}},
		{"go to example.com!", []storage.URLEntity{link(6, 17, "example.com", "http://example.com", "example.com")}},
		{"bbc.co.uk and t.co/abc", []storage.URLEntity{link(0, 9, "bbc.co.uk", "http://bbc.co.uk", "bbc.co.uk"), link(14, 22, "t.co/abc", "http://t.co/abc", "t.co/abc")}},
		{"(see https://example.com/foo)", []storage.URLEntity{link(5, 28, "https://example.com/foo", "https://example.com/foo", "example.com/foo")}},
		{"https://en.wikipedia.org/wiki/Go_(language))", []storage.URLEntity{link(0, 43, "https://en.wikipedia.org/wiki/Go_(language)", "https://en.wikipedia.org/wiki/Go_(language)", "en.wikipedia.org/wiki/Go_(langu…")}},
		{"what? https://example.com/?q=1?!", []storage.URLEntity{link(6, 30, "https://example.com/?q=1", "https://example.com/?q=1", "example.com/?q=1")}},
		{"HTTPS://Example.COM:8443/x", []storage.URLEntity{link(0, 26, "HTTPS://Example.COM:8443/x", "HTTPS://Example.COM:8443/x", "Example.COM:8443/x")}},
		{"https://www.example.com/", []storage.URLEntity{link(0, 24, "https://www.example.com/", "https://www.example.com/", "example.com")}},
		{"https://dev.to/twitterdev/understanding-the-new-tweet-payload", []storage.URLEntity{link(0, 61, "https://dev.to/twitterdev/understanding-the-new-tweet-payload", "https://dev.to/twitterdev/understanding-the-new-tweet-payload", "dev.to/twitterdev/und…")}},
		{"詳細はhttps://example.comをご覧ください", []storage.URLEntity{link(3, 22, "https://example.com", "https://example.com", "example.com")}},
		{"https://例え.テスト/パス", []storage.URLEntity{link(0, 15, "https://例え.テスト/", "https://例え.テスト/", "例え.テスト")}},
		{"👋 example.io/x", []storage.URLEntity{link(2, 14, "example.io/x", "http://example.io/x", "example.io/x")}},
		{"README.md, main.go, example.io, example.io?q #x.io#y node.js, e.g. U.S.A.", nil},
		{"bob@example.com", nil},
		{"http://localhost:8080/ and http://10.0.0.1/", nil},
		{"xhttps://example.com #example.com $example.com", nil},
	}
	for _, tt := range tests {
		if got := Extract(tt.text).URLs; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Extract(%q).URLs\n got %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
}

func TestExtractMentions(t *testing.T) {
	m := func(start, end int, name string) storage.MentionEntity {
		return storage.MentionEntity{Start: start, End: end, Username: name}
	}
	tests := []struct {
		text string
		want []storage.MentionEntity
	}{
		{"@jack hi @Bob_1!", []storage.MentionEntity{m(0, 5, "jack"), m(9, 15, "Bob_1")}},
		{"👋 @bob's", []storage.MentionEntity{m(2, 6, "bob")}},
		{"@abcdefghijklmno @abcdefghijklmnop", []storage.MentionEntity{m(0, 16, "abcdefghijklmno")}},
		{"RT@bob: hi ＠ann", []storage.MentionEntity{m(2, 6, "bob"), m(11, 15, "ann")}},
		{"bob@example.com café@bob @a@b @ @_ x_@y", []storage.MentionEntity{m(32, 34, "_")}},
		{"https://medium.com/@user/post", nil},
	}
	for _, tt := range tests {
		if got := Extract(tt.text).Mentions; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Extract(%q).Mentions\n got %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
}

func tag(start, end int, name string) storage.TagEntity {
	return storage.TagEntity{Start: start, End: end, Tag: name}
}

func TestExtractHashtags(t *testing.T) {
	tests := []struct {
		text string
		want []storage.TagEntity
	}{
		{"#go and #日本語!", []storage.TagEntity{tag(0, 3, "go"), tag(8, 12, "日本語")}},
		{"#1st #1 #_ #2024", []storage.TagEntity{tag(0, 4, "1st")}},
		{"＃fullwidth #café #Ünïcödé", []storage.TagEntity{tag(0, 10, "fullwidth"), tag(11, 16, "café"), tag(17, 25, "Ünïcödé")}},
		{"a#b &#39; #tag#tag #️⃣ #x://", nil},
		{"https://example.com/#top", nil},
		{"(#tag)", []storage.TagEntity{tag(1, 5, "tag")}},
	}
	for _, tt := range tests {
		if got := Extract(tt.text).Hashtags; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Extract(%q).Hashtags\n got %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
}

func TestExtractCashtags(t *testing.T) {
	tests := []struct {
		text string
		want []storage.TagEntity
	}{
		{"$AAPL up, $BRK.B down", []storage.TagEntity{tag(0, 5, "AAPL"), tag(10, 16, "BRK.B")}},
		{"($tsla) $aapl.com", []storage.TagEntity{tag(1, 6, "tsla"), tag(8, 13, "aapl")}},
		{"US$100 $TOOLONG $A1 x$AB $$AB $AB_CD $AB_CDE", []storage.TagEntity{tag(30, 36, "AB_CD"), tag(37, 40, "AB")}},
	}
	for _, tt := range tests {
		if got := Extract(tt.text).Cashtags; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Extract(%q).Cashtags\n got %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
}

// TestExtractReferenceExample is the data dictionary's post: offsets are
// code points (the 🧐 before the mention counts one).
func TestExtractReferenceExample(t *testing.T) {
	text := "The new #TwitterAPI includes some improvements to the Tweet payload. You’re probably wondering — " +
		"what are the main differences? 🧐\n\nIn this video, @SuhemParack compares the v1.1 Tweet payload with " +
		"what you’ll find using our v2 endpoints. https://t.co/CjneyMpgCq"
	want := storage.Entities{
		URLs:     []storage.URLEntity{link(237, 260, "https://t.co/CjneyMpgCq", "https://t.co/CjneyMpgCq", "t.co/CjneyMpgCq")},
		Mentions: []storage.MentionEntity{{Start: 146, End: 158, Username: "SuhemParack"}},
		Hashtags: []storage.TagEntity{tag(8, 19, "TwitterAPI")},
	}
	if got := Extract(text); !reflect.DeepEqual(got, want) {
		t.Errorf("Extract\n got %+v\nwant %+v", got, want)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"", "@a #b $C http://x.co/(y)", "👨‍👩‍👧 #️⃣ ＃日本 ＠x www.example.com.", "RT@x e@x.io/p?q=(1)", "\xff#\xfe@a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := []rune(text)
		e := Extract(text)
		inLink := make([]bool, len(r))
		for _, u := range e.URLs {
			got := checkSpan(t, r, u.Start, u.End)
			if got != u.URL || !strings.HasPrefix(strings.ToLower(u.ExpandedURL), "http") {
				t.Fatalf("url %+v: text has %q", u, got)
			}
			for i := u.Start; i < u.End; i++ {
				inLink[i] = true
			}
		}
		for _, m := range e.Mentions {
			checkSigned(t, r, inLink, m.Start, m.End, "@＠", m.Username)
		}
		for _, h := range e.Hashtags {
			checkSigned(t, r, inLink, h.Start, h.End, "#＃", h.Tag)
		}
		for _, c := range e.Cashtags {
			checkSigned(t, r, inLink, c.Start, c.End, "$", c.Tag)
		}
		if n := WeightedLength(text); n < 0 || n > 6*utf8.RuneCountInString(text) { // "t.co" is 4 code points, 23 long
			t.Fatalf("WeightedLength = %d", n)
		}
		if lang := DetectLanguage(text); lang == "" {
			t.Fatal("empty language")
		}
		if once := nfc(text); nfc(once) != once {
			t.Fatalf("nfc not idempotent on %+q", text)
		}
	})
}

func checkSpan(t *testing.T, r []rune, start, end int) string {
	t.Helper()
	if start < 0 || start >= end || end > len(r) {
		t.Fatalf("span [%d, %d) outside %d code points", start, end, len(r))
	}
	return string(r[start:end])
}

func checkSigned(t *testing.T, r []rune, inLink []bool, start, end int, signs, value string) {
	t.Helper()
	got := checkSpan(t, r, start, end)
	if !strings.ContainsRune(signs, r[start]) || string(r[start+1:end]) != value || overlaps(inLink, start, end) {
		t.Fatalf("entity [%d, %d) %q: text has %q", start, end, value, got)
	}
}
