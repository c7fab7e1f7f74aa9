package posttext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeywordRunes bounds a keyword term: longer runs of letters (a
// sentence of a script written without spaces, say) are no term.
const MaxKeywordRunes = 64

// KeywordTerms are the terms keyword insights count a post under
// (docs/insights.md), each once, in text order: every word (a run of
// letters, digits and marks outside links and mentions, of 2 to
// MaxKeywordRunes code points, lower-cased and NFC-normalized), every
// hashtag as "#tag" and cashtag as "$tag" followed by its word form (so
// "tech" counts "#tech" as search does), and every mention as "@name".
func KeywordTerms(text string) []string {
	r := []rune(text)
	e := extract(r)
	skip := linkMask(len(r), e.URLs)
	terms := make([]string, 0, 16)
	add := func(t string) {
		if t != "" && !contains(terms, t) {
			terms = append(terms, t)
		}
	}
	type span struct {
		start, end int
		terms      []string
	}
	var spans []span
	for _, m := range e.Mentions {
		spans = append(spans, span{m.Start, m.End, []string{"@" + NormalizeTag(m.Username)}})
	}
	for _, h := range e.Hashtags {
		spans = append(spans, span{h.Start, h.End, tagTerms("#", h.Tag)})
	}
	for _, c := range e.Cashtags {
		spans = append(spans, span{c.Start, c.End, tagTerms("$", c.Tag)})
	}
	entityAt := make(map[int]span, len(spans))
	for _, s := range spans {
		entityAt[s.start] = s
		for i := s.start; i < s.end; i++ {
			skip[i] = true
		}
	}
	for i := 0; i < len(r); {
		if s, ok := entityAt[i]; ok {
			for _, t := range s.terms {
				add(t)
			}
			i = s.end
			continue
		}
		if skip[i] || !isTermRune(r[i]) {
			i++
			continue
		}
		j := i
		for j < len(r) && !skip[j] && isTermRune(r[j]) {
			j++
		}
		add(wordTerm(r[i:j]))
		i = j
	}
	return terms
}

// NormalizeKeyword is the term a keyword insights query names for keyword
// (a word, "#hashtag", "$cashtag" or "@mention", matched as KeywordTerms
// counts them), or false if keyword is not one such term. Every term
// KeywordTerms counts is a keyword that normalizes to itself.
func NormalizeKeyword(keyword string) (string, bool) {
	k := strings.TrimSpace(keyword)
	sign := ""
	if k != "" && strings.ContainsRune("#$@", rune(k[0])) {
		sign, k = k[:1], k[1:]
	}
	r := []rune(strings.ToLower(nfc(k)))
	if len(r) == 0 || len(r) > MaxKeywordRunes {
		return "", false
	}
	for _, c := range r {
		// '_' joins the words of a tag, whose word form is a term too.
		if !isTermRune(c) && c != '_' {
			return "", false
		}
	}
	if sign == "" && len(r) < 2 {
		return "", false
	}
	return sign + string(r), true
}

// IsStopword reports whether term is a function word (English or Spanish)
// too common to tell anything: it is counted, but never offered as a
// related keyword nor paired.
func IsStopword(term string) bool {
	_, ok := stopwords[term]
	return ok
}

// wordTerm is the term of a run of word runes (lower-cased, NFC), or ""
// when it is no term: shorter than 2 or longer than MaxKeywordRunes code
// points once normalized, as NormalizeKeyword measures.
func wordTerm(r []rune) string {
	t := strings.ToLower(nfc(string(r)))
	if n := utf8.RuneCountInString(t); n < 2 || n > MaxKeywordRunes {
		return ""
	}
	return t
}

// tagTerms are the terms of a hashtag or cashtag: sign + tag and the tag's
// word form, none when the tag is longer than MaxKeywordRunes.
func tagTerms(sign, tag string) []string {
	t := NormalizeTag(tag)
	if n := utf8.RuneCountInString(t); n == 0 || n > MaxKeywordRunes {
		return nil
	}
	return []string{sign + t, wordTerm([]rune(t))}
}

func isTermRune(c rune) bool { return isWordRune(c) || unicode.IsMark(c) }

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from
		had has have he her here him his how i if in into is it its just me more my no not now of on
		one or our out she so some than that the their them then there these they this to too up us
		very was we were what when where which who why will with would you your rt amp via
		al con de del el en es la las lo los más mas para pero por que se sin su sus un una uno y ya`) {
		m[w] = struct{}{}
	}
	return m
}()
