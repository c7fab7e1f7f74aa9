package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// AppUsageSettings loads an app's caps and credits (zero settings when none
// were ever set).
func (db *DB) AppUsageSettings(ctx context.Context, appID int64) (storage.UsageSettings, error) {
	s := storage.UsageSettings{AppID: appID}
	err := db.pool.QueryRow(ctx, `SELECT read_cap, write_cap, credits_added FROM app_usage_settings WHERE app_id = $1`, appID).
		Scan(&s.ReadCap, &s.WriteCap, &s.CreditsAdded)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	return s, wrap(fmt.Sprintf("load usage settings of app %d", appID), err)
}

// SetAppUsageCaps sets the caps of an app that are given (non-nil); a
// negative value clears that cap back to the server's default.
func (db *DB) SetAppUsageCaps(ctx context.Context, appID int64, readCap, writeCap *int64) (storage.UsageSettings, error) {
	_, err := db.pool.Exec(ctx, `INSERT INTO app_usage_settings (app_id, read_cap, write_cap)
		VALUES ($1, CASE WHEN $2::bigint < 0 THEN NULL ELSE $2 END, CASE WHEN $3::bigint < 0 THEN NULL ELSE $3 END)
		ON CONFLICT (app_id) DO UPDATE SET
		  read_cap = CASE WHEN $2 IS NULL THEN app_usage_settings.read_cap WHEN $2 < 0 THEN NULL ELSE $2 END,
		  write_cap = CASE WHEN $3 IS NULL THEN app_usage_settings.write_cap WHEN $3 < 0 THEN NULL ELSE $3 END,
		  updated_at = now()`, appID, readCap, writeCap)
	if err != nil {
		return storage.UsageSettings{}, wrap(fmt.Sprintf("set usage caps of app %d", appID), err)
	}
	return db.AppUsageSettings(ctx, appID)
}

// AddAppCredits adds n credits (negative: takes them away) to an app.
func (db *DB) AddAppCredits(ctx context.Context, appID, n int64) (storage.UsageSettings, error) {
	_, err := db.pool.Exec(ctx, `INSERT INTO app_usage_settings (app_id, credits_added) VALUES ($1, $2)
		ON CONFLICT (app_id) DO UPDATE SET credits_added = app_usage_settings.credits_added + $2, updated_at = now()`, appID, n)
	if err != nil {
		return storage.UsageSettings{}, wrap(fmt.Sprintf("add credits to app %d", appID), err)
	}
	return db.AppUsageSettings(ctx, appID)
}

// AddUsage adds each day's counts to the recorded ones, in one
// transaction.
func (db *DB) AddUsage(ctx context.Context, days []storage.UsageDay) error {
	if len(days) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, d := range days {
		batch.Queue(`INSERT INTO app_usage_daily (app_id, day, posts_read, posts_written, users_read, credits_spent)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (app_id, day) DO UPDATE SET
			  posts_read = app_usage_daily.posts_read + EXCLUDED.posts_read,
			  posts_written = app_usage_daily.posts_written + EXCLUDED.posts_written,
			  users_read = app_usage_daily.users_read + EXCLUDED.users_read,
			  credits_spent = app_usage_daily.credits_spent + EXCLUDED.credits_spent`,
			d.AppID, d.Day.UTC().Format(time.DateOnly), d.PostsRead, d.PostsWritten, d.UsersRead, d.CreditsSpent)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return wrap("begin usage record", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return wrap(fmt.Sprintf("record usage of %d app days", len(days)), err)
	}
	return wrap("commit usage record", tx.Commit(ctx))
}

// UsageDays lists an app's recorded days from from to to (both dates,
// inclusive), oldest first; days without usage are absent.
func (db *DB) UsageDays(ctx context.Context, appID int64, from, to time.Time) ([]storage.UsageDay, error) {
	rows, err := db.pool.Query(ctx, `SELECT day, posts_read, posts_written, users_read, credits_spent FROM app_usage_daily
		WHERE app_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day`, appID, from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly))
	if err != nil {
		return nil, wrap(fmt.Sprintf("read usage days of app %d", appID), err)
	}
	defer rows.Close()
	var out []storage.UsageDay
	for rows.Next() {
		d := storage.UsageDay{AppID: appID}
		if err := rows.Scan(&d.Day, &d.PostsRead, &d.PostsWritten, &d.UsersRead, &d.CreditsSpent); err != nil {
			return nil, wrap("scan usage day", err)
		}
		d.Day = d.Day.UTC()
		out = append(out, d)
	}
	return out, wrap("read usage days", rows.Err())
}

// UsageSince sums an app's recorded usage from the date from (inclusive);
// the zero time sums all of it.
func (db *DB) UsageSince(ctx context.Context, appID int64, from time.Time) (storage.UsageCounts, error) {
	var c storage.UsageCounts
	err := db.pool.QueryRow(ctx, `SELECT coalesce(sum(posts_read),0)::bigint, coalesce(sum(posts_written),0)::bigint,
		coalesce(sum(users_read),0)::bigint, coalesce(sum(credits_spent),0)::bigint
		FROM app_usage_daily WHERE app_id = $1 AND day >= $2`, appID, from.UTC().Format(time.DateOnly)).
		Scan(&c.PostsRead, &c.PostsWritten, &c.UsersRead, &c.CreditsSpent)
	return c, wrap(fmt.Sprintf("sum usage of app %d", appID), err)
}
