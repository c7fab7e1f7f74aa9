package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
)

// The read side of keyword insights (docs/insights-api.md): every answer
// comes from the aggregates (insight_term_hours, insight_term_pairs), never
// from posts. A worldwide question reads the rows of the country '*'
// (storage.AllCountries) that the applier keeps beside each country's, so
// every statement is bound on its primary key's leading columns.

// relatedCandidates is how many co-terms (by co-occurrence) are scored.
const relatedCandidates = 200

// insightDay is how a UTC day is passed to SQL: as text, so the session's
// TimeZone never shifts it.
const insightDay = "2006-01-02"

// insightBuckets is how many buckets of q.Granularity cover [Start, End).
func insightBuckets(q storage.InsightQuery) int {
	if q.Granularity <= 0 || !q.End.After(q.Start) {
		return 0
	}
	span := q.End.Sub(q.Start)
	return int((span + q.Granularity - 1) / q.Granularity)
}

// insightDays are the UTC days [Start, End) touches, as text.
func insightDays(q storage.InsightQuery) []string {
	if !q.End.After(q.Start) {
		return nil
	}
	var days []string
	last := q.End.Add(-time.Nanosecond).UTC().Truncate(24 * time.Hour)
	for d := q.Start.UTC().Truncate(24 * time.Hour); !d.After(last); d = d.Add(24 * time.Hour) {
		days = append(days, d.Format(insightDay))
	}
	return days
}

// uniqueTerms is terms without repeats, in order.
func uniqueTerms(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// termHours are the term hours of the keywords in one country (or '*').
const termHours = `SELECT term, hour, posts::bigint FROM insight_term_hours
	WHERE term = ANY($1::text[]) AND country_code = $4 AND hour >= $2 AND hour < $3`

// insightCountry is the country_code of the rows answering q.
func insightCountry(q storage.InsightQuery) string {
	if q.CountryCode == "" {
		return storage.AllCountries
	}
	return q.CountryCode
}

// KeywordVolumes is the number of posts holding any of q.Keywords and
// none of q.NegativeKeywords per bucket of q.Granularity from q.Start
// (bucket i covers the hours h with Start+i*g <= h < min(Start+(i+1)*g,
// End)), in q.CountryCode or every country. Each keyword's hourly counts
// are exact; the overlap between keywords (a post holding two counts once)
// and the negatives are estimated from the sampled pairs of the window's
// days: keyword k counts with the factor
//
//	max(0, 1 - sum_{j<k} pairs(k,k_j)/days(k) - sum_n pairs(k,n)/days(k))
//
// (days(k): k's sampled posts, insight_term_days; 1 when it is 0), and a bucket is the rounded sum of the
// keywords' factored counts.
func (db *DB) KeywordVolumes(ctx context.Context, q storage.InsightQuery) ([]int64, error) {
	out := make([]int64, insightBuckets(q))
	kws := uniqueTerms(q.Keywords)
	if len(out) == 0 || len(kws) == 0 {
		return out, nil
	}
	factors, err := db.volumeFactors(ctx, q, kws)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, termHours, kws, q.Start, q.End, insightCountry(q))
	if err != nil {
		return nil, wrap("keyword volumes", err)
	}
	sums := make([]float64, len(out))
	var term string
	var hour time.Time
	var posts int64
	_, err = pgx.ForEachRow(rows, []any{&term, &hour, &posts}, func() error {
		if b := int(hour.Sub(q.Start) / q.Granularity); b >= 0 && b < len(sums) {
			sums[b] += float64(posts) * factors[term]
		}
		return nil
	})
	if err != nil {
		return nil, wrap("keyword volumes", err)
	}
	for i, s := range sums {
		out[i] = int64(math.Round(s))
	}
	return out, nil
}

// factorPairs are the sampled pairs of the keywords with the other
// keywords and the negatives, and the keywords' own sampled posts (as the
// pair (k, k)), summed over the window's days, in one country (or '*').
const factorPairs = `SELECT term, co_term, sum(posts)::bigint FROM insight_term_pairs
	WHERE term = ANY($1::text[]) AND country_code = $4 AND day >= $3::text::date AND day <= $5::text::date AND co_term = ANY($2::text[])
	GROUP BY term, co_term
	UNION ALL
	SELECT term, term, sum(posts)::bigint FROM insight_term_days
	WHERE term = ANY($1::text[]) AND country_code = $4 AND day >= $3::text::date AND day <= $5::text::date
	GROUP BY term`

