package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// newsLock is the advisory lock key of story upserts: one transaction at a
// time decides whether a build refreshes a story or starts one.
const newsLock = 0x6176696172796e // "aviaryn"

// newsColumns are the columns scanNewsStory reads, from a query naming the
// table s.
const newsColumns = `s.id, s.lead_term, s.keywords, s.name, s.summary, s.hook, s.category, s.contexts,
	s.post_ids, s.posts, s.source_post_ids, s.source_author_ids, s.lead_last_hour, s.lead_baseline, s.lead_day,
	s.stale_at, s.withdrawn_at, s.created_at, s.updated_at`

// newsServed is the condition of a story the API may serve: not stale (a
// source stopped being visible since it was built) and not withdrawn.
const newsServed = `s.stale_at IS NULL AND s.withdrawn_at IS NULL`

// newsVisiblePost is the condition of a post (p, by author u) a story may be
// built from and show: a live original, the latest version of its edit
// chain, by an author anyone may see.
const newsVisiblePost = `p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
	AND u.protected_at IS NULL AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL`

func scanNewsStory(row pgx.Row) (storage.NewsStory, error) {
	var s storage.NewsStory
	err := row.Scan(&s.ID, &s.LeadTerm, &s.Keywords, &s.Name, &s.Summary, &s.Hook, &s.Category, &s.Contexts,
		&s.PostIDs, &s.Posts, &s.Sources, &s.SourceAuthors, &s.Lead.LastHour, &s.Lead.Baseline, &s.Lead.Day,
		&s.StaleAt, &s.WithdrawnAt, &s.CreatedAt, &s.UpdatedAt)
	s.Contexts = s.Contexts.Normalized()
	s.Lead.Term = s.LeadTerm
	return s, err
}

// UpsertNewsStory stores a story built at now around s.LeadTerm. Among the
// stories updated within storage.NewsRefreshWindow and not withdrawn, the
// one whose lead term is s.LeadTerm, else the most recently updated one
// whose keywords hold s.LeadTerm (the term used to follow a stronger lead)
// or whose lead term is one of s.Keywords (its lead now follows this one),
// is refreshed in place: it keeps its id and created_at and takes every
// other field of s. Without one, a new story is inserted (created reports
// it). Stories whose ids are in exclude (refreshed earlier in the same run)
// are never matched, so one run never folds two builds into one story. The
// story is stored stale when one of s.Sources is no longer visible
// (writeNewsStory).
func (db *DB) UpsertNewsStory(ctx context.Context, s storage.NewsStory, now time.Time, exclude []int64) (storage.NewsStory, bool, error) {
	var out storage.NewsStory
	created := false
	if exclude == nil {
		exclude = []int64{}
	}
	err := db.inTx(ctx, fmt.Sprintf("upsert news story %q", s.LeadTerm), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, newsLock); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, `SELECT s.id FROM news_stories s
			WHERE s.updated_at >= $2 AND NOT (s.id = ANY($3)) AND s.withdrawn_at IS NULL
			  AND (s.lead_term = $1 OR s.keywords @> ARRAY[$1::text] OR s.lead_term = ANY($4))
			ORDER BY (s.lead_term = $1) DESC, s.updated_at DESC, s.id DESC LIMIT 1`,
			s.LeadTerm, now.Add(-storage.NewsRefreshWindow), exclude, nonNilText(s.Keywords)).Scan(&id)
		switch {
		case err == nil:
		case errors.Is(err, pgx.ErrNoRows):
			created = true
		default:
			return fmt.Errorf("find the story: %w", err)
		}
		out, err = writeNewsStory(ctx, tx, id, s, now)
		if err != nil || !created {
			return err
		}
		return appendNewsNew(ctx, tx, out)
	})
	if err != nil {
		return storage.NewsStory{}, false, err
	}
	return out, created, nil
}

