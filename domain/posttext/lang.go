package posttext

import (
	"strings"
	"unicode"
)

// Und is the language tag of a text whose language is not determined.
const Und = "und"

// scriptGroup is a writing system and the language it implies. Han and
// kana form one group (Chinese or Japanese); Latin, Arabic and Cyrillic
// text is resolved further.
type scriptGroup struct {
	lang   string
	tables []*unicode.RangeTable
	weight int // a CJK or Hangul character carries about as much as three letters
}

const (
	latinGroup    = "latin"
	cjkGroup      = "cjk"
	arabicGroup   = "arabic"
	cyrillicGroup = "cyrillic"
)

var scriptGroups = []scriptGroup{
	{latinGroup, []*unicode.RangeTable{unicode.Latin}, 1},
	{cjkGroup, []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana}, 3},
	{"ko", []*unicode.RangeTable{unicode.Hangul}, 3},
	{arabicGroup, []*unicode.RangeTable{unicode.Arabic}, 1},
	{cyrillicGroup, []*unicode.RangeTable{unicode.Cyrillic}, 1},
	{"he", []*unicode.RangeTable{unicode.Hebrew}, 1},
	{"el", []*unicode.RangeTable{unicode.Greek}, 1},
	{"th", []*unicode.RangeTable{unicode.Thai}, 1},
	{"hi", []*unicode.RangeTable{unicode.Devanagari}, 1},
	{"bn", []*unicode.RangeTable{unicode.Bengali}, 1},
	{"ta", []*unicode.RangeTable{unicode.Tamil}, 1},
	{"te", []*unicode.RangeTable{unicode.Telugu}, 1},
	{"gu", []*unicode.RangeTable{unicode.Gujarati}, 1},
	{"pa", []*unicode.RangeTable{unicode.Gurmukhi}, 1},
	{"kn", []*unicode.RangeTable{unicode.Kannada}, 1},
	{"ml", []*unicode.RangeTable{unicode.Malayalam}, 1},
	{"or", []*unicode.RangeTable{unicode.Oriya}, 1},
	{"si", []*unicode.RangeTable{unicode.Sinhala}, 1},
	{"ka", []*unicode.RangeTable{unicode.Georgian}, 1},
	{"hy", []*unicode.RangeTable{unicode.Armenian}, 1},
	{"km", []*unicode.RangeTable{unicode.Khmer}, 1},
	{"lo", []*unicode.RangeTable{unicode.Lao}, 1},
	{"my", []*unicode.RangeTable{unicode.Myanmar}, 1},
	{"am", []*unicode.RangeTable{unicode.Ethiopic}, 1},
	{"bo", []*unicode.RangeTable{unicode.Tibetan}, 1},
}

const (
	dominantShare  = 0.6 // of all weighted letters, for the leading script
	minLetters     = 3   // of an alphabetic script
	minCJKLetters  = 2   // of Han, kana or Hangul
	minWordScore   = 1.5 // stop-word hits of the leading Latin language
	minWordMargin  = 1.5 // times the runner-up's score
	minWordAdvance = 1.0 // more than the runner-up's score
)

// DetectLanguage guesses the BCP 47 tag of a post's text's language, or
// Und when unsure. Links, mentions, hashtags and cashtags are ignored. A
// non-Latin script decides by itself (with letter checks for Japanese,
// Ukrainian, Serbian, Persian and Urdu); Latin text is scored against
// common-word lists. docs/post-text.md has the method and its limits.
func DetectLanguage(text string) string {
	r := withoutEntities([]rune(nfc(text)))
	counts, letters := countScripts(r)
	g, ok := dominantGroup(counts, letters)
	if !ok {
		return Und
	}
	switch g.lang {
	case latinGroup:
		return latinLanguage(r)
	case cjkGroup:
		return cjkLanguage(r)
	case arabicGroup:
		return arabicLanguage(r)
	case cyrillicGroup:
		return cyrillicLanguage(r)
	}
	return g.lang
}

