package postgres

import (
	"context"

	"github.com/aviary-dev/aviary/storage"
)

// SearchPostsSQL is the statement SearchPosts runs for s: the plan test
// and the benchmarks' bare-pgx ceilings run it directly.
func (db *DB) SearchPostsSQL(ctx context.Context, s storage.PostSearch) (string, []any, error) {
	users, err := db.searchUsers(ctx, s.Query)
	if err != nil {
		return "", nil, err
	}
	return searchPostsSQL(s, users)
}

// CountPostsSQL exposes the statement CountPosts runs for c.
func (db *DB) CountPostsSQL(ctx context.Context, c storage.PostCount) (string, []any, error) {
	users, err := db.searchUsers(ctx, c.Query)
	if err != nil {
		return "", nil, err
	}
	sql, args, _, err := countPostsSQL(c, users)
	return sql, args, err
}
