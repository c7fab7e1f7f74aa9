// Package corpus generates a large, realistic set of posts straight into
// PostgreSQL (COPY), for the search benchmarks of storage/postgres and of
// the API: the same corpus and the same query kinds measure both layers.
package corpus

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/domain/posttext"
)

// Corpus describes the posts Load wrote, so that queries
// can be built for words of a known frequency.
type Corpus struct {
	N          int
	Start, End time.Time // created_at of the posts spans [start, end)
	Words      []string  // the vocabulary, most frequent first (Zipf)
	Usernames  []string  // authors, most prolific first
	Protected  []int64   // ids of protected authors
}

// Shape of the generated corpus.
const (
	Span    = 30 * 24 * time.Hour
	Authors = 2000
	Words   = 50000
	tags    = 2000
)

// Countries are the profile countries of the authors, author i's being
// Countries[i%len(Countries)] ("" unknown); posts carry their author's.
var Countries = []string{"US", "US", "US", "GB", "JP", "JP", "BR", "IN", "DE", "FR", "ES", "MX", ""}

var syllables = []string{"ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "da", "ge", "hu", "zo", "be", "fi", "ja", "ku", "le", "mo", "ny"}

// Describe is the Corpus Load wrote for n posts, the newest created at
// newest (a corpus kept from an earlier run).
func Describe(n int, newest time.Time) Corpus {
	c := Corpus{N: n, End: newest.Add(Span / time.Duration(n))}
	c.Start = c.End.Add(-Span)
	for r := range Words {
		c.Words = append(c.Words, Word(r))
	}
	for i := range Authors {
		c.Usernames = append(c.Usernames, Username(i))
	}
	return c
}

// Word is the word of rank r (0 the most frequent): two or more
// syllables, so that every word is one token of the 'simple' parser.
func Word(r int) string {
	var b strings.Builder
	for i := 0; i < 2 || r > 0; i++ {
		b.WriteString(syllables[r%len(syllables)])
		r /= len(syllables)
	}
	return b.String()
}

// Username is the name of author i.
func Username(i int) string { return fmt.Sprintf("author_%04d", i) }

// Load writes n posts by Authors authors over the
// Span that ends at end, with ids that encode created_at as
// aviary_next_id does (conversation_id = edit_root_id = id for originals):
// texts of 6 to 24 words drawn from a Zipf vocabulary, replies (30%),
// reposts (10%, "RT @author: text"), quotes, mentions, hashtags, cashtags,
// links, media (20%), languages, engagement counters with a long tail, 1%
// deleted and 0.5% superseded posts; authors post with a Zipf law too, and
// a few are protected, suspended or deactivated; authors live in
// Countries. The insights change log gets one row per counted post, for
// the aggregates to be built from. The secondary indexes of
// posts are dropped during the COPY and built again after it; the tables
// are then vacuumed and analyzed.
func Load(tb testing.TB, pool *pgxpool.Pool, n int, end time.Time) Corpus {
	tb.Helper()
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		tb.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			tb.Fatalf("corpus: %s: %v", sql, err)
		}
	}
	c := Corpus{N: n, Start: end.Add(-Span), End: end}
	for r := range Words {
		c.Words = append(c.Words, Word(r))
	}
	userIDs := make([]int64, Authors)
	for i := range Authors {
		c.Usernames = append(c.Usernames, Username(i))
		var protected, suspended, deactivated *time.Time
		at := c.Start.Add(-time.Hour)
		switch {
		case i%50 == 7:
			protected = &at
		case i%100 == 13:
			suspended = &at
		case i%200 == 17:
			deactivated = &at
		}
		err := pool.QueryRow(ctx, `INSERT INTO users (username, name, protected_at, suspended_at, deactivated_at, country_code)
			VALUES ($1, $1, $2, $3, $4, $5) RETURNING id`, c.Usernames[i], protected, suspended, deactivated,
			Countries[i%len(Countries)]).Scan(&userIDs[i])
		if err != nil {
			tb.Fatalf("corpus: insert user: %v", err)
		}
		if protected != nil {
			c.Protected = append(c.Protected, userIDs[i])
		}
	}

	rows, err := pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'posts' AND indexname <> 'posts_pkey'`)
	if err != nil {
		tb.Fatal(err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			tb.Fatal(err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	for _, name := range names {
		exec(`DROP INDEX ` + pgx.Identifier{name}.Sanitize())
	}
	// The insights change log is written in one statement after the COPY
	// (as the migration that introduced it did), not row by row.
	exec(`ALTER TABLE posts DISABLE TRIGGER posts_insight_insert`)
	exec(`ALTER TABLE posts DISABLE TRIGGER posts_insight_fields`)

	rng := rand.New(rand.NewPCG(1, 2))
	wordZipf := rand.NewZipf(rng, 1.1, 1, Words-1)
	tagZipf := rand.NewZipf(rng, 1.1, 1, tags-1)
	authorZipf := rand.NewZipf(rng, 1.1, 20, Authors-1)
	type meta struct {
		id, conv int64
		author   int
		repost   bool
	}
	posts := make([]meta, 0, n)
	texts := make([]string, 0, n)
	reposted := map[[2]int64]bool{}
	langs := []string{"en", "en", "en", "en", "en", "en", "en", "es", "ja", "und"}
	epochMS := int64(1288834974657)
	step := Span / time.Duration(n)
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		created := c.Start.Add(time.Duration(i) * step).Truncate(time.Microsecond)
		id := (created.UnixMilli()-epochMS)<<22 | int64(i%4194304)
		author := int(authorZipf.Uint64())
		m := meta{id: id, conv: id, author: author}
		var inReplyTo, inReplyToUser, quoteOf, repostOf, deletedAt, supersededAt any
		var mentions, hashtags, cashtags, urls []string
		var media []int64
		var text strings.Builder
		kind := rng.IntN(100)
		if i > 0 && kind < 10 {
			j := rng.IntN(i)
			for posts[j].repost {
				j = rng.IntN(i)
			}
			key := [2]int64{int64(author), posts[j].id}
			if !reposted[key] {
				reposted[key] = true
				m.repost = true
				repostOf = posts[j].id
				orig := c.Usernames[posts[j].author]
				text.WriteString("RT @" + orig + ": " + texts[j])
				mentions = append(mentions, orig)
			}
		}
		if !m.repost {
			if i > 0 && kind >= 10 && kind < 40 {
				j := rng.IntN(i)
				for posts[j].repost {
					j = rng.IntN(i)
				}
				parent := c.Usernames[posts[j].author]
				inReplyTo, inReplyToUser, m.conv = posts[j].id, userIDs[posts[j].author], posts[j].conv
				text.WriteString("@" + parent + " ")
				mentions = append(mentions, parent)
			} else if i > 0 && kind >= 40 && kind < 45 {
				quoteOf = posts[rng.IntN(i)].id
			}
			for w := range 6 + rng.IntN(19) {
				if w > 0 {
					text.WriteByte(' ')
				}
				text.WriteString(c.Words[wordZipf.Uint64()])
			}
			if rng.IntN(100) < 15 {
				for range 1 + rng.IntN(2) {
					u := c.Usernames[authorZipf.Uint64()]
					text.WriteString(" @" + u)
					mentions = append(mentions, u)
				}
			}
			if rng.IntN(100) < 8 {
				for range 1 + rng.IntN(3) {
					t := "t" + Word(int(tagZipf.Uint64()))
					text.WriteString(" #" + t)
					hashtags = append(hashtags, t)
				}
			}
			if rng.IntN(100) < 1 {
				t := Word(rng.IntN(50))[:3]
				text.WriteString(" $" + strings.ToUpper(t))
				cashtags = append(cashtags, t)
			}
			if rng.IntN(100) < 10 {
				u := fmt.Sprintf("https://site%d.example/p/%d", rng.IntN(200), rng.IntN(100000))
				text.WriteString(" " + u)
				urls = append(urls, u)
			}
			if rng.IntN(100) < 20 {
				for k := range 1 + rng.IntN(4) {
					media = append(media, id*4+int64(k))
				}
			}
		}
		if rng.IntN(100) == 0 {
			deletedAt = created.Add(time.Hour)
		} else if rng.IntN(200) == 0 {
			supersededAt = created.Add(time.Minute)
		}
		likes := 0
		if rng.IntN(10) >= 4 {
			u := rng.Float64()
			likes = int(math.Pow(50000, u*u*u*u*u*u)) - 1
		}
		posts = append(posts, m)
		texts = append(texts, text.String())
		i++
		country := ""
		if !m.repost {
			country = Countries[author%len(Countries)]
		}
		return []any{id, userIDs[author], country, text.String(), nonNilInts(media), created, deletedAt,
			langs[rng.IntN(len(langs))], m.conv, inReplyTo, inReplyToUser, quoteOf, repostOf, id, supersededAt,
			nonNilStrings(lower(mentions)), nonNilStrings(hashtags), nonNilStrings(cashtags), nonNilStrings(posttext.URLTerms(urls)),
			likes, likes / 4 * rng.IntN(2), likes / 8, likes / 30}, nil
	})
	_, err = pool.CopyFrom(ctx, pgx.Identifier{"posts"}, []string{"id", "author_id", "country_code", "text", "media_ids", "created_at", "deleted_at",
		"lang", "conversation_id", "in_reply_to_post_id", "in_reply_to_user_id", "quote_of_id", "repost_of_id", "edit_root_id", "superseded_at",
		"mentions", "hashtags", "cashtags", "url_terms", "like_count", "repost_count", "reply_count", "quote_count"}, src)
	if err != nil {
		tb.Fatalf("corpus: copy posts: %v", err)
	}
	exec(`ALTER TABLE posts ENABLE TRIGGER posts_insight_insert`)
	exec(`ALTER TABLE posts ENABLE TRIGGER posts_insight_fields`)
	exec(`INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
		SELECT id, 1, posted_at, country_code, text FROM insight_counted_posts ORDER BY id`)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '512MB'`); err != nil {
		tb.Fatal(err)
	}
	for _, def := range defs {
		if _, err := conn.Exec(ctx, def); err != nil {
			tb.Fatalf("corpus: %s: %v", def, err)
		}
	}
	exec(`VACUUM ANALYZE posts`)
	exec(`VACUUM ANALYZE users`)
	return c
}

