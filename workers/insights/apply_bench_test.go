package insights

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
)

// BenchmarkApplyCorpus builds the aggregates of a generated corpus
// (AVIARY_BENCH_POSTS posts, corpus.Size) from its change log with the
// default Counter: changes applied per second, and the aggregates' rows.
func BenchmarkApplyCorpus(b *testing.B) {
	n := corpus.Size(b)
	db, url := storagetest.NewDB(b)
	pool, err := pgxpool.New(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	corpus.Load(b, pool, n, time.Now().UTC().Truncate(time.Second))
	a := &Applier{Store: db, Counter: Counter{PairSample: DefaultPairSample}, Budget: time.Hour, Logger: quiet, BatchSize: 10000}
	b.ResetTimer()
	start := time.Now()
	applied, err := a.Drain(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.StopTimer()
	var hours, pairs int64
	if err := pool.QueryRow(b.Context(), `SELECT (SELECT count(*) FROM insight_term_hours), (SELECT count(*) FROM insight_term_pairs)`).Scan(&hours, &pairs); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(applied)/took.Seconds(), "changes/s")
	b.ReportMetric(float64(hours), "term-hour-rows")
	b.ReportMetric(float64(pairs), "pair-rows")
}
