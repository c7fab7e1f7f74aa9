package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// insightsLock is the advisory lock key of the change log's applier: one
// transaction at a time applies changes, in log order.
const insightsLock = 0x61766961727969 // "aviaryi"

// ApplyInsightChanges takes the oldest changes of the log, adds what they
// make to the aggregates and deletes them, in one transaction: a batch is
// applied once or not at all, whatever happens to the worker. Only one
// transaction applies at a time; another finds Busy.
func (db *DB) ApplyInsightChanges(ctx context.Context, a storage.InsightApply) (storage.InsightBatch, error) {
	var out storage.InsightBatch
	if a.Limit <= 0 {
		a.Limit = 1000
	}
	err := db.inTx(ctx, "apply insight changes", func(tx pgx.Tx) error {
		var locked bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, insightsLock).Scan(&locked); err != nil {
			return err
		}
		if !locked {
			out.Busy = true
			return nil
		}
		changes, err := loadInsightChanges(ctx, tx, a.Limit)
		if err != nil || len(changes) == 0 {
			return err
		}
		out.Changes, out.Oldest = len(changes), changes[0].RecordedAt
		seqs := make([]int64, len(changes))
		for i, c := range changes {
			seqs[i] = c.Seq
			if c.RecordedAt.Before(out.Oldest) {
				out.Oldest = c.RecordedAt
			}
		}
		d := a.Compute(changes)
		if err := addCounts(ctx, tx, hoursAggregate, d.Hours, hourKey); err != nil {
			return err
		}
		if err := addCounts(ctx, tx, pairsAggregate, d.Pairs, pairKey); err != nil {
			return err
		}
		if err := addCounts(ctx, tx, daysAggregate, d.Days, dayKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM insight_changes WHERE seq = ANY($1)`, seqs); err != nil {
			return fmt.Errorf("delete applied changes: %w", err)
		}
		if a.AfterWrite != nil {
			return a.AfterWrite(ctx)
		}
		return nil
	})
	return out, err
}

func loadInsightChanges(ctx context.Context, tx pgx.Tx, limit int) ([]storage.InsightChange, error) {
	rows, err := tx.Query(ctx, `SELECT seq, post_id, delta, posted_at, country_code, text, recorded_at
		FROM insight_changes ORDER BY seq LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("load insight changes: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.InsightChange, error) {
		var c storage.InsightChange
		err := row.Scan(&c.Seq, &c.PostID, &c.Delta, &c.PostedAt, &c.CountryCode, &c.Text, &c.RecordedAt)
		return c, err
	})
}

// aggregate is one aggregate table's statements: upsert adds the deltas'
// columns ($1 terms, $2 countries, $3 times, then $4 co-terms when the
// table has them, then the counts), remove deletes the buckets left at
// zero (or below, which only a hand-edited log could cause) among the
// keys of the negative deltas.
type aggregate struct {
	name           string
	coTerm         bool
	upsert, remove string
}

var (
	hoursAggregate = aggregate{name: "term hours",
		upsert: `INSERT INTO insight_term_hours AS a (term, country_code, hour, posts)
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[])
		ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		remove: `DELETE FROM insight_term_hours a
		USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS d(term, country_code, hour)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.hour = d.hour AND a.posts <= 0`}
	pairsAggregate = aggregate{name: "term pairs", coTerm: true,
		upsert: `INSERT INTO insight_term_pairs AS a (term, country_code, day, co_term, posts)
		SELECT t, c, (d AT TIME ZONE 'UTC')::date, co, n FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[]) AS u(t, c, d, co, n)
		ON CONFLICT (term, country_code, day, co_term) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		remove: `DELETE FROM insight_term_pairs a
		USING unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS d(term, country_code, day, co_term)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.day = (d.day AT TIME ZONE 'UTC')::date
		  AND a.co_term = d.co_term AND a.posts <= 0`}
	daysAggregate = aggregate{name: "term days",
		upsert: `INSERT INTO insight_term_days AS a (term, country_code, day, posts)
		SELECT t, c, (d AT TIME ZONE 'UTC')::date, n FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS u(t, c, d, n)
		ON CONFLICT (term, country_code, day) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		remove: `DELETE FROM insight_term_days a
		USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS d(term, country_code, day)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.day = (d.day AT TIME ZONE 'UTC')::date AND a.posts <= 0`}
)

// countColumns are deltas as the columns unnest takes.
type countColumns struct {
	terms, countries, coTerms []string
	times                     []time.Time
	posts                     []int32
}

func (c *countColumns) add(term, country string, at time.Time, coTerm string, n int) {
	c.terms, c.countries, c.coTerms = append(c.terms, term), append(c.countries, country), append(c.coTerms, coTerm)
	c.times, c.posts = append(c.times, at), append(c.posts, int32(n))
}

func (c *countColumns) args(coTerm, posts bool) []any {
	a := []any{c.terms, c.countries, c.times}
	if coTerm {
		a = append(a, c.coTerms)
	}
	if posts {
		a = append(a, c.posts)
	}
	return a
}

// addCounts adds deltas (by key) to one aggregate with key giving each
// key's columns.
func addCounts[K comparable](ctx context.Context, tx pgx.Tx, agg aggregate, deltas map[K]int,
	key func(K) (term, country string, at time.Time, coTerm string)) error {
	var all, drops countColumns
	for k, n := range deltas {
		term, country, at, co := key(k)
		if n != 0 {
			all.add(term, country, at, co, n)
		}
		if n < 0 {
			drops.add(term, country, at, co, n)
		}
	}
	if len(all.terms) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, agg.upsert, all.args(agg.coTerm, true)...); err != nil {
		return fmt.Errorf("add %s: %w", agg.name, err)
	}
	if len(drops.terms) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, agg.remove, drops.args(agg.coTerm, false)...); err != nil {
		return fmt.Errorf("remove empty %s: %w", agg.name, err)
	}
	return nil
}

func hourKey(k storage.TermHourKey) (string, string, time.Time, string) {
	return k.Term, k.CountryCode, k.Hour, ""
}

func pairKey(k storage.TermPairKey) (string, string, time.Time, string) {
	return k.Term, k.CountryCode, k.Day, k.CoTerm
}

func dayKey(k storage.TermDayKey) (string, string, time.Time, string) {
	return k.Term, k.CountryCode, k.Day, ""
}

// InsightBacklog is the change log's length and the age of its oldest
// row at now (zero when empty).
func (db *DB) InsightBacklog(ctx context.Context, now time.Time) (int64, time.Duration, error) {
	var n int64
	var oldest *time.Time
	err := db.pool.QueryRow(ctx, `SELECT count(*), min(recorded_at) FROM insight_changes`).Scan(&n, &oldest)
	if err != nil {
		return 0, 0, wrap("insight backlog", err)
	}
	if oldest == nil {
		return n, 0, nil
	}
	return n, max(0, now.Sub(*oldest)), nil
}

// HasInsightChanges reports whether the change log holds a row.
func (db *DB) HasInsightChanges(ctx context.Context) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM insight_changes)`).Scan(&ok)
	return ok, wrap("has insight changes", err)
}

// SetPlace adds or replaces a place posts may name in geo.place_id.
func (db *DB) SetPlace(ctx context.Context, p storage.Place) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO places (id, country_code, full_name) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET country_code = EXCLUDED.country_code, full_name = EXCLUDED.full_name`,
		p.ID, p.CountryCode, p.FullName)
	return wrap("set place", err)
}
