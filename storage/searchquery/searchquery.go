// Package searchquery is the query language of post search and counts
// (docs/search.md): it parses a query into a tree that storage/postgres
// compiles to SQL. It is a leaf: the standard library only.
package searchquery

// Query is a parsed search query.
type Query struct {
	Root Node
}

// Node is one node of the query tree.
type Node interface{ node() }

// Error is a query the language refuses: Reason says why, Pos is the
// 0-based byte offset in the query where the problem was found.
type Error struct {
	Pos    int
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// Parse parses q. A query the language refuses yields an *Error.
func Parse(q string) (*Query, error) {
	panic("searchquery: Parse is being written")
}
