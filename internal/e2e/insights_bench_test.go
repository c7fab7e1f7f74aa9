package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
	"github.com/aviary-dev/aviary/workers/insights"
)

// BenchmarkKeywordInsights is the keyword insights benchmark
// (docs/benchmarks.md): GET /12/insights/keywords/search on a generated
// corpus of AVIARY_BENCH_POSTS posts (corpus.Size: 100,000 unless set;
// `make bench` uses 1,000,000), and how far behind the aggregates are
// while posts arrive. Three kinds of sub-benchmarks report it:
//
// build: the corpus' change log applied to the aggregates by the worker's
// Applier in this process (the default Counter, batches of 10,000):
// build-s and build-changes/s.
//
// query/<case>: the endpoint through an `aviary api` process (OAuth 1.0a
// user context, the rate limiter scaled so it never refuses), p50 and p99
// in ms over b.N requests rotating through 10 variants per case. Every
// answer must be 200 with a tweet_volume of one entry per bucket. Goal
// (the issue): p99 < 50 ms.
//
// lag: an `aviary worker` process (sweeper + insights:apply) keeps the
// aggregates while posts are inserted at BENCH_INSIGHTS_LAG_RATE (1,000)
// per second for BENCH_INSIGHTS_LAG_SECONDS (60); every 250 ms the age of
// the oldest row of the change log is sampled (0 when it is empty):
// lag-p50-s, lag-p99-s, lag-max-s, the achieved posts/s, and catchup-s,
// from the last insert to an empty log.
//
//	AVIARY_BENCH_POSTS=100000 go test ./internal/e2e -run '^$' -bench KeywordInsights -benchtime 20x
func BenchmarkKeywordInsights(b *testing.B) {
	n := corpus.Size(b)
	ctx := context.Background()
	scale := benchEnv("BENCH_RATE_LIMIT_SCALE", "1000000")
	reconcile := "AVIARY_RECONCILE_INTERVAL=" + benchEnv("BENCH_RECONCILE_INTERVAL", "2s")
	// The API's bound on each statement is production's 500 ms; raise it
	// (BENCH_INSIGHTS_DEPENDENCY_TIMEOUT=5s) to measure a slow query rather
	// than have it answered 503.
	timeout := "AVIARY_DEPENDENCY_TIMEOUT=" + benchEnv("BENCH_INSIGHTS_DEPENDENCY_TIMEOUT", "500ms")
	s := newStack(b, stackOptions{driver: "local", env: benchAviaryEnv("AVIARY_RATE_LIMIT_SCALE="+scale, reconcile, timeout)})
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)

	start := time.Now()
	c := corpus.Load(b, pool, n, time.Now().UTC().Truncate(time.Second))
	b.Logf("loaded %d posts in %s", n, time.Since(start).Round(time.Second))

	// The aggregates, from the change log the corpus wrote.
	var pending int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM insight_changes`).Scan(&pending); err != nil {
		b.Fatal(err)
	}
	applier := &insights.Applier{Store: s.db, Counter: insights.Counter{PairSample: insights.DefaultPairSample},
		BatchSize: 10000, Budget: 24 * time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	start = time.Now()
	applied, err := applier.Drain(ctx)
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	if int64(applied) != pending {
		b.Fatalf("applied %d changes, the log held %d", applied, pending)
	}
	// What autovacuum would do after a bulk load: the log's dead rows gone,
	// the aggregates' statistics known.
	for _, table := range []string{"insight_changes", "insight_term_hours", "insight_term_pairs"} {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+table); err != nil {
			b.Fatal(err)
		}
	}
	var hourRows, pairRows int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM insight_term_hours), (SELECT count(*) FROM insight_term_pairs)`).
		Scan(&hourRows, &pairRows); err != nil {
		b.Fatal(err)
	}
	b.Logf("built the aggregates from %d changes in %s: %d term-hour rows, %d pair rows", applied, build.Round(time.Millisecond), hourRows, pairRows)
	b.Run("build", func(b *testing.B) {
		b.ReportMetric(float64(n), "posts")
		b.ReportMetric(float64(applied), "changes")
		b.ReportMetric(build.Seconds(), "build-s")
		b.ReportMetric(float64(applied)/build.Seconds(), "build-changes/s")
		b.ReportMetric(float64(hourRows), "term-hour-rows")
		b.ReportMetric(float64(pairRows), "pair-rows")
	})

	// The queries: the 7 days up to the corpus' last full hour.
	end := c.End.UTC().Truncate(time.Hour)
	q := &insightsClient{s: s, tok: s.demoToken(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 30 * time.Second}}
	for _, qc := range insightCases(end.Add(-7*24*time.Hour), end) {
		b.Run("query/"+qc.name, func(b *testing.B) {
			corpus.Latencies(b, len(qc.variants), func(i int, _ bool) error { return q.search(qc.variants[i]) })
		})
	}

	// The lag while posts arrive, with the worker process keeping up.
	lag := measureInsightsLag(b, s, pool)
	b.Run("lag", func(b *testing.B) {
		b.ReportMetric(lag.at(0.50), "lag-p50-s")
		b.ReportMetric(lag.at(0.99), "lag-p99-s")
		b.ReportMetric(lag.at(1), "lag-max-s")
		b.ReportMetric(lag.rate, "posts/s")
		b.ReportMetric(float64(lag.posts), "posts")
		b.ReportMetric(lag.catchup.Seconds(), "catchup-s")
	})
}

