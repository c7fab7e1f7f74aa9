package news

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
)

// Limits of a story's text.
const (
	// MaxNameRunes bounds a story's name.
	MaxNameRunes = 100
	// maxExcerptRunes bounds the top post's excerpt in the summary.
	maxExcerptRunes = 200
	// maxSummaryTerms bounds the terms the summary names.
	maxSummaryTerms = 5
	// maxContextItems bounds every contexts list.
	maxContextItems = 10
	// minSentenceRunes: a first sentence shorter than this is no headline;
	// the name takes more of the post.
	minSentenceRunes = 20
)

// cluster is one story being built: its lead term and the spiking terms
// that joined it (strongest first, the lead at 0), and the lead's recent
// posts (newest first).
type cluster struct {
	lead  storage.SpikingTerm
	terms []storage.SpikingTerm
	posts []storage.Post
	share float64
	// postTerms are the KeywordTerms of each post, filled by group.
	postTerms []map[string]bool
}

// group adds to c the spiking terms of candidates (strongest first) not
// used by a stronger story that appear in at least c.share of c's posts,
// up to maxTerms terms in all.
func (c *cluster) group(candidates []storage.SpikingTerm, used map[string]bool, maxTerms int) {
	c.postTerms = make([]map[string]bool, len(c.posts))
	for i, p := range c.posts {
		set := map[string]bool{}
		for _, t := range posttext.KeywordTerms(p.Text) {
			set[t] = true
		}
		c.postTerms[i] = set
	}
	need := c.need()
	for _, s := range candidates {
		if len(c.terms) >= maxTerms {
			return
		}
		if used[s.Term] || s.Term == c.lead.Term {
			continue
		}
		n := 0
		for _, set := range c.postTerms {
			if set[s.Term] {
				n++
			}
		}
		if n >= need {
			c.terms = append(c.terms, s)
		}
	}
}

// need is how many of c's posts a term or entity must appear in to count
// as part of the story: c.share of them, at least one.
func (c *cluster) need() int {
	return max(1, int(math.Ceil(c.share*float64(len(c.posts))-1e-9)))
}

// engagement is a post's likes, reposts, replies and quotes.
func engagement(p storage.Post) int64 {
	return p.Metrics.Likes + p.Metrics.Reposts + p.Metrics.Replies + p.Metrics.Quotes
}

