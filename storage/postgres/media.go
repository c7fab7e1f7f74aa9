package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Media uploads and their processing (docs/media-upload.md).

const mediaColumns = `id, media_key, owner_id, COALESCE(app_id, 0), media_type, media_category, kind, total_bytes,
	shared, additional_owners, state, progress_percent, error_code, error_name, error_message, width, height,
	duration_ms, aspect_ratio, output_type, output_key, preview_key, view_count, alt_text, attempts, created_at,
	expires_at, finalized_at, processed_at, swept_at`

func scanMedia(row pgx.Row) (storage.Media, error) {
	var m storage.Media
	err := row.Scan(&m.ID, &m.Key, &m.OwnerID, &m.AppID, &m.MediaType, &m.Category, &m.Kind, &m.TotalBytes,
		&m.Shared, &m.AdditionalOwners, &m.State, &m.ProgressPercent, &m.ErrorCode, &m.ErrorName, &m.ErrorMessage,
		&m.Width, &m.Height, &m.DurationMS, &m.AspectRatio, &m.OutputType, &m.OutputKey, &m.PreviewKey, &m.ViewCount,
		&m.AltText, &m.Attempts, &m.CreatedAt, &m.ExpiresAt, &m.FinalizedAt, &m.ProcessedAt, &m.SweptAt)
	return m, err
}

func collectMedia(rows pgx.Rows, err error) ([]storage.Media, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Media, error) { return scanMedia(row) })
}

// UserMediaElevated reports whether user id is premium or verified (the
// larger media limits).
func (db *DB) UserMediaElevated(ctx context.Context, id int64) (bool, error) {
	var elevated bool
	err := db.pool.QueryRow(ctx, `SELECT premium OR verified FROM users WHERE id = $1`, id).Scan(&elevated)
	return elevated, wrap(fmt.Sprintf("load media status of user %d", id), err)
}

// User flags an operator sets.
const (
	UserFlagPremium  = "premium"
	UserFlagVerified = "verified"
)

// SetUserFlag sets flag (UserFlagPremium or UserFlagVerified) of user id;
// a change of the verified flag appends profile.update.verified_badge in the
// same transaction.
func (db *DB) SetUserFlag(ctx context.Context, id int64, flag string, on bool) error {
	if flag != UserFlagPremium && flag != UserFlagVerified {
		return fmt.Errorf("set user flag %q: unknown flag", flag)
	}
	return db.inTx(ctx, fmt.Sprintf("set %s of user %d", flag, id), func(tx pgx.Tx) error {
		before, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		after, err := scanUser(tx.QueryRow(ctx, `UPDATE users u SET `+flag+` = $2 WHERE u.id = $1 RETURNING `+userColumns, id, on))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, profileEvents(before, after)...)
	})
}

// CreateMedia records a new upload session; m.ID (from NextID), Key and
// ExpiresAt are the caller's.
func (db *DB) CreateMedia(ctx context.Context, m storage.Media) (storage.Media, error) {
	out, err := scanMedia(db.pool.QueryRow(ctx, `INSERT INTO media (id, media_key, owner_id, app_id, media_type,
			media_category, kind, total_bytes, shared, additional_owners, expires_at, created_at)
		VALUES ($1, $2, $3, NULLIF($4::bigint, 0), $5, $6, $7, $8, $9, $10, $11, $12) RETURNING `+mediaColumns,
		m.ID, m.Key, m.OwnerID, m.AppID, m.MediaType, m.Category, m.Kind, m.TotalBytes, m.Shared,
		nonNil(m.AdditionalOwners), m.ExpiresAt, m.CreatedAt))
	return out, wrap(fmt.Sprintf("create media %d", m.ID), err)
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// Media loads media id.
func (db *DB) Media(ctx context.Context, id int64) (storage.Media, error) {
	m, err := scanMedia(db.pool.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = $1`, id))
	return m, wrap(fmt.Sprintf("load media %d", id), err)
}

// MediaByIDs loads the media of ids that exist, in no particular order.
func (db *DB) MediaByIDs(ctx context.Context, ids []int64) ([]storage.Media, error) {
	out, err := collectMedia(db.pool.Query(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = ANY($1)`, ids))
	return out, wrap("load media by ids", err)
}

