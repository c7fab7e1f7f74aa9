package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// BenchmarkComplianceLookup measures the compliance job's post lookup
// against PostgreSQL: 1,000,000 ids (100,000 real posts, every seventh
// deleted, and 900,000 unknown ids) in batches, with several queries in
// flight, for both lookups and a few batch sizes. Only the database side:
// the results are scanned and counted, not rendered. The first query
// returns every known post (100,000 rows), the second only those needing
// action (every seventh here).
func BenchmarkComplianceLookup(b *testing.B) {
	db, url := storagetest.NewDB(b)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	mustExec := func(sql string, args ...any) {
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			b.Fatal(err)
		}
	}
	mustExec(`INSERT INTO users (username) VALUES ('bulk')`)
	mustExec(`INSERT INTO posts (author_id, text, deleted_at)
		SELECT (SELECT id FROM users WHERE username = 'bulk'), 'bulk ' || g, CASE WHEN g % 7 = 0 THEN now() END
		FROM generate_series(1, 100000) g`)
	mustExec(`ANALYZE posts`)
	mustExec(`ANALYZE users`)
	rows, _ := pool.Query(ctx, `SELECT id FROM posts`)
	real, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, 0, 1_000_000)
	ids = append(ids, real...)
	for len(ids) < 1_000_000 {
		ids = append(ids, real[0]+int64(len(ids))*1_000_003+7)
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })

	type lookup func(context.Context, []int64) (int, error)
	variants := []struct {
		name string
		run  lookup
	}{
		// Every known post with its author (what the check used before).
		{"PostStatuses", func(ctx context.Context, ids []int64) (int, error) {
			s, err := db.PostStatuses(ctx, ids)
			return len(s), err
		}},
		// Only the posts that need action, narrow columns (what it uses).
		{"PostsNeedingAction", func(ctx context.Context, ids []int64) (int, error) {
			s, err := db.PostsNeedingAction(ctx, ids)
			return len(s), err
		}},
	}
	for _, v := range variants {
		for _, batch := range []int{5000, 10000, 20000} {
			for _, par := range []int{2, 4} {
				b.Run(fmt.Sprintf("%s/batch=%d/par=%d", v.name, batch, par), func(b *testing.B) {
					var found atomic.Int64
					for i := 0; i < b.N; i++ {
						var wg sync.WaitGroup
						slots := make(chan struct{}, par)
						var mu sync.Mutex
						var firstErr error
						for lo := 0; lo < len(ids); lo += batch {
							chunk := ids[lo:min(lo+batch, len(ids))]
							slots <- struct{}{}
							wg.Go(func() {
								defer func() { <-slots }()
								n, err := v.run(ctx, chunk)
								found.Add(int64(n))
								if err != nil {
									mu.Lock()
									firstErr = err
									mu.Unlock()
								}
							})
						}
						wg.Wait()
						if firstErr != nil {
							b.Fatal(firstErr)
						}
					}
					b.ReportMetric(float64(b.N*len(ids))/b.Elapsed().Seconds(), "ids/s")
					b.ReportMetric(float64(found.Load())/float64(b.N), "rows/op")
				})
			}
		}
	}
}
