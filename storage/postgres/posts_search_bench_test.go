package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
)

// BenchmarkSearchPosts measures SearchPosts and CountPosts on a generated
// corpus (storagetest/corpus) of AVIARY_BENCH_POSTS posts (100,000 unless
// set; the figures in docs/search.md are for 1,000,000), one query at a
// time, and reports the p50 and p99 latency of each kind of query in
// milliseconds, next to the same statement run bare through pgx (the
// "ceiling": compiled beforehand, usernames resolved, rows read but not
// decoded). Searches ask for 100 posts of
// the last 7 days, newest first; counts cover the last 7 days per hour.
//
//	AVIARY_BENCH_POSTS=1000000 go test -run='^$' -bench=BenchmarkSearchPosts -benchtime=200x -timeout=1h ./storage/postgres
//
// AVIARY_BENCH_SEARCH_URL names a database to keep the corpus in between
// runs (it is migrated, and loaded when it holds no corpus of that size).
func BenchmarkSearchPosts(b *testing.B) {
	n := corpus.Size(b)
	ctx := context.Background()
	db, url := benchSearchDB(b)
	pool := storagetest.BarePool(b, url) // Aviary's session settings: JIT off
	var err error
	c := benchCorpus(b, pool, n)
	window := storage.PostSearch{Start: c.End.Add(-7 * 24 * time.Hour), Limit: 100, SortOrder: storage.SortRecency}
	countWindow := storage.PostCount{Start: c.End.Add(-7 * 24 * time.Hour), End: c.End, Granularity: storage.GranularityHour}
	for _, bc := range corpus.Cases(c) {
		queries := make([]*searchquery.Query, len(bc.Variants))
		for i, v := range bc.Variants {
			if queries[i], err = searchquery.Parse(v); err != nil {
				b.Fatalf("%s: %v", v, err)
			}
		}
		search := func(q *searchquery.Query) storage.PostSearch { s := window; s.Query = q; return s }
		count := func(q *searchquery.Query) storage.PostCount { s := countWindow; s.Query = q; return s }
		b.Run("search/"+bc.Name, func(b *testing.B) {
			var found int
			corpus.Latencies(b, len(queries), func(i int, measured bool) error {
				page, err := db.SearchPosts(ctx, search(queries[i]))
				if measured {
					found += len(page.Posts)
				}
				return err
			})
			b.ReportMetric(float64(found)/float64(b.N), "posts/op")
		})
		b.Run("search/"+bc.Name+"/bare", func(b *testing.B) {
			stmts := make([]statement, len(queries))
			for i, q := range queries {
				if stmts[i].sql, stmts[i].args, err = db.SearchPostsSQL(ctx, search(q)); err != nil {
					b.Fatal(err)
				}
			}
			corpus.Latencies(b, len(stmts), func(i int, _ bool) error { return corpus.Bare(ctx, pool, stmts[i].sql, stmts[i].args) })
		})
		b.Run("count/"+bc.Name, func(b *testing.B) {
			var total int64
			corpus.Latencies(b, len(queries), func(i int, measured bool) error {
				buckets, err := db.CountPosts(ctx, count(queries[i]))
				for _, bk := range buckets {
					if measured {
						total += bk.Count
					}
				}
				return err
			})
			b.ReportMetric(float64(total)/float64(b.N), "counted/op")
		})
		b.Run("count/"+bc.Name+"/bare", func(b *testing.B) {
			stmts := make([]statement, len(queries))
			for i, q := range queries {
				if stmts[i].sql, stmts[i].args, err = db.CountPostsSQL(ctx, count(q)); err != nil {
					b.Fatal(err)
				}
			}
			corpus.Latencies(b, len(stmts), func(i int, _ bool) error { return corpus.Bare(ctx, pool, stmts[i].sql, stmts[i].args) })
		})
	}
}

// statement is a compiled search or count.
type statement struct {
	sql  string
	args []any
}

// benchSearchDB is the benchmark's database: a fresh one, or the one
// AVIARY_BENCH_SEARCH_URL names (migrated here).
func benchSearchDB(b *testing.B) (*postgres.DB, string) {
	url := os.Getenv("AVIARY_BENCH_SEARCH_URL")
	if url == "" {
		return storagetest.NewDB(b)
	}
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	if _, err := db.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return db, url
}

// benchCorpus loads a corpus of n posts, or finds the one a previous run
// left in a kept database (AVIARY_BENCH_SEARCH_URL): its end is the newest
// post's time plus the step between posts.
func benchCorpus(b *testing.B, pool *pgxpool.Pool, n int) corpus.Corpus {
	ctx := context.Background()
	var have int
	var newest *time.Time
	if err := pool.QueryRow(ctx, `SELECT count(*), max(created_at) FROM posts`).Scan(&have, &newest); err != nil {
		b.Fatal(err)
	}
	if have == n && newest != nil {
		return corpus.Describe(n, *newest)
	}
	if have != 0 {
		b.Fatalf("the benchmark database holds %d posts, not %d: empty it or use another", have, n)
	}
	t := time.Now()
	c := corpus.Load(b, pool, n, time.Now().UTC().Truncate(time.Second))
	b.Logf("loaded %d posts in %s", n, time.Since(t).Round(time.Second))
	return c
}
