// Package searchquery is the query language of post search and counts
// (docs/search.md): it parses a query into a tree that storage/postgres
// compiles to SQL. It is a leaf: the standard library only.
//
// A query is made of clauses: terms (bare words), "quoted phrases" and
// operators (from:jack, @jack, #tag, $tag, url:..., lang:en,
// conversation_id:1, is:reply, has:media, min_likes:10, ...). Clauses side
// by side must all match (AND); OR (uppercase) separates alternatives and
// binds looser than AND, so "a b OR c" is "(a b) OR c"; parentheses group;
// a leading "-" negates the term, phrase, operator or group it precedes.
package searchquery

import (
	"fmt"
	"strings"
)

// Limits of a query, so that a hostile one cannot cost much to parse or to
// compile to SQL.
const (
	// MaxDepth is how deeply parentheses may nest.
	MaxDepth = 32
	// MaxClauses is how many terms, phrases and operators a query may hold.
	MaxClauses = 64
)

// Operator names (Operator.Name). The entity operators are named by their
// sign; the others by the word before the colon.
const (
	OpFrom           = "from"            // Value: a username, as written
	OpTo             = "to"              // Value: a username, as written
	OpMention        = "@"               // Value: a username, lower-cased
	OpHashtag        = "#"               // Value: the tag without its sign, lower-cased
	OpCashtag        = "$"               // Value: the tag without its sign, lower-cased
	OpURL            = "url"             // Value: as written (the store normalizes it)
	OpLang           = "lang"            // Value: a BCP 47 tag in canonical case ("en", "zh-CN")
	OpConversationID = "conversation_id" // Number: the post id
	OpIs             = "is"              // Value: IsReply, IsQuote or IsRetweet
	OpHas            = "has"             // Value: HasMedia, HasLinks or HasMentions
	OpMinLikes       = "min_likes"       // Number: 0 to math.MaxInt32
	OpMinReplies     = "min_replies"     // Number: 0 to math.MaxInt32
	OpMinReposts     = "min_reposts"     // Number: 0 to math.MaxInt32

	// Operators of the filtered stream's rules only: search refuses them
	// (CheckSearch; docs/streams-rules.md).
	OpInReplyToTweetID  = "in_reply_to_tweet_id" // Number: the replied-to post id
	OpRetweetsOf        = "retweets_of"          // Value: a username, as written
	OpRetweetsOfTweetID = "retweets_of_tweet_id" // Number: the reposted post id
	OpSample            = "sample"               // Number: a percentage, 1 to 100
	OpSource            = "source"               // Value: an app name, as written
	OpURLContains       = "url_contains"         // Value: as written
	OpPlace             = "place"                // Value: a place id, as written
)

// Values of is: and has:.
const (
	IsReply     = "reply"
	IsQuote     = "quote"
	IsRetweet   = "retweet"
	HasMedia    = "media"
	HasLinks    = "links"
	HasMentions = "mentions"

	// Values of the filtered stream's rules only (CheckSearch).
	IsVerified   = "verified"
	IsNullcast   = "nullcast"
	HasHashtags  = "hashtags"
	HasCashtags  = "cashtags"
	HasImages    = "images"
	HasVideoLink = "video_link"
	HasGeo       = "geo"
)

// Query is a parsed search query.
type Query struct {
	Root Node
}

// String returns the query in the language's own syntax; parsing it gives
// the same tree.
func (q *Query) String() string {
	if q == nil || q.Root == nil {
		return ""
	}
	return q.Root.String()
}

// Node is one node of the query tree: *And, *Or, *Not, *Term, *Phrase or
// *Operator.
type Node interface {
	node()
	// String returns the node in the language's syntax.
	String() string
}

// And matches what every child matches. It has at least two children, none
// of them an *And.
type And struct {
	Children []Node
}

// Or matches what any child matches. It has at least two children, none of
// them an *Or, and every child holds a clause that is not negated.
type Or struct {
	Children []Node
}

// Not matches what Child does not.
type Not struct {
	Child Node
}

// Term is a bare word, matched as a token of a post's text (a word the
// tokenizer splits, such as "don't", is matched as a phrase of its parts).
type Term struct {
	Text string
}

// Phrase is a quoted phrase: its words in that order. Text is what stood
// between the quotes.
type Phrase struct {
	Text string
}

// Operator is one of the Op* operators with its value: Value is its
// canonical text and, for the numeric operators, Number its value.
type Operator struct {
	Name   string
	Value  string
	Number int64
}

func (*And) node()      {}
func (*Or) node()       {}
func (*Not) node()      {}
func (*Term) node()     {}
func (*Phrase) node()   {}
func (*Operator) node() {}

func (n *And) String() string {
	parts := make([]string, len(n.Children))
	for i, c := range n.Children {
		if _, ok := c.(*Or); ok {
			parts[i] = "(" + c.String() + ")"
		} else {
			parts[i] = c.String()
		}
	}
	return strings.Join(parts, " ")
}

func (n *Or) String() string {
	parts := make([]string, len(n.Children))
	for i, c := range n.Children {
		parts[i] = c.String()
	}
	return strings.Join(parts, " OR ")
}

func (n *Not) String() string {
	switch n.Child.(type) {
	case *Term, *Phrase, *Operator:
		return "-" + n.Child.String()
	}
	return "-(" + n.Child.String() + ")"
}

func (n *Term) String() string { return n.Text }

func (n *Phrase) String() string { return `"` + n.Text + `"` }