// insightQuery is one request of a case: GET /12/insights/keywords/search
// with these parameters.
type insightQuery struct {
	granularity        string // DAY or HOUR
	keywords, negative []string
	location           string
	start, end         time.Time
	// nonZero: the keywords are common enough that a window without posts
	// means the aggregates were not built.
	nonZero bool
}

// buckets is how many entries tweet_volume must hold: one per hour or day
// of [start, end).
func (q insightQuery) buckets() int {
	g := time.Hour
	if q.granularity == "DAY" {
		g = 24 * time.Hour
	}
	return int((q.end.Sub(q.start) + g - 1) / g)
}

type insightCase struct {
	name     string
	variants []insightQuery
}

// insightCases are the query kinds, each with 10 variants of the same
// frequency, over [start, end): corpus words by rank (corpus.Words is
// Zipf: rank 5..14 in 10% to 25% of the posts, 100..109 in about 1%,
// 2000..2009 in about 0.04%) and hashtags ("#t" + corpus.Word(r), in one
// post in a few hundred for the first ranks).
func insightCases(start, end time.Time) []insightCase {
	word := corpus.Word
	kind := func(name, granularity, location string, nonZero bool, keywords func(k int) (kw, neg []string)) insightCase {
		c := insightCase{name: name}
		for k := range 10 {
			kw, neg := keywords(k)
			c.variants = append(c.variants, insightQuery{granularity: granularity, keywords: kw, negative: neg,
				location: location, start: start, end: end, nonZero: nonZero})
		}
		return c
	}
	rank := func(from int) func(k int) ([]string, []string) {
		return func(k int) ([]string, []string) { return []string{word(from + k)}, nil }
	}
	return []insightCase{
		kind("common_hour_us", "HOUR", "US", true, rank(5)),
		kind("common_hour", "HOUR", "", true, rank(5)),
		kind("common_day", "DAY", "", true, rank(5)),
		kind("mid_hour", "HOUR", "", false, rank(100)),
		kind("rare_hour", "HOUR", "", false, rank(2000)),
		kind("or3_neg2_hour", "HOUR", "", false, func(k int) ([]string, []string) {
			return []string{word(50 + k), word(150 + k), word(400 + k)}, []string{word(20 + k), word(30 + k)}
		}),
		kind("hashtag_hour", "HOUR", "", false, func(k int) ([]string, []string) {
			return []string{"#t" + word(k)}, nil
		}),
	}
}

