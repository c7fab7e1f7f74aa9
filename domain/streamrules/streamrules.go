// Package streamrules is the filtered stream's rule language: the search
// query language (domain/searchquery) with the stream's own constraints
// (Check), and the matcher that decides which rules a new post satisfies
// (Set). See docs/streams-rules.md.
package streamrules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/domain/posttext"
	sq "github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Set is a compiled set of rules of any number of apps. It is read-only
// once built, so any number of goroutines may call Match at once.
type Set struct {
	rules []compiled
}

type compiled struct {
	appID, id int64
	tag       string
	m         matcher
}

// NewSet compiles rules; a rule whose value does not parse is left out
// (Check refused it when it was added; the length is not checked again).
func NewSet(rules []storage.StreamRule) *Set {
	s := &Set{rules: make([]compiled, 0, len(rules))}
	for _, r := range rules {
		q, err := parse(r.Value, 0)
		if err != nil {
			continue
		}
		s.rules = append(s.rules, compiled{appID: r.AppID, id: r.ID, tag: r.Tag, m: compile(q.Root)})
	}
	slices.SortFunc(s.rules, func(a, b compiled) int {
		return cmp.Or(cmp.Compare(a.appID, b.appID), cmp.Compare(a.id, b.id))
	})
	return s
}

// Len is how many rules the set holds.
func (s *Set) Len() int { return len(s.rules) }

// Match returns the rules p satisfies, ordered by app then rule id; nil
// when none.
func (s *Set) Match(p events.Post) []events.RuleHit {
	if s == nil || len(s.rules) == 0 {
		return nil
	}
	v := newView(p)
	var hits []events.RuleHit
	for i := range s.rules {
		r := &s.rules[i]
		if r.m.match(v) {
			hits = append(hits, events.RuleHit{AppID: r.appID, RuleID: r.id, Tag: r.tag})
		}
	}
	return hits
}

// MatchEvent is the Match of a post.create event whose post satisfies a
// rule of the set; false for other events and for posts no rule matches.
// An error says the payload does not decode (the event stays unmatched).
// The dispatcher's matcher and the stream's catch-up and backfill share it.
func (s *Set) MatchEvent(ev events.Event) (events.Match, bool, error) {
	if ev.Type != events.PostCreate {
		return events.Match{}, false, nil
	}
	var p events.Post
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return events.Match{}, false, fmt.Errorf("post.create event %d: %w", ev.Seq, err)
	}
	if p.ID == 0 {
		p.ID = ev.SubjectID
	}
	hits := s.Match(p)
	if len(hits) == 0 {
		return events.Match{}, false, nil
	}
	return events.Match{Seq: ev.Seq, PostID: p.ID, Rules: hits}, true, nil
}

// view is a post as the matchers read it: its text's tokens and its
// entity terms, normalized once per post. A quote is read with the quoted
// post's content too (the platform's stream matches a quote on both):
// terms and phrases match either text (a phrase never spans the two), the
// entity operators either post's entities.
type view struct {
	p        *events.Post
	texts    []text // the post's, then the quoted post's
	author   string
	replyTo  string
	mentions []string
	hashtags []string
	cashtags []string
	urlTerms []string
}

// text is one text's tokens, indexed.
type text struct {
	tokens []string
	at     map[string][]int // token -> its positions in tokens
}

func newText(s string) text {
	t := text{tokens: Tokens(s)}
	t.at = make(map[string][]int, len(t.tokens))
	for i, w := range t.tokens {
		t.at[w] = append(t.at[w], i)
	}
	return t
}

func newView(p events.Post) *view {
	v := &view{p: &p, texts: []text{newText(p.Text)}, author: strings.ToLower(p.AuthorUsername), replyTo: strings.ToLower(p.InReplyToUsername)}
	v.mentions = normalizeAll(p.Mentions)
	v.hashtags = normalizeAll(p.Hashtags)
	v.cashtags = normalizeAll(p.Cashtags)
	v.urlTerms = p.URLTerms
	if q := p.Quoted; q != nil {
		v.texts = append(v.texts, newText(q.Text))
		v.mentions = append(v.mentions, normalizeAll(q.Mentions)...)
		v.hashtags = append(v.hashtags, normalizeAll(q.Hashtags)...)
		v.cashtags = append(v.cashtags, normalizeAll(q.Cashtags)...)
		v.urlTerms = append(slices.Clip(v.urlTerms), q.URLTerms...)
	}
	return v
}

