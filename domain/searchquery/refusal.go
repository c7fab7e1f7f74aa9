package searchquery

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The longest query each search archive takes, in characters.
const (
	MaxRecentLength = 512
	MaxAllLength    = 1024
)

// Refusal is a search query the API refuses, with the detail its 400
// answers (and the console shows) for the `query` parameter.
type Refusal struct {
	Detail string
}

func (r *Refusal) Error() string { return r.Detail }

// ParseSearch reads raw as the `query` of a search of archive ("recent",
// "all") that takes at most maxLen characters, as GET
// /2/tweets/search/{recent,all} and the counts do: a query too long, one
// that does not parse, or one naming an operator only the filtered
// stream's rules offer (CheckSearch) is a *Refusal; any other error is the
// parser's own.
func ParseSearch(raw, archive string, maxLen int) (*Query, error) {
	if n := utf8.RuneCountInString(raw); n > maxLen {
		return nil, &Refusal{Detail: fmt.Sprintf("The `query` query parameter is %d characters long; the %s search takes at most %d.", n, archive, maxLen)}
	}
	q, err := Parse(raw)
	if err == nil {
		err = CheckSearch(q)
	}
	var qe *Error
	switch {
	case err == nil:
		return q, nil
	case !errors.As(err, &qe):
		return nil, err
	}
	msg := "There were errors processing your request: " + qe.Reason
	if qe.Pos >= 0 && !strings.Contains(qe.Reason, "position") {
		msg += fmt.Sprintf(" (at position %d)", qe.Pos)
	}
	return nil, &Refusal{Detail: msg}
}