// ranked are c's posts, the most engaged first, then the newest.
func (c *cluster) ranked() []storage.Post {
	out := slices.Clone(c.posts)
	slices.SortStableFunc(out, func(a, b storage.Post) int {
		return cmp.Or(cmp.Compare(engagement(b), engagement(a)), b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out
}

// story builds the record of c.
func (c *cluster) story() storage.NewsStory {
	ranked := c.ranked()
	top := ranked[0]
	ids := make([]int64, 0, storage.NewsClusterResults)
	for _, p := range ranked[:min(len(ranked), storage.NewsClusterResults)] {
		ids = append(ids, p.ID)
	}
	forms := c.spellings()
	display := func(term string) string { return displayTerm(term, forms) }
	label := capitalize(display(c.lead.Term))
	for _, t := range c.terms {
		if strings.HasPrefix(t.Term, "#") {
			label = display(t.Term)
			break
		}
	}
	keywords := make([]string, len(c.terms))
	for i, t := range c.terms {
		keywords[i] = t.Term
	}
	text := cleanText(top)
	sources := make([]int64, len(c.posts))
	var authors []int64
	for i, p := range c.posts {
		sources[i] = p.ID
		if !slices.Contains(authors, p.AuthorID) {
			authors = append(authors, p.AuthorID)
		}
	}
	return storage.NewsStory{
		LeadTerm: c.lead.Term,
		Keywords: keywords,
		Name:     name(label, text),
		Summary:  c.summary(display, top, text),
		Hook:     c.hook(label),
		Category: storage.NewsCategory,
		Contexts: c.contexts(forms),
		PostIDs:  ids,
		Posts:    c.total(),
		// Every post read is a source: the name and summary quote one,
		// contexts, keywords and spellings count them all.
		Sources:       sources,
		SourceAuthors: authors,
		Lead:          c.lead,
	}
}

// total is how many posts the story covers: the lead term's posts of the
// last 24 hours by the aggregates, at least the posts read.
func (c *cluster) total() int { return max(c.lead.Day, len(c.posts)) }

// summary says how many posts in which window, the main terms, the
// spike, and an excerpt of the most engaged post.
func (c *cluster) summary(display func(string) string, top storage.Post, text string) string {
	var names []string
	for _, t := range c.terms[:min(len(c.terms), maxSummaryTerms)] {
		names = append(names, display(t.Term))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in the last 24 hours mention %s; %s in the last hour", plural(c.total(), "post"), list(names),
		count(c.lead.LastHour))
	if c.lead.Baseline < 0.5 {
		b.WriteString(", where the day before had almost none.")
	} else {
		fmt.Fprintf(&b, ", against about %s an hour the day before.", count(c.lead.Baseline))
	}
	switch {
	case text == "":
	case engagement(top) == 0: // none engaged yet: the top post is the newest
		fmt.Fprintf(&b, " The latest post reads: “%s”", truncate(text, maxExcerptRunes))
	default:
		fmt.Fprintf(&b, " The most engaged post (%s) reads: “%s”", plural(int(engagement(top)), "interaction"),
			truncate(text, maxExcerptRunes))
	}
	return b.String()
}

// hook is the one-line teaser: the spike against the usual rate.
func (c *cluster) hook(label string) string {
	last := count(c.lead.LastHour)
	if c.lead.Baseline < 0.5 {
		return fmt.Sprintf("%s is suddenly everywhere: %s posts in the last hour, after almost none the day before.", label, last)
	}
	return fmt.Sprintf("%s is spiking: %s posts in the last hour, %s× its usual rate.", label, last, count(c.lead.Ratio()))
}

// spellings are the spellings the posts use for each tag term ("#tag",
// "$tag", "@name"), the most frequent first.
type spellings map[string][]string

func (c *cluster) spellings() spellings {
	counts := map[string]map[string]int{}
	add := func(term, form string) {
		if counts[term] == nil {
			counts[term] = map[string]int{}
		}
		counts[term][form]++
	}
	for _, p := range c.posts {
		for _, h := range p.Entities.Hashtags {
			add("#"+posttext.NormalizeTag(h.Tag), h.Tag)
		}
		for _, t := range p.Entities.Cashtags {
			add("$"+posttext.NormalizeTag(t.Tag), strings.ToUpper(t.Tag))
		}
		for _, m := range p.Entities.Mentions {
			add("@"+posttext.NormalizeTag(m.Username), m.Username)
		}
	}
	out := spellings{}
	for term, byForm := range counts {
		list := make([]string, 0, len(byForm))
		for f := range byForm {
			list = append(list, f)
		}
		slices.SortFunc(list, func(a, b string) int { return cmp.Or(cmp.Compare(byForm[b], byForm[a]), cmp.Compare(a, b)) })
		out[term] = list
	}
	return out
}

// displayTerm is how a story shows term: a tag in the posts' most frequent
// spelling ("#Quake", "$NBIS", "@RescueTeam"), a word as is.
func displayTerm(term string, f spellings) string {
	if term == "" {
		return term
	}
	if forms := f[term]; len(forms) > 0 {
		return term[:1] + forms[0]
	}
	if term[0] == '$' {
		return strings.ToUpper(term)
	}
	return term
}

// contexts are the story's topics (hashtags), people (mentioned
// usernames) and tickers (cashtags) that appear in at least the cluster's
// share of its posts, the most frequent first.
func (c *cluster) contexts(f spellings) storage.NewsContexts {
	need := c.need()
	counts := map[string]int{}
	for _, p := range c.posts {
		seen := map[string]bool{}
		for _, h := range p.Entities.Hashtags {
			seen["#"+posttext.NormalizeTag(h.Tag)] = true
		}
		for _, t := range p.Entities.Cashtags {
			seen["$"+posttext.NormalizeTag(t.Tag)] = true
		}
		for _, m := range p.Entities.Mentions {
			seen["@"+posttext.NormalizeTag(m.Username)] = true
		}
		for term := range seen {
			counts[term]++
		}
	}
	var terms []string
	for term, n := range counts {
		if n >= need {
			terms = append(terms, term)
		}
	}
	slices.SortFunc(terms, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	var ctx storage.NewsContexts
	for _, term := range terms {
		shown := displayTerm(term, f)[1:]
		switch term[0] {
		case '#':
			ctx.Topics = appendBounded(ctx.Topics, shown)
		case '$':
			ctx.Finance.Tickers = appendBounded(ctx.Finance.Tickers, strings.ToUpper(shown))
		case '@':
			ctx.Entities.People = appendBounded(ctx.Entities.People, shown)
		}
	}
	return ctx.Normalized()
}

func appendBounded(list []string, v string) []string {
	if len(list) >= maxContextItems {
		return list
	}
	return append(list, v)
}

// cleanText is a post's text for headlines: links removed, leading
// mentions (a reply's addressees) removed, white space collapsed.
func cleanText(p storage.Post) string {
	r := []rune(p.Text)
	drop := make([]bool, len(r))
	for _, u := range p.Entities.URLs {
		for i := max(u.Start, 0); i < min(u.End, len(r)); i++ {
			drop[i] = true
		}
	}
	var b strings.Builder
	for i, c := range r {
		if !drop[i] {
			b.WriteRune(c)
		}
	}
	words := strings.Fields(b.String())
	lead := 0
	for lead < len(words) && strings.HasPrefix(words[lead], "@") {
		lead++
	}
	if lead < len(words) {
		words = words[lead:]
	}
	return strings.Join(words, " ")
}

// name is the story's headline: the top post's first sentence, after the
// label unless the sentence names it already, at most MaxNameRunes,
// starting with a capital.
func name(label, text string) string {
	sentence := firstSentence(text)
	switch {
	case sentence == "":
		return truncate("Posts about "+label, MaxNameRunes)
	case strings.Contains(strings.ToLower(sentence), strings.ToLower(strings.TrimLeft(label, "#$@"))):
		return capitalize(truncate(sentence, MaxNameRunes))
	}
	return truncate(label+": "+sentence, MaxNameRunes)
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(c) {
		return s
	}
	return string(unicode.ToUpper(c)) + s[n:]
}

// firstSentence is text up to the end of its first sentence (., ! or ?
// followed by a space, or a line break) that is at least minSentenceRunes
// long; all of text when there is none.
func firstSentence(text string) string {
	r := []rune(text)
	for i := minSentenceRunes - 1; i < len(r)-1; i++ {
		if strings.ContainsRune(".!?", r[i]) && unicode.IsSpace(r[i+1]) {
			return string(r[:i+1])
		}
	}
	return text
}

// truncate cuts s to at most n runes, at a word boundary when there is one
// in its second half, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	if cut := strings.LastIndexFunc(string(r), unicode.IsSpace); cut > len(string(r))/2 {
		return strings.TrimRightFunc(string(r)[:cut], func(c rune) bool { return unicode.IsSpace(c) || unicode.IsPunct(c) }) + "…"
	}
	return string(r) + "…"
}

// list joins names as prose: "a", "a and b", "a, b and c".
func list(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// count renders an estimate: whole numbers from 10 on, one decimal below.
func count(v float64) string {
	if v >= 10 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", math.Round(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
