package posttext

import (
	"strings"
	"unicode"

	"github.com/aviary-dev/aviary/storage"
)

// displayPathLength is how much of a link after its host the platform
// shows in display_url before an ellipsis.
const displayPathLength = 15

type linkKind int

const (
	noLink     linkKind = iota
	withScheme          // http:// or https://
	withWWW             // www. and no scheme
	bare                // a bare domain with a known top-level domain
)

func extractURLs(r []rune) []storage.URLEntity {
	var out []storage.URLEntity
	for i := 0; i < len(r); i++ {
		if end, ok := urlAt(r, i); ok {
			out = append(out, newURLEntity(r, i, end))
			i = end - 1
		}
	}
	return out
}

// urlAt matches a link starting at r[i] and returns its end.
func urlAt(r []rune, i int) (int, bool) {
	kind, hostStart := linkStart(r, i)
	if kind == noLink {
		return 0, false
	}
	hostEnd := hostEnd(r, hostStart, kind)
	labels := strings.Split(string(r[hostStart:hostEnd]), ".")
	if !validHost(labels, kind) {
		return 0, false
	}
	end := portEnd(r, hostEnd)
	if !strings.ContainsRune("/?#", at(r, end)) {
		// No path: "example.com@x" is no link.
		return end, !isAtSign(at(r, end)) && (kind != bare || !shortCCTLD(labels))
	}
	pathEnd := trimURLTail(r, end, pathEnd(r, end))
	if kind == bare && shortCCTLD(labels) && (pathEnd == end || r[end] != '/') {
		return 0, false
	}
	return pathEnd, true
}

// linkStart classifies a link candidate at r[i] and returns where its host
// starts. A link never follows an ASCII letter or digit, @, $ or #; one
// without a scheme does not follow any letter or digit, '.', '-', '_' or '/'.
func linkStart(r []rune, i int) (linkKind, int) {
	p := at(r, i-1)
	if isASCIIAlnum(p) || strings.ContainsRune("@＠$#＃", p) {
		return noLink, 0
	}
	for _, scheme := range []string{"https://", "http://"} {
		if hasPrefixFold(r, i, scheme) {
			return withScheme, i + len(scheme)
		}
	}
	if isWordRune(p) || strings.ContainsRune(".-_/", p) || !isASCIIAlnum(r[i]) {
		return noLink, 0
	}
	if hasPrefixFold(r, i, "www.") {
		return withWWW, i
	}
	return bare, i
}

// hostEnd is the end of the host: letters, digits, '-', '_' and '.'
// (ASCII only for bare domains), without trailing dots or dashes, and
// without what follows an ASCII top-level domain in another script.
func hostEnd(r []rune, start int, kind linkKind) int {
	end := start
	for end < len(r) && isHostRune(r[end], kind) {
		end++
	}
	return trimHost(r, start, cutMixedTLD(r, start, end))
}

func trimHost(r []rune, start, end int) int {
	for end > start && strings.ContainsRune(".-_", r[end-1]) {
		end--
	}
	return end
}

// cutMixedTLD ends the host where a top-level domain that starts in ASCII
// turns into other letters: "example.comをご覧ください" has host
// "example.com" (text often runs on without a space after a link).
func cutMixedTLD(r []rune, start, end int) int {
	end = trimHost(r, start, end)
	tld := end
	for tld > start && r[tld-1] != '.' {
		tld--
	}
	if tld == end || !isASCIIAlnum(r[tld]) {
		return end
	}
	for i := tld; i < end; i++ {
		if r[i] >= 0x80 {
			return i
		}
	}
	return end
}

func isHostRune(c rune, kind linkKind) bool {
	if isASCIIAlnum(c) || c == '-' || c == '_' || c == '.' {
		return true
	}
	return kind != bare && (isWordRune(c) || unicode.IsMark(c))
}