func lower(s []string) []string {
	for i := range s {
		s[i] = strings.ToLower(s[i])
	}
	return s
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Case is one kind of query of the benchmark; its variants (queries of
// the same kind and frequency) are run in turn.
type Case struct {
	Name     string
	Variants []string
}

func Cases(c Corpus) []Case {
	words := func(format string, ranks ...int) []string {
		var out []string
		for _, r := range ranks {
			out = append(out, fmt.Sprintf(format, c.Words[r]))
		}
		return out
	}
	seq := func(from, n int) []int {
		var out []int
		for r := from; r < from+n; r++ {
			out = append(out, r)
		}
		return out
	}
	var phrases, commonPhrases, ors, froms []string
	for k := range 10 {
		phrases = append(phrases, fmt.Sprintf(`"%s %s"`, c.Words[20+k], c.Words[30+k]))
		commonPhrases = append(commonPhrases, fmt.Sprintf(`"%s %s"`, c.Words[k], c.Words[k+1]))
		ors = append(ors, fmt.Sprintf("%s OR %s OR %s", c.Words[50+k], c.Words[150+k], c.Words[400+k]))
		froms = append(froms, "from:"+c.Usernames[k*3])
	}
	return []Case{
		{"term_common", words("%s", seq(5, 10)...)},  // each in 10% to 25% of posts
		{"term_mid", words("%s", seq(100, 10)...)},   // ~1%
		{"term_rare", words("%s", seq(2000, 10)...)}, // ~0.04%
		{"phrase", phrases},                          // two words in 2% to 7% of posts each
		{"phrase_common", commonPhrases},             // two of the 11 most common words
		{"from", froms},
		{"has_media", []string{"has:media"}},
		{"min_likes", []string{"min_likes:100", "min_likes:1000"}},
		{"or3", ors},
	}
}

// Bare runs a search or count statement as storage/postgres does (planned
// for its values) and reads its rows without decoding them: the ceiling
// the benchmarks compare with.
func Bare(ctx context.Context, pool *pgxpool.Pool, sql string, args []any) error {
	rows, err := pool.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		return err
	}
	for rows.Next() {
		_ = rows.RawValues()
	}
	return rows.Err()
}

// Latencies runs each of the variants once to warm up, then b.N times
// over the variants in turn, and reports the p50 and p99 of the runs.
func Latencies(b *testing.B, variants int, run func(i int, measured bool) error) {
	for i := range variants {
		if err := run(i, false); err != nil {
			b.Fatal(err)
		}
	}
	took := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		if err := run(i%variants, true); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t))
	}
	slices.Sort(took)
	at := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(math.Ceil(p*float64(len(took))))-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// Size is the number of posts a benchmark loads: AVIARY_BENCH_POSTS, or
// 100,000 (make bench sets 1,000,000).
func Size(tb testing.TB) int {
	v := os.Getenv("AVIARY_BENCH_POSTS")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		tb.Fatalf("AVIARY_BENCH_POSTS=%q: want a number of at least 1000", v)
	}
	return n
}