// normalizeAll applies posttext.NormalizeTag to terms that the payload
// should already hold normalized, so a payload written otherwise still
// matches.
func normalizeAll(terms []string) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = posttext.NormalizeTag(t)
	}
	return out
}

// phrase reports whether the tokens ws occur one after the other in one
// of the view's texts.
func (v *view) phrase(ws []string) bool {
	for _, t := range v.texts {
		if t.phrase(ws) {
			return true
		}
	}
	return false
}

func (t text) phrase(ws []string) bool {
	if len(ws) == 0 {
		return false
	}
	for _, start := range t.at[ws[0]] {
		if start+len(ws) > len(t.tokens) {
			return false // positions grow
		}
		ok := true
		for k := 1; k < len(ws); k++ {
			if t.tokens[start+k] != ws[k] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// matcher is one compiled node of a rule.
type matcher interface{ match(v *view) bool }

type (
	andM    []matcher
	orM     []matcher
	notM    struct{ m matcher }
	phraseM []string // a term or a phrase: its tokens in order
	predM   func(v *view) bool
	neverM  struct{}
)

func (m andM) match(v *view) bool {
	for _, c := range m {
		if !c.match(v) {
			return false
		}
	}
	return true
}

func (m orM) match(v *view) bool {
	for _, c := range m {
		if c.match(v) {
			return true
		}
	}
	return false
}

func (m notM) match(v *view) bool    { return !m.m.match(v) }
func (m phraseM) match(v *view) bool { return v.phrase(m) }
func (m predM) match(v *view) bool   { return m(v) }
func (neverM) match(*view) bool      { return false }

// compile turns a checked tree into matchers. Clauses that can be decided
// cheaply come first in an AND, so the token lookups of the others are
// often skipped.
func compile(n sq.Node) matcher {
	switch n := n.(type) {
	case *sq.And:
		out := make(andM, 0, len(n.Children))
		for _, c := range n.Children {
			out = append(out, compile(c))
		}
		slices.SortStableFunc(out, func(a, b matcher) int { return cmp.Compare(cost(a), cost(b)) })
		return out
	case *sq.Or:
		out := make(orM, 0, len(n.Children))
		for _, c := range n.Children {
			out = append(out, compile(c))
		}
		return out
	case *sq.Not:
		return notM{compile(n.Child)}
	case *sq.Term:
		return words(n.Text)
	case *sq.Phrase:
		return words(n.Text)
	case *sq.Operator:
		return operator(n)
	}
	return neverM{}
}

// cost orders the clauses of an AND: operators on the post's fields
// first, then text, then groups.
func cost(m matcher) int {
	switch m.(type) {
	case predM, neverM:
		return 0
	case phraseM:
		return 1
	case notM:
		return 2
	}
	return 3
}

// words is the matcher of a term or phrase: its tokens, consecutive; a
// text with no token matches nothing, as in search.
func words(text string) matcher {
	ws := Tokens(text)
	if len(ws) == 0 {
		return neverM{}
	}
	return phraseM(ws)
}

func operator(o *sq.Operator) matcher {
	switch o.Name {
	case sq.OpFrom:
		name := strings.ToLower(o.Value)
		return predM(func(v *view) bool { return v.author == name })
	case sq.OpTo:
		name := strings.ToLower(o.Value)
		return predM(func(v *view) bool { return v.replyTo == name })
	case sq.OpMention:
		return hasTerm(posttext.NormalizeTag(o.Value), func(v *view) []string { return v.mentions })
	case sq.OpHashtag:
		return hasTerm(posttext.NormalizeTag(o.Value), func(v *view) []string { return v.hashtags })
	case sq.OpCashtag:
		return hasTerm(posttext.NormalizeTag(o.Value), func(v *view) []string { return v.cashtags })
	case sq.OpURL:
		u := posttext.NormalizeURL(o.Value)
		if u == "" {
			return neverM{}
		}
		return hasTerm(u, func(v *view) []string { return v.urlTerms })
	case sq.OpLang:
		lang := o.Value
		return predM(func(v *view) bool { return v.p.Lang == lang })
	case sq.OpConversationID:
		id := o.Number
		return predM(func(v *view) bool { return v.p.ConversationID == id })
	case sq.OpIs:
		return isOperator(o.Value)
	case sq.OpHas:
		return hasOperator(o.Value)
	case sq.OpInReplyToTweetID:
		id := o.Number
		return predM(func(v *view) bool { return v.p.InReplyToPostID == id })
	case sq.OpRetweetsOfTweetID:
		id := o.Number
		return predM(func(v *view) bool { return v.p.RepostOfID == id })
	case sq.OpRetweetsOf:
		name := strings.ToLower(o.Value)
		return predM(func(v *view) bool { return v.p.RepostOfID != 0 && strings.EqualFold(v.p.RepostOfUsername, name) })
	case sq.OpSample:
		percent := uint64(o.Number)
		return predM(func(v *view) bool { return sampleBucket(v.p.ID) < percent })
	case sq.OpSource:
		name := o.Value
		return predM(func(v *view) bool { return v.p.Source != "" && strings.EqualFold(v.p.Source, name) })
	case sq.OpURLContains:
		return urlContains(o.Value)
	case sq.OpPlace:
		id := o.Value
		return predM(func(v *view) bool { return v.p.PlaceID != "" && strings.EqualFold(v.p.PlaceID, id) })
	}
	return neverM{} // operators the stream lacks: Check refuses them
}

func hasTerm(term string, of func(v *view) []string) matcher {
	return predM(func(v *view) bool { return slices.Contains(of(v), term) })
}

func isOperator(value string) matcher {
	switch value {
	case sq.IsReply:
		return predM(func(v *view) bool { return v.p.InReplyToPostID != 0 })
	case sq.IsQuote:
		return predM(func(v *view) bool { return v.p.QuoteOfID != 0 })
	case sq.IsRetweet:
		return predM(func(v *view) bool { return v.p.RepostOfID != 0 })
	case sq.IsVerified:
		return predM(func(v *view) bool { return v.p.AuthorVerified })
	case sq.IsNullcast:
		return neverM{} // Aviary has no nullcast (promoted-only) posts
	}
	return neverM{}
}

func hasOperator(value string) matcher {
	switch value {
	case sq.HasMedia:
		return predM(func(v *view) bool { return v.p.MediaCount > 0 })
	case sq.HasLinks:
		return predM(func(v *view) bool { return len(v.p.URLTerms) > 0 })
	case sq.HasMentions:
		return predM(func(v *view) bool { return len(v.p.Mentions) > 0 })
	case sq.HasHashtags:
		return predM(func(v *view) bool { return len(v.p.Hashtags) > 0 })
	case sq.HasCashtags:
		return predM(func(v *view) bool { return len(v.p.Cashtags) > 0 })
	case sq.HasImages:
		return predM(func(v *view) bool { return slices.Contains(v.p.MediaKinds, "photo") })
	case sq.HasVideoLink:
		return predM(func(v *view) bool { return slices.Contains(v.p.MediaKinds, "video") })
	case sq.HasGeo:
		return predM(func(v *view) bool { return v.p.PlaceID != "" })
	}
	return neverM{}
}

// urlContains matches a post one of whose url: terms (the post's or the
// quoted post's) holds value, any case: the platform's literal match on a
// URL's content.
func urlContains(value string) matcher {
	part := strings.ToLower(value)
	return predM(func(v *view) bool {
		for _, t := range v.urlTerms {
			if strings.Contains(strings.ToLower(t), part) {
				return true
			}
		}
		return false
	})
}

// sampleBucket is post id's bucket, 0 to 99, for sample:N (bucket < N):
// a fixed mix of the id, so a rule's sample is deterministic and the
// samples of N and M > N nest.
func sampleBucket(id int64) uint64 {
	x := uint64(id)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x % 100
}