// RebuildNewsStory replaces story s.ID (not withdrawn) with s, rebuilt at
// now from the sources still visible; storage.ErrNotFound when it is
// withdrawn or gone.
func (db *DB) RebuildNewsStory(ctx context.Context, s storage.NewsStory, now time.Time) (storage.NewsStory, error) {
	var out storage.NewsStory
	err := db.inTx(ctx, fmt.Sprintf("rebuild news story %d", s.ID), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, newsLock); err != nil {
			return err
		}
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM news_stories WHERE id = $1 AND withdrawn_at IS NULL`, s.ID).Scan(&one)
		if err != nil {
			return err
		}
		out, err = writeNewsStory(ctx, tx, s.ID, s, now)
		return err
	})
	return out, wrap(fmt.Sprintf("rebuild news story %d", s.ID), err)
}

// writeNewsStory updates story id (0: inserts one) with s, updated at now.
// Its sources are locked first (FOR SHARE) and the story is written stale
// unless every one of them is still visible: a source hidden by a
// transaction that commits before this one is seen here, and one hidden
// after waits for this commit, then its trigger finds the story
// (migration 0020). So a story is never served with a source gone. Rows are
// locked in id order, a stable order.
func writeNewsStory(ctx context.Context, tx pgx.Tx, id int64, s storage.NewsStory, now time.Time) (storage.NewsStory, error) {
	s.Contexts = s.Contexts.Normalized()
	if s.Category == "" {
		s.Category = storage.NewsCategory
	}
	sources := nonNil(s.Sources)
	rows, err := tx.Query(ctx, `SELECT p.id FROM posts p JOIN users u ON u.id = p.author_id
		WHERE p.id = ANY($1) AND `+newsVisiblePost+` ORDER BY p.id FOR SHARE OF p, u`, sources)
	if err != nil {
		return storage.NewsStory{}, fmt.Errorf("lock the sources: %w", err)
	}
	visible, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return storage.NewsStory{}, fmt.Errorf("lock the sources: %w", err)
	}
	var stale *time.Time
	if len(visible) < len(sources) {
		stale = &now
	}
	args := []any{id, s.LeadTerm, nonNilText(s.Keywords), s.Name, s.Summary, s.Hook, s.Category, s.Contexts,
		nonNil(s.PostIDs), s.Posts, sources, nonNil(s.SourceAuthors), s.Lead.LastHour, s.Lead.Baseline, s.Lead.Day, stale, now}
	if id != 0 {
		return scanNewsStory(tx.QueryRow(ctx, `UPDATE news_stories s SET lead_term = $2, keywords = $3, name = $4,
			summary = $5, hook = $6, category = $7, contexts = $8, post_ids = $9, posts = $10, source_post_ids = $11,
			source_author_ids = $12, lead_last_hour = $13, lead_baseline = $14, lead_day = $15, stale_at = $16, updated_at = $17
			WHERE s.id = $1 RETURNING `+newsColumns, args...))
	}
	return scanNewsStory(tx.QueryRow(ctx, `INSERT INTO news_stories AS s (lead_term, keywords, name, summary, hook,
			category, contexts, post_ids, posts, source_post_ids, source_author_ids, lead_last_hour, lead_baseline,
			lead_day, stale_at, created_at, updated_at)
		SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17 WHERE $1::bigint = 0
		RETURNING `+newsColumns, args...))
}

// StaleNewsStories returns up to limit stories a source of which stopped
// being visible since they were built (and not withdrawn), the longest
// stale first.
func (db *DB) StaleNewsStories(ctx context.Context, limit int) ([]storage.NewsStory, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+newsColumns+` FROM news_stories s
		WHERE s.stale_at IS NOT NULL AND s.withdrawn_at IS NULL ORDER BY s.stale_at, s.id LIMIT $1`, limit)
	if err != nil {
		return nil, wrap("list stale news stories", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.NewsStory, error) { return scanNewsStory(row) })
	return out, wrap("scan stale news stories", err)
}

// NewsSources returns the posts of ids that still exist, each with whether
// a story may show it (live, the latest version, by a public author).
func (db *DB) NewsSources(ctx context.Context, ids []int64) ([]storage.NewsSource, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+postColumns+`, (`+newsVisiblePost+`)
		FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1) ORDER BY p.created_at DESC, p.id DESC`, nonNil(ids))
	if err != nil {
		return nil, wrap("query news sources", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.NewsSource, error) {
		var src storage.NewsSource
		err := row.Scan(append(postFields(&src.Post), &src.Visible)...)
		return src, err
	})
	return out, wrap("scan news sources", err)
}

// WithdrawNewsStory withdraws story id at now: none of its sources is
// visible any more. It is never served nor refreshed again.
func (db *DB) WithdrawNewsStory(ctx context.Context, id int64, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE news_stories SET withdrawn_at = $2, stale_at = NULL, name = '', summary = '',
		hook = '', keywords = '{}', contexts = '{}', post_ids = '{}', posts = 0
		WHERE id = $1 AND withdrawn_at IS NULL`, id, now)
	return wrap(fmt.Sprintf("withdraw news story %d", id), err)
}

// NewsStoryByID returns a story the API may serve; storage.ErrNotFound
// when there is none, or it is stale or withdrawn.
func (db *DB) NewsStoryByID(ctx context.Context, id int64) (storage.NewsStory, error) {
	s, err := scanNewsStory(db.pool.QueryRow(ctx, `SELECT `+newsColumns+` FROM news_stories s
		WHERE s.id = $1 AND `+newsServed, id))
	return s, wrap(fmt.Sprintf("load news story %d", id), err)
}

