package streamrules

import (
	"fmt"
	"unicode/utf8"

	sq "github.com/aviary-dev/aviary/domain/searchquery"
)

// MaxRuleLength is the platform's longest rule on pay-per-use access, in
// characters (docs/streams-rules.md).
const MaxRuleLength = 1024

// Kind says why a rule is refused.
type Kind int

const (
	// Invalid: the value is not a query of the language (syntax, an
	// unknown operator, a bad operator value): problem invalid-rules.
	Invalid Kind = iota + 1
	// Noncompliant: a valid query the filtered stream does not take (too
	// long, only conjunction-required operators, a negated group, an
	// operator the stream lacks): problem noncompliant-rules.
	Noncompliant
)

// Error is a refused rule: Kind says which problem it is, Reason why.
type Error struct {
	Kind   Kind
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// conjunctionRequired are the operators a rule may use only beside a
// standalone clause (the platform's conjunction-required operators).
var conjunctionRequired = map[string]bool{sq.OpIs: true, sq.OpHas: true, sq.OpLang: true, sq.OpSample: true}

// notOnStream are operators of the search language the stream lacks.
var notOnStream = map[string]bool{sq.OpMinLikes: true, sq.OpMinReplies: true, sq.OpMinReposts: true}

// Check reports whether value is a rule the stream takes, at most
// MaxRuleLength characters long; see CheckLength.
func Check(value string) error { return CheckLength(value, MaxRuleLength) }

// CheckLength reports whether value is a rule the stream takes, at most
// maxLength characters (code points) long: nil, or an *Error.
func CheckLength(value string, maxLength int) error {
	_, err := parse(value, maxLength)
	return err
}

// parse checks value and returns its tree.
func parse(value string, maxLength int) (*sq.Query, error) {
	if !utf8.ValidString(value) {
		return nil, &Error{Kind: Invalid, Reason: "the rule is not valid UTF-8"}
	}
	if n := utf8.RuneCountInString(value); maxLength > 0 && n > maxLength {
		return nil, &Error{Kind: Noncompliant, Reason: fmt.Sprintf("Rule is too long: %d characters, at most %d allowed", n, maxLength)}
	}
	q, err := sq.Parse(value)
	if err != nil {
		reason := err.Error()
		if qe, ok := err.(*sq.Error); ok {
			reason = fmt.Sprintf("%s (at position %d)", qe.Reason, qe.Pos+1)
		}
		return nil, &Error{Kind: Invalid, Reason: reason}
	}
	if err := compliant(q.Root); err != nil {
		return nil, err
	}
	if !standalone(q.Root) {
		return nil, &Error{Kind: Noncompliant, Reason: "Rules must contain at least one standalone clause that is not negated: " +
			"is:, has:, lang: and sample: may only be used together with one (in each alternative of an OR)"}
	}
	return q, nil
}

// compliant refuses negated groups and operators the stream lacks.
func compliant(n sq.Node) error {
	switch n := n.(type) {
	case *sq.And:
		return compliantAll(n.Children)
	case *sq.Or:
		return compliantAll(n.Children)
	case *sq.Not:
		switch n.Child.(type) {
		case *sq.And, *sq.Or:
			return &Error{Kind: Noncompliant, Reason: fmt.Sprintf("Negated groups are not allowed: %s; negate each clause instead", n.String())}
		}
		if o, ok := n.Child.(*sq.Operator); ok && o.Name == sq.OpIs && o.Value == sq.IsNullcast {
			return nil
		}
		return compliant(n.Child)
	case *sq.Operator:
		if n.Name == sq.OpIs && n.Value == sq.IsNullcast {
			return &Error{Kind: Noncompliant, Reason: `The operator "is:nullcast" must be negated: -is:nullcast`}
		}
		if notOnStream[n.Name] {
			return &Error{Kind: Noncompliant, Reason: fmt.Sprintf("The operator %q is not available on the filtered stream", n.Name+":")}
		}
	}
	return nil
}

func compliantAll(children []sq.Node) error {
	for _, c := range children {
		if err := compliant(c); err != nil {
			return err
		}
	}
	return nil
}

// standalone reports whether n holds a positive standalone clause in
// every alternative: a term, a phrase or an operator other than the
// conjunction-required ones, not negated.
func standalone(n sq.Node) bool {
	switch n := n.(type) {
	case *sq.And:
		for _, c := range n.Children {
			if standalone(c) {
				return true
			}
		}
		return false
	case *sq.Or:
		for _, c := range n.Children {
			if !standalone(c) {
				return false
			}
		}
		return true
	case *sq.Not:
		return false
	case *sq.Operator:
		return !conjunctionRequired[n.Name]
	}
	return true // *Term, *Phrase
}
