package searchquery

import "fmt"

// streamOnly are the operators, and the is:/has: values, the filtered
// stream's rules take but post search does not compile (docs/search.md).
var streamOnly = map[string]bool{
	OpInReplyToTweetID: true, OpRetweetsOf: true, OpRetweetsOfTweetID: true, OpSample: true,
	OpSource: true, OpURLContains: true, OpPlace: true,
	OpIs + ":" + IsVerified: true, OpIs + ":" + IsNullcast: true,
	OpHas + ":" + HasHashtags: true, OpHas + ":" + HasCashtags: true, OpHas + ":" + HasImages: true,
	OpHas + ":" + HasVideoLink: true, OpHas + ":" + HasGeo: true,
}

// StreamOnly reports whether op is an operator (or an is:/has: value) of
// the filtered stream's rules that search does not offer.
func StreamOnly(op *Operator) bool {
	return streamOnly[op.Name] || streamOnly[op.Name+":"+op.Value]
}

// CheckSearch refuses a parsed query that search cannot run: one using an
// operator only the filtered stream's rules offer. The *Error it returns
// has Pos -1: the tree does not keep positions.
func CheckSearch(q *Query) error {
	if q == nil {
		return nil
	}
	return checkSearch(q.Root)
}

func checkSearch(n Node) error {
	switch n := n.(type) {
	case *And:
		return checkSearchAll(n.Children)
	case *Or:
		return checkSearchAll(n.Children)
	case *Not:
		return checkSearch(n.Child)
	case *Operator:
		if StreamOnly(n) {
			what := display(n.Name)
			if n.Name == OpIs || n.Name == OpHas {
				what = n.Name + ":" + n.Value
			}
			return &Error{Pos: -1, Reason: fmt.Sprintf("operator %q is not supported by Aviary's search (only by filtered stream rules)", what)}
		}
	}
	return nil
}

func checkSearchAll(children []Node) error {
	for _, c := range children {
		if err := checkSearch(c); err != nil {
			return err
		}
	}
	return nil
}