// AddMediaSegment records a stored copy of a segment of media seg.MediaID.
// It holds the media row for share while it inserts, so it never lands
// after a finalize: when the upload no longer takes segments (finalized,
// or expired at at) it returns the media as stored and storage.ErrConflict.
func (db *DB) AddMediaSegment(ctx context.Context, seg storage.MediaSegment, at time.Time) (storage.Media, error) {
	var m storage.Media
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = scanMedia(tx.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = $1 FOR SHARE`, seg.MediaID))
		if err != nil {
			return err
		}
		if m.State != storage.MediaUploading || !at.Before(m.ExpiresAt) {
			return storage.ErrConflict
		}
		_, err = tx.Exec(ctx, `INSERT INTO media_segments (media_id, segment_index, blob_key, size, created_at)
			VALUES ($1, $2, $3, $4, $5)`, seg.MediaID, seg.Index, seg.Key, seg.Size, at)
		return err
	})
	return m, wrap(fmt.Sprintf("add segment %d to media %d", seg.Index, seg.MediaID), err)
}

// MediaSegments returns every stored copy of media id's segments, by index
// and then arrival.
func (db *DB) MediaSegments(ctx context.Context, id int64) ([]storage.MediaSegment, error) {
	rows, err := db.pool.Query(ctx, `SELECT media_id, segment_index, seq, blob_key, size FROM media_segments
		WHERE media_id = $1 ORDER BY segment_index, seq`, id)
	if err != nil {
		return nil, wrap(fmt.Sprintf("list segments of media %d", id), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.MediaSegment, error) {
		var s storage.MediaSegment
		err := row.Scan(&s.MediaID, &s.Index, &s.Seq, &s.Key, &s.Size)
		return s, err
	})
	return out, wrap(fmt.Sprintf("scan segments of media %d", id), err)
}

// FinalizeMedia ends media id's upload at at: with its row locked it checks
// the segments (storage.CheckSegments) and moves it to pending. A media no
// longer uploading, or whose session expired before at, is returned with
// storage.ErrConflict (the sweeper removes expired uploads); incomplete
// segments with a *storage.SegmentsError.
func (db *DB) FinalizeMedia(ctx context.Context, id int64, at time.Time) (storage.Media, error) {
	var m storage.Media
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = scanMedia(tx.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		if m.State != storage.MediaUploading || !at.Before(m.ExpiresAt) {
			return storage.ErrConflict
		}
		sizes, err := latestSizes(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := storage.CheckSegments(m.TotalBytes, sizes); err != nil {
			return err
		}
		m, err = scanMedia(tx.QueryRow(ctx, `UPDATE media SET state = 'pending', finalized_at = $2, expires_at = $3,
			swept_at = NULL WHERE id = $1 RETURNING `+mediaColumns, id, at, at.Add(storage.MediaUploadTTL)))
		return err
	})
	var segErr *storage.SegmentsError
	if errors.As(err, &segErr) {
		return m, err
	}
	return m, wrap(fmt.Sprintf("finalize media %d", id), err)
}

// latestSizes is the size of the newest copy of each segment of media id.
func latestSizes(ctx context.Context, tx pgx.Tx, id int64) (map[int]int64, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (segment_index) segment_index, size FROM media_segments
		WHERE media_id = $1 ORDER BY segment_index, seq DESC`, id)
	if err != nil {
		return nil, err
	}
	sizes := map[int]int64{}
	var idx int
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&idx, &size}, func() error {
		sizes[idx] = size
		return nil
	})
	return sizes, err
}

// StartMediaProcessing moves media id to in_progress for one more attempt.
// A media already final (or still uploading) is returned with
// storage.ErrConflict.
func (db *DB) StartMediaProcessing(ctx context.Context, id int64, at time.Time) (storage.Media, error) {
	m, err := scanMedia(db.pool.QueryRow(ctx, `UPDATE media SET state = 'in_progress', attempts = attempts + 1,
			progress_percent = 0 WHERE id = $1 AND state IN ('pending', 'in_progress') RETURNING `+mediaColumns, id))
	if err == nil || !errors.Is(translate(err), storage.ErrNotFound) {
		return m, wrap(fmt.Sprintf("start processing media %d", id), err)
	}
	if m, err = db.Media(ctx, id); err != nil {
		return m, err
	}
	return m, fmt.Errorf("start processing media %d in state %s: %w", id, m.State, storage.ErrConflict)
}