// volumeFactors is each keyword's factor (KeywordVolumes); one keyword
// without negatives needs no pairs: its factor is 1.
func (db *DB) volumeFactors(ctx context.Context, q storage.InsightQuery, kws []string) (map[string]float64, error) {
	factors := make(map[string]float64, len(kws))
	for _, k := range kws {
		factors[k] = 1
	}
	negs := uniqueTerms(q.NegativeKeywords)
	if len(kws) == 1 && len(negs) == 0 {
		return factors, nil
	}
	days := insightDays(q)
	if len(days) == 0 {
		return factors, nil
	}
	rows, err := db.pool.Query(ctx, factorPairs, kws, uniqueTerms(append(slices.Clone(kws), negs...)), days[0], insightCountry(q), days[len(days)-1])
	if err != nil {
		return nil, wrap("keyword volume factors", err)
	}
	pairs := map[[2]string]int64{}
	var term, co string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&term, &co, &n}, func() error {
		pairs[[2]string{term, co}] = n
		return nil
	}); err != nil {
		return nil, wrap("keyword volume factors", err)
	}
	for i, k := range kws {
		if slices.Contains(negs, k) { // every post of k holds a negative
			factors[k] = 0
			continue
		}
		self := float64(pairs[[2]string{k, k}])
		if self <= 0 {
			continue
		}
		f := 1.0
		for _, j := range kws[:i] {
			f -= float64(pairs[[2]string{k, j}]) / self
		}
		for _, neg := range negs {
			f -= float64(pairs[[2]string{k, neg}]) / self
		}
		factors[k] = max(0, f)
	}
	return factors, nil
}

// candidates are the co-terms of the keywords by co-occurrence in the
// sampled posts of the window, the excluded terms left out.
const candidates = `SELECT co_term, sum(posts)::bigint AS c FROM insight_term_pairs
	WHERE term = ANY($1::text[]) AND country_code = $5 AND day >= $2::text::date AND day <= $3::text::date
	  AND co_term <> ALL($4::text[])
	GROUP BY co_term ORDER BY c DESC, co_term LIMIT $6`

// frequencies are the sampled posts holding each term over the window's
// days (the empty term gives the sampled posts): a short range of index
// entries per term (a day range, not a day list, keeps the range tight).
const frequencies = `SELECT term, sum(posts)::bigint FROM insight_term_days
	WHERE term = ANY($1::text[]) AND country_code = $3 AND day >= $2::text::date AND day <= $4::text::date
	GROUP BY term`

// RelatedKeywords are up to limit terms that occur with q.Keywords, from
// the sampled pairs of the window's UTC days in q.CountryCode (or every
// country): the relatedCandidates co-terms u with the most co-occurrences
// c(u) = sum over keywords k of pairs(k,u) (neither a keyword, a negative
// keyword, the word form of a #hashtag or $cashtag keyword, nor a
// stopword) are scored c(u) * ln(1 + N/df(u)), df(u) = days(u) and N =
// days of the empty term (the sampled posts), best first, ties by term. Two
// statements.
func (db *DB) RelatedKeywords(ctx context.Context, q storage.InsightQuery, limit int) ([]string, error) {
	days := insightDays(q)
	if limit <= 0 || len(q.Keywords) == 0 || len(days) == 0 {
		return []string{}, nil
	}
	kws := uniqueTerms(q.Keywords)
	excluded := []string{""}
	for _, k := range kws {
		excluded = append(excluded, k)
		if k[0] == '#' || k[0] == '$' {
			excluded = append(excluded, k[1:])
		}
	}
	excluded = uniqueTerms(append(excluded, q.NegativeKeywords...))
	// Stopwords are never paired; fetching twice the candidates keeps the
	// count should some be there.
	fetch := 2 * relatedCandidates
	rows, err := db.pool.Query(ctx, candidates, kws, days[0], days[len(days)-1], excluded, insightCountry(q), fetch)
	if err != nil {
		return nil, wrap("related keyword candidates", err)
	}
	type candidate struct {
		term  string
		c, df int64
		score float64
	}
	var cands []candidate
	var term string
	var c int64
	if _, err := pgx.ForEachRow(rows, []any{&term, &c}, func() error {
		if len(cands) < relatedCandidates && !posttext.IsStopword(term) {
			cands = append(cands, candidate{term: term, c: c})
		}
		return nil
	}); err != nil {
		return nil, wrap("related keyword candidates", err)
	}
	if len(cands) == 0 {
		return []string{}, nil
	}
	terms := make([]string, 0, len(cands)+1)
	for _, cd := range cands {
		terms = append(terms, cd.term)
	}
	terms = append(terms, "") // N
	rows, err = db.pool.Query(ctx, frequencies, terms, days[0], insightCountry(q), days[len(days)-1])
	if err != nil {
		return nil, wrap("related keyword frequencies", err)
	}
	df := make(map[string]int64, len(terms))
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&term, &n}, func() error {
		df[term] = n
		return nil
	}); err != nil {
		return nil, wrap("related keyword frequencies", err)
	}
	total := float64(df[""])
	for i := range cands {
		// A co-term is in at least one sampled post of its own; a missing
		// df (a bucket removed meanwhile) counts as that one.
		d := float64(max(df[cands[i].term], 1))
		cands[i].score = float64(cands[i].c) * math.Log1p(total/d)
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(a.term, b.term)
	})
	out := make([]string, 0, min(limit, len(cands)))
	for _, cd := range cands[:min(limit, len(cands))] {
		out = append(out, cd.term)
	}
	return out, nil
}