func (n *Operator) String() string {
	switch n.Name {
	case OpMention, OpHashtag, OpCashtag:
		return n.Name + n.Value
	}
	v := n.Value
	if strings.IndexFunc(v, isDelimiter) >= 0 {
		v = `"` + v + `"`
	}
	return n.Name + ":" + v
}

// Error is a query the language refuses: Reason says why, Pos is the
// 0-based byte offset in the query where the problem was found.
type Error struct {
	Pos    int
	Reason string
}

func (e *Error) Error() string { return e.Reason }

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Reason: fmt.Sprintf(format, args...)}
}

// Parse parses q. A query the language refuses yields an *Error.
func Parse(q string) (*Query, error) {
	if err := checkText(q); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q) == "" {
		return nil, errorf(0, "the query is empty")
	}
	p := &parser{lx: lexer{q: q}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	root, positive, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tokRParen {
		return nil, errorf(p.tok.pos, `unbalanced parenthesis: ")" at position %d closes nothing`, p.tok.pos)
	}
	if !positive {
		return nil, errorf(0, "a query needs at least one clause that is not negated")
	}
	return &Query{Root: root}, nil
}

type parser struct {
	lx      lexer
	tok     token
	depth   int
	clauses int
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// parseOr parses alternatives separated by OR, up to a ")" or the end. It
// reports whether the result holds a clause that is not negated.
func (p *parser) parseOr() (Node, bool, error) {
	if p.tok.kind == tokOr {
		return nil, false, errorf(p.tok.pos, `"OR" at position %d has nothing before it`, p.tok.pos)
	}
	start := p.tok.pos
	first, positive, err := p.parseAnd()
	if err != nil {
		return nil, false, err
	}
	if p.tok.kind != tokOr {
		return first, positive, nil
	}
	if !positive {
		return nil, false, orSideError(start)
	}
	or := &Or{}
	or.add(first)
	for p.tok.kind == tokOr {
		at := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, false, err
		}
		switch p.tok.kind {
		case tokEOF, tokRParen:
			return nil, false, errorf(at, `"OR" at position %d has nothing after it`, at)
		case tokOr:
			return nil, false, errorf(p.tok.pos, `"OR" at position %d follows another "OR"`, p.tok.pos)
		}
		start := p.tok.pos
		n, positive, err := p.parseAnd()
		if err != nil {
			return nil, false, err
		}
		if !positive {
			return nil, false, orSideError(start)
		}
		or.add(n)
	}
	return or, true, nil
}

func orSideError(pos int) *Error {
	return errorf(pos, `each side of "OR" needs at least one clause that is not negated; the one at position %d has none`, pos)
}

func (o *Or) add(n Node) {
	if inner, ok := n.(*Or); ok {
		o.Children = append(o.Children, inner.Children...)
	} else {
		o.Children = append(o.Children, n)
	}
}

func (a *And) add(n Node) {
	if inner, ok := n.(*And); ok {
		a.Children = append(a.Children, inner.Children...)
	} else {
		a.Children = append(a.Children, n)
	}
}

// parseAnd parses clauses side by side up to an OR, a ")" or the end.
func (p *parser) parseAnd() (Node, bool, error) {
	and := &And{}
	positive := false
	for p.tok.kind != tokOr && p.tok.kind != tokRParen && p.tok.kind != tokEOF {
		n, pos, err := p.parseUnary()
		if err != nil {
			return nil, false, err
		}
		and.add(n)
		positive = positive || pos
	}
	switch len(and.Children) {
	case 0:
		// Only a ")" at the very start gets here: the other callers
		// make sure a clause follows.
		return nil, false, errorf(p.tok.pos, `unbalanced parenthesis: ")" at position %d closes nothing`, p.tok.pos)
	case 1:
		return and.Children[0], positive, nil
	}
	return and, positive, nil
}

func (p *parser) parseUnary() (Node, bool, error) {
	if p.tok.kind != tokMinus {
		return p.parsePrimary()
	}
	if err := p.advance(); err != nil {
		return nil, false, err
	}
	// The lexer makes sure a clause or a "(" follows a "-".
	n, _, err := p.parsePrimary()
	if err != nil {
		return nil, false, err
	}
	return &Not{Child: n}, false, nil
}

func (p *parser) parsePrimary() (Node, bool, error) {
	switch p.tok.kind {
	case tokClause:
		p.clauses++
		if p.clauses > MaxClauses {
			return nil, false, errorf(p.tok.pos, "the query has more than %d clauses (terms, phrases and operators)", MaxClauses)
		}
		n := p.tok.node
		return n, true, p.advance()
	case tokLParen:
		open := p.tok.pos
		p.depth++
		if p.depth > MaxDepth {
			return nil, false, errorf(open, "parentheses nest more than %d deep at position %d", MaxDepth, open)
		}
		if err := p.advance(); err != nil {
			return nil, false, err
		}
		switch p.tok.kind {
		case tokRParen:
			return nil, false, errorf(open, `empty group "()" at position %d`, open)
		case tokEOF:
			return nil, false, unclosed(open)
		}
		n, positive, err := p.parseOr()
		if err != nil {
			return nil, false, err
		}
		if p.tok.kind != tokRParen {
			return nil, false, unclosed(open)
		}
		p.depth--
		return n, positive, p.advance()
	}
	// Unreachable: parseAnd stops at OR, ")" and the end, and the lexer
	// makes sure a clause or a "(" follows a "-".
	return nil, false, errorf(p.tok.pos, "unexpected text at position %d", p.tok.pos)
}

func unclosed(pos int) *Error {
	return errorf(pos, `unbalanced parenthesis: "(" at position %d is never closed`, pos)
}
