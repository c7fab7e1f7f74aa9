// Package posttext holds the rules of a post's text that both tiers share:
// entity extraction (urls, mentions, hashtags, cashtags), the platform's
// weighted length, language detection, and the normalized terms the search
// operators match. It is a leaf: the standard library and storage records.
package posttext

import "strings"

// NormalizeURL is the form in which url: search terms are stored and
// matched: lower-cased, without the scheme (http://, https://) and without
// trailing slashes.
func NormalizeURL(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, scheme := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(s, scheme); ok {
			s = rest
			break
		}
	}
	return strings.TrimRight(s, "/")
}

// MaxURLTermBytes bounds the length of a url: term. A link weighs 23
// characters whatever its length, so a post may hold one of thousands of
// characters; PostgreSQL refuses a GIN index entry over about 2,700 bytes
// (posts_url_terms), so longer terms are left out. Such a link is then
// found by its host (url:example.com), not by its full form.
const MaxURLTermBytes = 1024

// URLTerms are the url: terms of a post's links: each link's normalized
// form, its host and the host without "www.", each once; terms longer than
// MaxURLTermBytes are left out.
func URLTerms(urls []string) []string {
	var out []string
	add := func(t string) {
		if t != "" && len(t) <= MaxURLTermBytes && !contains(out, t) {
			out = append(out, t)
		}
	}
	for _, u := range urls {
		n := NormalizeURL(u)
		add(n)
		host, _, _ := strings.Cut(n, "/")
		host, _, _ = strings.Cut(host, "?")
		host, _, _ = strings.Cut(host, "#")
		add(host)
		add(strings.TrimPrefix(host, "www."))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
