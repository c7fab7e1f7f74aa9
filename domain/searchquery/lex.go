package searchquery

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokLParen
	tokRParen
	tokOr
	tokMinus
	tokClause // a term, phrase or operator: token.node
)

type token struct {
	kind tokKind
	pos  int
	node Node
}

// lexer cuts a query into tokens, one at a time, so that the first problem
// from the left is the one reported.
type lexer struct {
	q string
	i int
}

// isDelimiter reports whether r ends a word: white space, a parenthesis or
// a double quote.
func isDelimiter(r rune) bool {
	return unicode.IsSpace(r) || r == '(' || r == ')' || r == '"'
}

// checkText refuses invalid UTF-8 and control characters other than white
// space (PostgreSQL text cannot hold NUL, and none of them can be typed).
func checkText(q string) error {
	for i := 0; i < len(q); {
		r, n := utf8.DecodeRuneInString(q[i:])
		if r == utf8.RuneError && n == 1 {
			return errorf(i, "the query is not valid UTF-8: byte 0x%02x at position %d", q[i], i)
		}
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return errorf(i, "the query holds a control character (%U) at position %d", r, i)
		}
		i += n
	}
	return nil
}

// wordEnd returns where the word that starts at i ends.
func (l *lexer) wordEnd(i int) int {
	for i < len(l.q) {
		r, n := utf8.DecodeRuneInString(l.q[i:])
		if isDelimiter(r) {
			return i
		}
		i += n
	}
	return i
}

func (l *lexer) skipSpace() {
	for l.i < len(l.q) {
		r, n := utf8.DecodeRuneInString(l.q[l.i:])
		if !unicode.IsSpace(r) {
			return
		}
		l.i += n
	}
}

func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.i
	if start == len(l.q) {
		return token{kind: tokEOF, pos: start}, nil
	}
	switch l.q[start] {
	case '(':
		l.i++
		return token{kind: tokLParen, pos: start}, nil
	case ')':
		l.i++
		return token{kind: tokRParen, pos: start}, nil
	case '"':
		return l.phrase(start)
	case '-':
		return l.minus(start)
	}
	end := l.wordEnd(start)
	l.i = end
	word := l.q[start:end]
	if word == "OR" {
		return token{kind: tokOr, pos: start}, nil
	}
	n, err := l.clause(start, word)
	if err != nil {
		return token{}, err
	}
	return token{kind: tokClause, pos: start, node: n}, nil
}

func (l *lexer) phrase(start int) (token, error) {
	j := strings.IndexByte(l.q[start+1:], '"')
	if j < 0 {
		return token{}, errorf(start, `unterminated quote: the phrase opened at position %d has no closing "`, start)
	}
	text := l.q[start+1 : start+1+j]
	if strings.TrimSpace(text) == "" {
		return token{}, errorf(start, `empty phrase at position %d`, start)
	}
	l.i = start + j + 2
	return token{kind: tokClause, pos: start, node: &Phrase{Text: text}}, nil
}

// minus lexes a "-", which must stand right before a term, phrase,
// operator or group.
func (l *lexer) minus(start int) (token, error) {
	after := start + 1
	if after == len(l.q) {
		return token{}, errorf(start, `"-" at position %d has nothing after it`, start)
	}
	r, _ := utf8.DecodeRuneInString(l.q[after:])
	switch {
	case unicode.IsSpace(r) || r == ')':
		return token{}, errorf(start, `"-" at position %d has nothing after it`, start)
	case r == '-':
		return token{}, errorf(start, `"-" at position %d must be followed by a term, phrase, operator or group, not another "-"`, start)
	case l.q[after:l.wordEnd(after)] == "OR":
		return token{}, errorf(start, `"-" at position %d must be followed by a term, phrase, operator or group, not "OR"`, start)
	}
	l.i = after
	return token{kind: tokMinus, pos: start}, nil
}

// clause turns the word at start into a term or an operator. An operator
// with a name (from:, url:, ...) may take a quoted value right after its
// colon; the lexer then moves past the closing quote.
func (l *lexer) clause(start int, word string) (Node, error) {
	switch word[0] {
	case '@', '#', '$':
		return operator(word[:1], start+1, word[1:])
	}
	k := strings.IndexByte(word, ':')
	if k <= 0 {
		return &Term{Text: word}, nil
	}
	name, value, ok := operatorName(word[:k]), word[k+1:], true
	if name != word[:k] {
		// Operators are case-insensitive (FROM:, Lang:); a word whose
		// upper-case "name" is no operator of the language is text.
		_, ok = hints[name]
		ok = ok || unsupported[name]
	}
	if !ok || !isOperatorName(name) {
		return &Term{Text: word}, nil
	}
	if _, ok := hints[name]; !ok {
		if strings.HasPrefix(value, "//") {
			// A URL such as https://example.com/a, searched as words.
			return &Term{Text: word}, nil
		}
		if unsupported[name] {
			return nil, errorf(start, "operator %q is not supported", name+":")
		}
		return nil, errorf(start, "unknown operator %q", name+":")
	}
	valuePos := start + k + 1
	if end := start + len(word); value == "" && end < len(l.q) && l.q[end] == '"' {
		j := strings.IndexByte(l.q[end+1:], '"')
		if j < 0 {
			return nil, errorf(end, `unterminated quote: the value of %q opened at position %d has no closing "`, name+":", end)
		}
		value = l.q[end+1 : end+1+j]
		valuePos = end
		l.i = end + j + 2
	}
	return operator(name, valuePos, value)
}

// operatorName is s with its ASCII letters in lower case: operator names
// are matched in any case.
func operatorName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isOperatorName reports whether s has the shape of an operator name: a
// lower-case ASCII letter, then lower-case letters and underscores.
func isOperatorName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && c == '_') {
			return false
		}
	}
	return s != ""
}