// RecordInsightQuery adds an answered keyword insights query to the log.
func (db *DB) RecordInsightQuery(ctx context.Context, l storage.InsightQueryLog) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO insight_queries (app_id, user_id, account_id, granularity, keywords,
		negative_keywords, location, start_time, end_time, buckets, related_keywords, total_volume, duration_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		l.AppID, l.UserID, l.AccountID, l.Granularity, nonNilTerms(l.Keywords), nonNilTerms(l.NegativeKeywords), l.Location,
		l.Start, l.End, l.Buckets, l.RelatedKeywords, l.TotalVolume, float64(l.Duration)/float64(time.Millisecond))
	return wrap("record insight query", err)
}

func nonNilTerms(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// defaultInsightQueries is how many queries InsightQueries returns when
// limit is not positive.
const defaultInsightQueries = 100

// InsightQueries are the logged queries recorded at or after since, newest
// first, at most limit (100 when limit is not positive).
func (db *DB) InsightQueries(ctx context.Context, since time.Time, limit int) ([]storage.InsightQueryLog, error) {
	if limit <= 0 {
		limit = defaultInsightQueries
	}
	rows, err := db.pool.Query(ctx, `SELECT `+insightQueryColumns+`
		FROM insight_queries WHERE created_at >= $1 ORDER BY created_at DESC, id DESC LIMIT $2`, since, limit)
	if err != nil {
		return nil, wrap("insight queries", err)
	}
	out, err := pgx.CollectRows(rows, scanInsightQuery)
	return out, wrap("insight queries", err)
}

// insightQueryColumns are read by scanInsightQuery.
const insightQueryColumns = `id, app_id, user_id, account_id, granularity, keywords, negative_keywords,
	location, start_time, end_time, buckets, related_keywords, total_volume, duration_ms, created_at`

func scanInsightQuery(row pgx.CollectableRow) (storage.InsightQueryLog, error) {
	var l storage.InsightQueryLog
	var ms float64
	err := row.Scan(&l.ID, &l.AppID, &l.UserID, &l.AccountID, &l.Granularity, &l.Keywords, &l.NegativeKeywords,
		&l.Location, &l.Start, &l.End, &l.Buckets, &l.RelatedKeywords, &l.TotalVolume, &ms, &l.CreatedAt)
	l.Duration = time.Duration(ms * float64(time.Millisecond))
	return l, err
}

// LowestAdAccountFor is the id of the lowest-id live account userID may
// use on the given side (sandbox or production), "" when there is none.
// Ads ids are base-36 numbers, so shorter ones are lower.
func (db *DB) LowestAdAccountFor(ctx context.Context, userID int64, sandbox bool) (string, error) {
	var id string
	err := db.pool.QueryRow(ctx, `SELECT a.id FROM ad_account_users u JOIN ad_accounts a ON a.id = u.account_id
		WHERE u.user_id = $1 AND a.sandbox = $2 AND NOT a.deleted
		ORDER BY length(a.id), a.id COLLATE "C" LIMIT 1`, userID, sandbox).Scan(&id)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("lowest ad account of user %d: %w", userID, translate(err))
	}
	return id, nil
}
