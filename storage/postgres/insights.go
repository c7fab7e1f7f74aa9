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
		if err := addTermHours(ctx, tx, d.Hours); err != nil {
			return err
		}
		if err := addTermPairs(ctx, tx, d.Pairs); err != nil {
			return err
		}
		if err := addTermDays(ctx, tx, d.Days); err != nil {
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

// addTermHours adds deltas to insight_term_hours; buckets left at zero
// (or below, which only a hand-edited log could cause) are removed.
func addTermHours(ctx context.Context, tx pgx.Tx, deltas map[storage.TermHourKey]int) error {
	var all, drops hourColumns
	for k, n := range deltas {
		if n != 0 {
			all.add(k, n)
		}
		if n < 0 {
			drops.add(k, n)
		}
	}
	if len(all.terms) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO insight_term_hours AS a (term, country_code, hour, posts)
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[])
		ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		all.terms, all.countries, all.hours, all.posts)
	if err != nil {
		return fmt.Errorf("add term hours: %w", err)
	}
	if len(drops.terms) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `DELETE FROM insight_term_hours a
		USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS d(term, country_code, hour)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.hour = d.hour AND a.posts <= 0`,
		drops.terms, drops.countries, drops.hours)
	if err != nil {
		return fmt.Errorf("remove empty term hours: %w", err)
	}
	return nil
}

// hourColumns are term hour deltas as the columns unnest takes.
type hourColumns struct {
	terms, countries []string
	hours            []time.Time
	posts            []int32
}

func (c *hourColumns) add(k storage.TermHourKey, n int) {
	c.terms, c.countries = append(c.terms, k.Term), append(c.countries, k.CountryCode)
	c.hours, c.posts = append(c.hours, k.Hour), append(c.posts, int32(n))
}

// addTermPairs adds deltas to insight_term_pairs, like addTermHours.
func addTermPairs(ctx context.Context, tx pgx.Tx, deltas map[storage.TermPairKey]int) error {
	var all, drops pairColumns
	for k, n := range deltas {
		if n != 0 {
			all.add(k, n)
		}
		if n < 0 {
			drops.add(k, n)
		}
	}
	if len(all.terms) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO insight_term_pairs AS a (term, country_code, day, co_term, posts)
		SELECT t, c, (d AT TIME ZONE 'UTC')::date, co, n FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[]) AS u(t, c, d, co, n)
		ON CONFLICT (term, country_code, day, co_term) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		all.terms, all.countries, all.days, all.coTerms, all.posts)
	if err != nil {
		return fmt.Errorf("add term pairs: %w", err)
	}
	if len(drops.terms) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `DELETE FROM insight_term_pairs a
		USING unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS d(term, country_code, day, co_term)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.day = (d.day AT TIME ZONE 'UTC')::date
		  AND a.co_term = d.co_term AND a.posts <= 0`,
		drops.terms, drops.countries, drops.days, drops.coTerms)
	if err != nil {
		return fmt.Errorf("remove empty term pairs: %w", err)
	}
	return nil
}

// pairColumns are term pair deltas as the columns unnest takes.
type pairColumns struct {
	terms, countries, coTerms []string
	days                      []time.Time
	posts                     []int32
}

func (c *pairColumns) add(k storage.TermPairKey, n int) {
	c.terms, c.countries, c.coTerms = append(c.terms, k.Term), append(c.countries, k.CountryCode), append(c.coTerms, k.CoTerm)
	c.days, c.posts = append(c.days, k.Day), append(c.posts, int32(n))
}

// addTermDays adds deltas to insight_term_days, like addTermHours.
func addTermDays(ctx context.Context, tx pgx.Tx, deltas map[storage.TermDayKey]int) error {
	var all, drops hourColumns
	for k, n := range deltas {
		h := storage.TermHourKey{Term: k.Term, CountryCode: k.CountryCode, Hour: k.Day}
		if n != 0 {
			all.add(h, n)
		}
		if n < 0 {
			drops.add(h, n)
		}
	}
	if len(all.terms) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO insight_term_days AS a (term, country_code, day, posts)
		SELECT t, c, (d AT TIME ZONE 'UTC')::date, n FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS u(t, c, d, n)
		ON CONFLICT (term, country_code, day) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
		all.terms, all.countries, all.hours, all.posts)
	if err != nil {
		return fmt.Errorf("add term days: %w", err)
	}
	if len(drops.terms) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `DELETE FROM insight_term_days a
		USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS d(term, country_code, day)
		WHERE a.term = d.term AND a.country_code = d.country_code AND a.day = (d.day AT TIME ZONE 'UTC')::date AND a.posts <= 0`,
		drops.terms, drops.countries, drops.hours)
	if err != nil {
		return fmt.Errorf("remove empty term days: %w", err)
	}
	return nil
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
