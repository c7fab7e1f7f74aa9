package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
)

// TestCountPlansUseCountIndexes checks on a generated corpus that counts of
// has:media and min_likes:N (N >= 10) over a week read the partial indexes
// of migration 0018 (index-only: the matching visible versions in time
// order, with the author and the repost's original), never a sequential
// scan of posts, and that a repost's original is probed, not hashed.
func TestCountPlansUseCountIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, pool := storagetest.NewDBWithPool(t)
	c := corpus.Load(t, pool, 30_000, t0)
	week := c.End.Add(-7 * 24 * time.Hour)
	for _, q := range []struct{ query, index string }{
		{"has:media", "posts_count_media"},
		{"min_likes:100", "posts_count_likes"},
		{"min_likes:1000", "posts_count_likes"},
	} {
		sql, args, err := db.CountPostsSQL(ctx, storage.PostCount{Query: mustParse(t, q.query), Start: week, End: c.End,
			Granularity: storage.GranularityHour})
		if err != nil {
			t.Fatal(err)
		}
		plan := explainPlan(t, pool, sql, args)
		if !strings.Contains(plan, "Index Only Scan using "+q.index) {
			t.Errorf("count %q: not an index-only scan of %s:\n%s", q.query, q.index, plan)
		}
		if strings.Contains(plan, "Seq Scan on posts") {
			t.Errorf("count %q: sequential scan of posts:\n%s", q.query, plan)
		}
		if strings.Contains(plan, "hashed SubPlan") {
			t.Errorf("count %q: the reposts' originals are hashed, not probed:\n%s", q.query, plan)
		}
	}
}
