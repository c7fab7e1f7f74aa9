package search_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
)

// BenchmarkSearchAPI measures GET /2/tweets/search/recent (max_results=100,
// newest first) and GET /2/tweets/counts/recent (hourly buckets) through
// the whole API as cmd/aviary wires it (bearer auth through the credential
// cache, rate limiter, parsing, hydration, JSON, request log) on a
// generated corpus of AVIARY_BENCH_POSTS posts (100,000 unless set;
// `make bench` uses 1,000,000), query kind by query kind, next to the
// same statement run bare through pgx in the same run: p50 and p99 in ms.
// The goal (issue 12): p99 < 50 ms and within 1.5x of the bare query.
func BenchmarkSearchAPI(b *testing.B) {
	n := corpus.Size(b)
	ctx := context.Background()
	bb := apitest.Setup(b, 1e6)
	pool := storagetest.BarePool(b, bb.DBURL) // Aviary's session settings: JIT off
	start := time.Now()
	c := corpus.Load(b, pool, n, time.Now().UTC().Truncate(time.Second))
	b.Logf("loaded %d posts in %s", n, time.Since(start).Round(time.Second))
	// The API as cmd/aviary runs it: credentials through the in-process
	// cache, request lines through the production log handler.
	rc, prefix := storagetest.RedisPrefix(b)
	srv, _ := apitest.CachedReplica(b, bb.DB, rc, prefix, prefix+"auth-invalidate")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(path string) error {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", bb.Bearer)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return nil
	}
	for _, kind := range []string{"search", "count"} {
		for _, qc := range corpus.Cases(c) {
			b.Run(kind+"/"+qc.Name+"/api", func(b *testing.B) {
				corpus.Latencies(b, len(qc.Variants), func(i int, _ bool) error {
					if kind == "search" {
						return get("/2/tweets/search/recent?max_results=100&query=" + url.QueryEscape(qc.Variants[i]))
					}
					return get("/2/tweets/counts/recent?granularity=hour&query=" + url.QueryEscape(qc.Variants[i]))
				})
			})
			b.Run(kind+"/"+qc.Name+"/bare", func(b *testing.B) {
				stmts := make([][2]any, len(qc.Variants))
				for i, v := range qc.Variants {
					sql, args, err := benchStatement(ctx, bb, kind, v)
					if err != nil {
						b.Fatal(err)
					}
					stmts[i] = [2]any{sql, args}
				}
				corpus.Latencies(b, len(stmts), func(i int, _ bool) error {
					return corpus.Bare(ctx, pool, stmts[i][0].(string), stmts[i][1].([]any))
				})
			})
		}
	}
}

// benchStatement compiles what the API runs for query: the 7 days up to
// search.Settle before now, as a request without start_time and end_time
// covers.
func benchStatement(ctx context.Context, bb *apitest.Bundle, kind, query string) (string, []any, error) {
	q, err := searchquery.Parse(query)
	if err != nil {
		return "", nil, err
	}
	end := time.Now().UTC().Add(-search.Settle)
	start := end.Add(-7 * 24 * time.Hour)
	if kind == "search" {
		return bb.DB.SearchPostsSQL(ctx, storage.PostSearch{Query: q, Start: start, End: end, Limit: 100, SortOrder: storage.SortRecency})
	}
	return bb.DB.CountPostsSQL(ctx, storage.PostCount{Query: q, Start: start, End: end, Granularity: storage.GranularityHour})
}