// SearchNewsStories returns the stories updated at or after q.Since whose
// name, summary or keywords hold every word of q.Words (no word: every
// story), newest first (updated_at, then id), at most q.Limit. Stale and
// withdrawn stories are left out.
func (db *DB) SearchNewsStories(ctx context.Context, q storage.NewsSearch) ([]storage.NewsStory, error) {
	words := nonNilText(q.Words)
	rows, err := db.pool.Query(withBound(ctx, SearchCallTimeout), `SELECT `+newsColumns+` FROM news_stories s
		WHERE s.updated_at >= $1 AND `+newsServed+`
		  AND (cardinality($2::text[]) = 0 OR s.search_vector @@ plainto_tsquery('simple', array_to_string($2::text[], ' ')))
		ORDER BY s.updated_at DESC, s.id DESC LIMIT $3`, q.Since, words, q.Limit)
	if err != nil {
		return nil, wrap("search news stories", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.NewsStory, error) { return scanNewsStory(row) })
	return out, wrap("scan news stories", err)
}

// SpikingTerms returns the terms of insight_term_hours that spike at q.Now
// (storage.SpikeQuery; docs/news.md), worldwide (the '*' rows), strongest
// first. The estimate of the last 60 minutes takes the current hour's
// bucket and the part of the previous hour's bucket that lies within them
// (assuming its posts spread evenly); the baseline is the hourly average
// of the 24 buckets before the previous one.
func (db *DB) SpikingTerms(ctx context.Context, q storage.SpikeQuery) ([]storage.SpikingTerm, error) {
	now := q.Now.UTC()
	cur := now.Truncate(time.Hour)
	prev := cur.Add(-time.Hour)
	prevShare := 1 - float64(now.Sub(cur))/float64(time.Hour)
	rows, err := db.pool.Query(withBound(ctx, SearchCallTimeout), `WITH b AS (
			SELECT h.term,
				coalesce(sum(h.posts) FILTER (WHERE h.hour = $1), 0)::float8 AS cur,
				coalesce(sum(h.posts) FILTER (WHERE h.hour = $2), 0)::float8 AS prev,
				coalesce(sum(h.posts) FILTER (WHERE h.hour < $2), 0)::float8 AS base,
				coalesce(sum(h.posts) FILTER (WHERE h.hour > $1 - interval '24 hours'), 0)::int AS day
			FROM insight_term_hours h
			WHERE h.country_code = '*' AND h.hour >= $2 - interval '24 hours' AND h.hour <= $1 AND h.term <> ''
			GROUP BY h.term
		), s AS (
			SELECT term, cur + prev * $3::float8 AS last, base / 24 AS baseline, day FROM b
		)
		SELECT term, last, baseline, day FROM s
		WHERE last >= $4 AND (last + 1) / (baseline + 1) >= $5
		ORDER BY last - baseline DESC, term
		LIMIT $6`, cur, prev, prevShare, q.MinPosts, q.MinRatio, q.Limit)
	if err != nil {
		return nil, wrap("query spiking terms", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.SpikingTerm, error) {
		var s storage.SpikingTerm
		err := row.Scan(&s.Term, &s.LastHour, &s.Baseline, &s.Day)
		return s, err
	})
	return out, wrap("scan spiking terms", err)
}

// NewsClusterPosts returns up to q.Limit posts created at or after q.Since
// whose text holds q.Term, newest first: live originals (not reposts, not
// deleted, the latest version of their edit chain) of authors anyone may
// see (not protected, suspended, deactivated or deleted). A "#tag",
// "$tag" or "@name" term matches the post's hashtags, cashtags or
// mentions; a word matches its search_vector, as search matches keywords.
func (db *DB) NewsClusterPosts(ctx context.Context, q storage.ClusterQuery) ([]storage.Post, error) {
	var match string
	var arg any
	switch {
	case q.Term == "":
		return nil, nil
	case q.Term[0] == '#':
		match, arg = "p.hashtags @> $1::text[]", []string{q.Term[1:]}
	case q.Term[0] == '$':
		match, arg = "p.cashtags @> $1::text[]", []string{q.Term[1:]}
	case q.Term[0] == '@':
		match, arg = "p.mentions @> $1::text[]", []string{q.Term[1:]}
	default:
		match, arg = "p.search_vector @@ phraseto_tsquery('simple', $1::text)", q.Term
	}
	rows, err := db.pool.Query(withBound(ctx, SearchCallTimeout), `SELECT `+postColumns+`
		FROM posts p JOIN users u ON u.id = p.author_id
		WHERE `+match+` AND p.created_at >= $2
		  AND `+newsVisiblePost+`
		ORDER BY p.created_at DESC, p.id DESC
		LIMIT $3`, arg, q.Since, q.Limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("query cluster posts of %q", q.Term), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Post, error) { return scanPost(row) })
	return out, wrap(fmt.Sprintf("scan cluster posts of %q", q.Term), err)
}