// insightsClient sends keyword insights queries as the bootstrap user
// (OAuth 1.0a user context, as every ads endpoint).
type insightsClient struct {
	s      *stack
	tok    userToken
	client *http.Client
}

// search sends q and checks the answer: 200, data.tweet_volume with one
// entry per bucket (and some posts for a common keyword).
func (c *insightsClient) search(q insightQuery) error {
	v := url.Values{}
	v.Set("granularity", q.granularity)
	v.Set("keywords", strings.Join(q.keywords, ","))
	if len(q.negative) > 0 {
		v.Set("negative_keywords", strings.Join(q.negative, ","))
	}
	v.Set("start_time", q.start.UTC().Format(time.RFC3339))
	v.Set("end_time", q.end.UTC().Format(time.RFC3339))
	if q.location != "" {
		v.Set("location", q.location)
	}
	req, err := http.NewRequest(http.MethodGet, c.s.baseURL+"/12/insights/keywords/search?"+v.Encode(), nil)
	if err != nil {
		return err
	}
	s := c.s
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, c.tok.token, c.tok.secret, time.Now(), ""); err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", req.URL.RequestURI(), resp.Status, tail(raw, 2000))
	}
	var body struct {
		Data struct {
			RelatedKeywords []string  `json:"related_keywords"`
			TweetVolume     []float64 `json:"tweet_volume"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("GET %s: decode: %v: %s", req.URL.RequestURI(), err, tail(raw, 2000))
	}
	tv := body.Data.TweetVolume
	if len(tv) == 0 || len(tv) != q.buckets() {
		return fmt.Errorf("GET %s: tweet_volume has %d entries, want %d: %s", req.URL.RequestURI(), len(tv), q.buckets(), tail(raw, 2000))
	}
	if q.nonZero {
		total := 0.0
		for _, x := range tv {
			total += x
		}
		if total == 0 {
			return fmt.Errorf("GET %s: no posts in tweet_volume (aggregates not built?): %s", req.URL.RequestURI(), tail(raw, 2000))
		}
	}
	return nil
}

// insightsLag is what the lag phase measured.
type insightsLag struct {
	samples []float64 // seconds behind, every 250 ms while posts arrived
	posts   int
	rate    float64 // posts inserted per second, achieved
	catchup time.Duration
}

// at is the p-quantile of the samples (as corpus.Latencies computes it).
func (l insightsLag) at(p float64) float64 {
	if len(l.samples) == 0 {
		return 0
	}
	return l.samples[min(len(l.samples)-1, max(0, int(math.Ceil(p*float64(len(l.samples))))-1))]
}

// oldestChange is how far behind the aggregates are: the age of the oldest
// row of the change log (the one the applier takes next), 0 when it is
// empty; both times from the database's clock.
const oldestChange = `SELECT coalesce(extract(epoch FROM clock_timestamp() -
	(SELECT recorded_at FROM insight_changes ORDER BY seq LIMIT 1)), 0)::float8`

// measureInsightsLag starts an `aviary worker` process (its sweeper
// enqueues insights:apply while the log holds rows), inserts posts like
// the corpus' at BENCH_INSIGHTS_LAG_RATE per second for
// BENCH_INSIGHTS_LAG_SECONDS (the posts table's triggers write the change
// log), samples the lag every 250 ms, then waits for the log to empty.
func measureInsightsLag(b *testing.B, s *stack, pool *pgxpool.Pool) insightsLag {
	b.Helper()
	ctx := context.Background()
	rate := float64(benchInt(b, "BENCH_INSIGHTS_LAG_RATE", 1000))
	duration := time.Duration(benchInt(b, "BENCH_INSIGHTS_LAG_SECONDS", 60)) * time.Second

	var pending float64
	if err := pool.QueryRow(ctx, oldestChange).Scan(&pending); err != nil || pending != 0 {
		b.Fatalf("change log before the lag phase: %v behind, %v", pending, err)
	}
	rows, err := pool.Query(ctx, `SELECT id FROM users WHERE username LIKE 'author\_%'
		AND suspended_at IS NULL AND deactivated_at IS NULL ORDER BY username`)
	if err != nil {
		b.Fatal(err)
	}
	var authors []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		authors = append(authors, id)
	}
	if err := rows.Err(); err != nil || len(authors) == 0 {
		b.Fatalf("corpus authors: %d, %v", len(authors), err)
	}

	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(b))
	s.start("worker", []string{"AVIARY_WORKER_METRICS_ADDR=" + metrics})
	waitHTTP(b, "http://"+metrics+"/metrics")

	// Texts drawn as the corpus draws them: 6 to 24 Zipf words, a hashtag
	// or more in 8% of the posts.
	rng := rand.New(rand.NewPCG(3, 4))
	wordZipf := rand.NewZipf(rng, 1.1, 1, corpus.Words-1)
	tagZipf := rand.NewZipf(rng, 1.1, 1, 1999)
	authorZipf := rand.NewZipf(rng, 1.1, 20, uint64(len(authors)-1))
	post := func() (int64, string, string) {
		var text strings.Builder
		for w := range 6 + rng.IntN(19) {
			if w > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(corpus.Word(int(wordZipf.Uint64())))
		}
		var tags []string
		if rng.IntN(100) < 8 {
			for range 1 + rng.IntN(3) {
				t := "t" + corpus.Word(int(tagZipf.Uint64()))
				text.WriteString(" #" + t)
				tags = append(tags, t)
			}
		}
		return authors[authorZipf.Uint64()], text.String(), strings.Join(tags, " ")
	}
	const insert = `INSERT INTO posts (author_id, text, hashtags, lang)
		SELECT a, t, string_to_array(h, ' '), 'en' FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(a, t, h)`

	var (
		mu      sync.Mutex
		samples []float64
		errs    []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the sampler
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var behind float64
			if err := pool.QueryRow(ctx, oldestChange).Scan(&behind); err != nil {
				fail(fmt.Errorf("sample the lag: %w", err))
				return
			}
			mu.Lock()
			samples = append(samples, behind)
			mu.Unlock()
		}
	}()

	// The inserter: every 10 ms, the posts due by then (10 at 1,000/s; more,
	// at most 200 a statement, after a slow insert).
	inserted := 0
	began := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	for {
		elapsed := time.Since(began)
		if elapsed >= duration {
			break
		}
		if due := min(int(rate*elapsed.Seconds())-inserted, 200); due > 0 {
			as, ts, hs := make([]int64, due), make([]string, due), make([]string, due)
			for i := range due {
				as[i], ts[i], hs[i] = post()
			}
			if _, err := pool.Exec(ctx, insert, as, ts, hs); err != nil {
				fail(fmt.Errorf("insert posts: %w", err))
				break
			}
			inserted += due
		}
		<-tick.C
	}
	tick.Stop()
	stopped := time.Now()
	close(done)
	<-sampled
	if len(errs) > 0 {
		b.Fatal(errs[0])
	}

	// Catch-up: from the last insert until the log is empty.
	var catchup time.Duration
	for {
		var behind float64
		if err := pool.QueryRow(ctx, oldestChange).Scan(&behind); err != nil {
			b.Fatalf("sample the lag: %v", err)
		}
		if behind == 0 {
			catchup = time.Since(stopped)
			break
		}
		if time.Since(stopped) > 10*time.Minute {
			b.Fatalf("the change log still holds rows %s after the inserts stopped (%.1f s behind)", time.Since(stopped).Round(time.Second), behind)
		}
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(samples)
	l := insightsLag{samples: samples, posts: inserted, rate: float64(inserted) / stopped.Sub(began).Seconds(), catchup: catchup}
	b.Logf("lag phase: %d posts in %s (%.0f/s), %d samples: p50 %.2f s, p99 %.2f s, max %.2f s; log empty %s after the last insert",
		inserted, stopped.Sub(began).Round(time.Millisecond), l.rate, len(samples), l.at(0.5), l.at(0.99), l.at(1), catchup.Round(time.Millisecond))
	return l
}