// withoutEntities blanks out links, mentions, hashtags and cashtags.
func withoutEntities(r []rune) []rune {
	e := extract(r)
	blank := func(start, end int) {
		for i := start; i < end; i++ {
			r[i] = ' '
		}
	}
	for _, u := range e.URLs {
		blank(u.Start, u.End)
	}
	for _, m := range e.Mentions {
		blank(m.Start, m.End)
	}
	for _, t := range append(e.Hashtags, e.Cashtags...) {
		blank(t.Start, t.End)
	}
	return r
}

// countScripts counts the letters of each script group (weighted) and
// the letters in each group (unweighted).
func countScripts(r []rune) (weighted, letters []int) {
	weighted, letters = make([]int, len(scriptGroups)), make([]int, len(scriptGroups))
	for _, c := range r {
		if !unicode.IsLetter(c) {
			continue
		}
		for i, g := range scriptGroups {
			if unicode.In(c, g.tables...) {
				weighted[i] += g.weight
				letters[i]++
				break
			}
		}
	}
	return weighted, letters
}

// dominantGroup is the script group with most of the letters, if it has
// enough of them.
func dominantGroup(weighted, letters []int) (scriptGroup, bool) {
	best, total := 0, 0
	for i, w := range weighted {
		total += w
		if w > weighted[best] {
			best = i
		}
	}
	g := scriptGroups[best]
	min := minLetters
	if g.weight > 1 {
		min = minCJKLetters
	}
	ok := total > 0 && float64(weighted[best]) >= dominantShare*float64(total) && letters[best] >= min
	return g, ok
}

// cjkLanguage: any kana makes Han text Japanese.
func cjkLanguage(r []rune) string {
	for _, c := range r {
		if unicode.In(c, unicode.Hiragana, unicode.Katakana) {
			return "ja"
		}
	}
	return "zh"
}

// arabicLanguage tells Urdu and Persian from Arabic by their own letters.
func arabicLanguage(r []rune) string {
	switch s := string(r); {
	case strings.ContainsAny(s, "ٹڈڑںے"):
		return "ur"
	case strings.ContainsAny(s, "پچژگکی"):
		return "fa"
	}
	return "ar"
}

// cyrillicLanguage tells Ukrainian (і ї є ґ, against ы э ъ ё) and Serbian
// (ђ ј љ њ ћ џ) from Russian.
func cyrillicLanguage(r []rune) string {
	s := strings.ToLower(string(r))
	switch {
	case strings.ContainsAny(s, "ђјљњћџ"):
		return "sr"
	case countAny(s, "іїєґ") > countAny(s, "ыэъё"):
		return "uk"
	}
	return "ru"
}

func countAny(s, chars string) int {
	n := 0
	for _, c := range s {
		if strings.ContainsRune(chars, c) {
			n++
		}
	}
	return n
}

// latinLanguage scores each language by its common words in the text (a
// word listed for k languages gives each 1/k) and its own letters (one
// point per word holding one), and takes the leader if it leads clearly.
func latinLanguage(r []rune) string {
	scores := map[string]float64{}
	for _, w := range latinWords(r) {
		langs := wordLanguages[w]
		for _, l := range langs {
			scores[l] += 1 / float64(len(langs))
		}
		for _, m := range letterMarkers {
			if strings.ContainsAny(w, m.letters) {
				scores[m.lang]++
			}
		}
	}
	scores["es"] += float64(countAny(string(r), "¿¡"))
	return leader(scores)
}

// latinWords are the lower-cased runs of letters and marks; apostrophes
// split words (c'est -> c, est).
func latinWords(r []rune) []string {
	return strings.FieldsFunc(strings.ToLower(string(r)), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsMark(c)
	})
}

func leader(scores map[string]float64) string {
	first, second := Und, 0.0
	for _, l := range latinLanguages {
		switch s := scores[l]; {
		case first == Und || s > scores[first]:
			first, second = l, max(second, scores[first])
		case s > second:
			second = s
		}
	}
	top := scores[first]
	if top < minWordScore || top < minWordMargin*second || top-second < minWordAdvance {
		return Und
	}
	return first
}