// validHost: at least two labels (three with www.), none empty or with a
// leading or trailing '-', and a top-level domain that is letters only
// (or punycode) after a scheme or www., a known one for bare domains.
func validHost(labels []string, kind linkKind) bool {
	if len(labels) < 2 || kind == withWWW && len(labels) < 3 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	tld := strings.ToLower(labels[len(labels)-1])
	if kind == bare {
		return genericTLDs[tld] || countryTLDs[tld]
	}
	return strings.HasPrefix(tld, "xn--") || len([]rune(tld)) >= 2 && strings.IndexFunc(tld, isNotLetterOrMark) < 0
}

func isNotLetterOrMark(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsMark(c) }

// shortCCTLD: a bare name.cc without a /path ("readme.md", "main.rs") is
// not linked; t.co is.
func shortCCTLD(labels []string) bool {
	tld := strings.ToLower(labels[len(labels)-1])
	return len(labels) == 2 && countryTLDs[tld] && !genericTLDs[tld] && strings.ToLower(labels[0]) != "t"
}

// portEnd includes ":1234" after the host.
func portEnd(r []rune, end int) int {
	if at(r, end) != ':' {
		return end
	}
	i := end + 1
	for i < len(r) && i-end <= 5 && r[i] >= '0' && r[i] <= '9' {
		i++
	}
	if i == end+1 || isWordRune(at(r, i)) {
		return end
	}
	return i
}

func pathEnd(r []rune, start int) int {
	end := start
	for end < len(r) && isURLRune(r[end]) {
		end++
	}
	return end
}

// isURLRune: what a path, query or fragment may hold (Latin and Cyrillic
// letters included, as the platform does).
func isURLRune(c rune) bool {
	if c < 0x80 {
		return isASCIIAlnum(c) || strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%|", c)
	}
	return unicode.In(c, unicode.Latin, unicode.Cyrillic) || unicode.IsMark(c)
}

// trimURLTail drops trailing punctuation: a link ends with a letter,
// digit, / = _ # + - &, or a ')' that closes a '(' of the link.
func trimURLTail(r []rune, start, end int) int {
	depth := parenDepth(r[start:end])
	for end > start {
		c := r[end-1]
		if c == ')' && depth >= 0 || c != ')' && (isWordRune(c) || strings.ContainsRune("/=_#+-&", c)) {
			break
		}
		depth -= parenDepth(r[end-1 : end])
		end--
	}
	return end
}

// parenDepth counts the '(' not closed in path (negative: unopened ')').
func parenDepth(path []rune) int {
	depth := 0
	for _, c := range path {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return depth
}

func newURLEntity(r []rune, start, end int) storage.URLEntity {
	written := string(r[start:end])
	expanded := written
	if !hasPrefixFold(r, start, "http://") && !hasPrefixFold(r, start, "https://") {
		expanded = "http://" + written
	}
	return storage.URLEntity{Start: start, End: end, URL: written, ExpandedURL: expanded, DisplayURL: displayURL(written)}
}

// displayURL is how the platform shows a link: without the scheme and
// "www.", the host in full, then at most 15 code points of the rest
// followed by "…" when there is more. A bare "/" path is dropped.
func displayURL(u string) string {
	for _, p := range []string{"https://", "http://", "www."} {
		if len(u) >= len(p) && strings.EqualFold(u[:len(p)], p) {
			u = u[len(p):]
		}
	}
	host, rest := u, ""
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		host, rest = u[:i], u[i:]
	}
	if rest == "/" {
		return host
	}
	if rr := []rune(rest); len(rr) > displayPathLength {
		rest = string(rr[:displayPathLength]) + "…"
	}
	return host + rest
}

// genericTLDs are the generic top-level domains a bare domain may end with.
var genericTLDs = wordSet(`com net org edu gov mil int info biz name pro aero coop museum mobi
	asia tel travel jobs cat app dev blog news shop store online site website tech xyz club live
	art page cloud link space today world email studio design media social wiki top vip life fun
	network systems group agency digital solutions company video music games academy`)

// countryTLDs are the two-letter country-code top-level domains.
var countryTLDs = wordSet(`ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg
	bh bi bj bm bn bo br bs bt bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz
	de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga gd ge gf gg gh gi gl gm gn gp gq
	gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km
	kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr
	ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr
	ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz
	tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws
	ye yt za zm zw`)

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(s) {
		set[w] = true
	}
	return set
}