// SetMediaProgress records how far processing of media id is (0-99; 100
// comes with CompleteMedia).
func (db *DB) SetMediaProgress(ctx context.Context, id int64, percent int) error {
	_, err := db.pool.Exec(ctx, `UPDATE media SET progress_percent = $2 WHERE id = $1 AND state = 'in_progress'`,
		id, min(max(percent, 0), 99))
	return wrap(fmt.Sprintf("record progress of media %d", id), err)
}

// CompleteMedia records the result of processing media id at at. It
// returns storage.ErrConflict when the media is final already.
func (db *DB) CompleteMedia(ctx context.Context, id int64, r storage.MediaResult, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE media SET state = 'succeeded', progress_percent = 100, width = $2,
			height = $3, duration_ms = $4, aspect_ratio = $5, output_type = $6, output_key = $7, preview_key = $8,
			processed_at = $9 WHERE id = $1 AND state IN ('pending', 'in_progress')`,
		id, r.Width, r.Height, r.DurationMS, r.AspectRatio, r.OutputType, r.OutputKey, r.PreviewKey, at)
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrConflict
	}
	return wrap(fmt.Sprintf("complete media %d", id), err)
}

// FailMedia records that media id failed for good at at, with the error
// reported in processing_info. Media already final is left as it is
// (storage.ErrConflict).
func (db *DB) FailMedia(ctx context.Context, id int64, code int, name, message string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE media SET state = 'failed', error_code = $2, error_name = $3,
			error_message = $4, processed_at = $5 WHERE id = $1 AND state IN ('pending', 'in_progress')`,
		id, code, name, message, at)
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrConflict
	}
	return wrap(fmt.Sprintf("fail media %d", id), err)
}

// MediaDue returns up to limit media the sweeper looks at, least recently
// swept first: finalized media not processed yet, and uploads never
// finalized whose session expired before now.
func (db *DB) MediaDue(ctx context.Context, now time.Time, limit int) ([]storage.Media, error) {
	out, err := collectMedia(db.pool.Query(ctx, `SELECT `+mediaColumns+` FROM media
		WHERE state IN ('pending', 'in_progress') OR (state = 'uploading' AND expires_at <= $1)
		ORDER BY swept_at NULLS FIRST, id LIMIT $2`, now, limit))
	return out, wrap("list media due", err)
}

// MarkMediaSwept records that the sweeper looked at ids at at.
func (db *DB) MarkMediaSwept(ctx context.Context, ids []int64, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE media SET swept_at = $2 WHERE id = ANY($1)`, ids, at)
	return wrap("mark media swept", err)
}

// DeleteExpiredUpload removes upload id, with its segment records, if it
// was never finalized and expired before now. With the row locked (so a
// finalize waits, then finds no upload) it first hands every segment's
// blob key to deleteObjects: if that fails, nothing is deleted and the
// sweeper tries again. It returns storage.ErrNotFound when the upload is
// gone or no longer expired (finalized in time).
func (db *DB) DeleteExpiredUpload(ctx context.Context, id int64, now time.Time, deleteObjects func(keys []string) error) error {
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM media WHERE id = $1 AND state = 'uploading' AND expires_at <= $2
			FOR UPDATE`, id, now).Scan(&one); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT blob_key FROM media_segments WHERE media_id = $1`, id)
		if err != nil {
			return err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if err := deleteObjects(keys); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM media WHERE id = $1`, id)
		return err
	})
	return wrap(fmt.Sprintf("delete expired upload %d", id), err)
}

// DeleteMediaSegments forgets the segment copies of media id once they
// were assembled (their objects deleted by the caller).
func (db *DB) DeleteMediaSegments(ctx context.Context, id int64) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM media_segments WHERE media_id = $1`, id)
	return wrap(fmt.Sprintf("delete segments of media %d", id), err)
}
