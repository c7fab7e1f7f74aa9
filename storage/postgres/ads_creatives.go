package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Ads creatives: account media, media creatives and the media library.

const accountMediaColumns = `am.id, am.account_id, am.media_key, am.creative_type, am.video_id, am.media_url,
	am.created_at, am.updated_at, am.deleted`

func scanAccountMedia(row pgx.Row, tail ...any) (storage.AccountMedia, error) {
	var a storage.AccountMedia
	err := row.Scan(append([]any{&a.ID, &a.AccountID, &a.MediaKey, &a.CreativeType, &a.VideoID, &a.MediaURL,
		&a.CreatedAt, &a.UpdatedAt, &a.Deleted}, tail...)...)
	return a, err
}

// ListAccountMedia returns one page of the account's media.
func (db *DB) ListAccountMedia(ctx context.Context, f storage.AccountMediaFilter, opts storage.ListOptions) (storage.Page[storage.AccountMedia], error) {
	spec := listSpec{Listing: storage.ListingAccountMedia, From: "account_media am", Columns: accountMediaColumns, ID: "am.id", Deleted: "am.deleted"}
	spec.Filter.add("am.account_id = $?", f.AccountID)
	spec.Filter.in("am.id", f.IDs)
	spec.Filter.in("am.creative_type", f.CreativeTypes)
	page, err := listPage(ctx, db.pool, spec, opts, scanAccountMedia)
	if err != nil {
		return page, fmt.Errorf("list account media of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// AccountMedia loads account media id of the account; a deleted one only
// withDeleted. Otherwise storage.ErrNotFound.
func (db *DB) AccountMedia(ctx context.Context, accountID, id string, withDeleted bool) (storage.AccountMedia, error) {
	a, err := scanAccountMedia(db.pool.QueryRow(ctx, `SELECT `+accountMediaColumns+` FROM account_media am
		WHERE am.id = $1 AND am.account_id = $2 AND (NOT am.deleted OR $3)`, id, accountID, withDeleted))
	return a, wrap("load account media "+id, err)
}

// CreateAccountMedia records an account media asset (display creatives
// imported by an operator; PREROLL ones come with the media library).
func (db *DB) CreateAccountMedia(ctx context.Context, a storage.AccountMedia) (storage.AccountMedia, error) {
	out, err := scanAccountMedia(db.pool.QueryRow(ctx, `INSERT INTO account_media AS am
			(account_id, media_key, creative_type, video_id, media_url)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+accountMediaColumns,
		a.AccountID, a.MediaKey, a.CreativeType, a.VideoID, a.MediaURL))
	return out, wrap("create account media of "+a.AccountID, err)
}

// DeleteAccountMedia soft-deletes account media id of the account and
// returns it; storage.ErrNotFound if it is missing or deleted already.
func (db *DB) DeleteAccountMedia(ctx context.Context, accountID, id string) (storage.AccountMedia, error) {
	a, err := scanAccountMedia(db.pool.QueryRow(ctx, `UPDATE account_media am SET deleted = true, updated_at = now()
		WHERE am.id = $1 AND am.account_id = $2 AND NOT am.deleted RETURNING `+accountMediaColumns, id, accountID))
	return a, wrap("delete account media "+id, err)
}

const mediaCreativeFrom = `media_creatives mc JOIN account_media am ON am.id = mc.account_media_id`

const mediaCreativeColumns = `mc.id, mc.account_id, mc.line_item_id, mc.account_media_id, am.creative_type, mc.landing_url,
	mc.approval_status, mc.entity_status, mc.created_at, mc.updated_at, mc.deleted`

func scanMediaCreative(row pgx.Row, tail ...any) (storage.MediaCreative, error) {
	var c storage.MediaCreative
	err := row.Scan(append([]any{&c.ID, &c.AccountID, &c.LineItemID, &c.AccountMediaID, &c.CreativeType, &c.LandingURL,
		&c.ApprovalStatus, &c.EntityStatus, &c.CreatedAt, &c.UpdatedAt, &c.Deleted}, tail...)...)
	return c, err
}

// ListMediaCreatives returns one page of the account's media creatives.
func (db *DB) ListMediaCreatives(ctx context.Context, f storage.MediaCreativeFilter, opts storage.ListOptions) (storage.Page[storage.MediaCreative], error) {
	spec := listSpec{Listing: storage.ListingMediaCreatives, From: mediaCreativeFrom, Columns: mediaCreativeColumns, ID: "mc.id", Deleted: "mc.deleted"}
	spec.Filter.add("mc.account_id = $?", f.AccountID)
	spec.Filter.in("mc.id", f.IDs)
	spec.Filter.in("mc.line_item_id", f.LineItemIDs)
	if f.CampaignID != "" {
		spec.Filter.add("mc.line_item_id IN (SELECT li.id FROM line_items li WHERE li.campaign_id = $? AND li.account_id = mc.account_id)", f.CampaignID)
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanMediaCreative)
	if err != nil {
		return page, fmt.Errorf("list media creatives of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// MediaCreative loads media creative id of the account; a deleted one
// only withDeleted. Otherwise storage.ErrNotFound.
func (db *DB) MediaCreative(ctx context.Context, accountID, id string, withDeleted bool) (storage.MediaCreative, error) {
	return mediaCreative(ctx, db.pool, accountID, id, withDeleted)
}

func mediaCreative(ctx context.Context, q querier, accountID, id string, withDeleted bool) (storage.MediaCreative, error) {
	c, err := scanMediaCreative(q.QueryRow(ctx, `SELECT `+mediaCreativeColumns+` FROM `+mediaCreativeFrom+`
		WHERE mc.id = $1 AND mc.account_id = $2 AND (NOT mc.deleted OR $3)`, id, accountID, withDeleted))
	return c, wrap("load media creative "+id, err)
}

// LineItemObjective is the objective of line item id of the account, if
// it is not deleted; else storage.ErrNotFound.
func (db *DB) LineItemObjective(ctx context.Context, accountID, id string) (string, error) {
	var objective string
	err := db.pool.QueryRow(ctx, `SELECT objective FROM line_items WHERE id = $1 AND account_id = $2 AND NOT deleted`,
		id, accountID).Scan(&objective)
	return objective, wrap("load line item "+id, err)
}

// CreateMediaCreative associates account media with a line item, both of
// the account and not deleted (else storage.ErrNotFound).
func (db *DB) CreateMediaCreative(ctx context.Context, n storage.NewMediaCreative) (storage.MediaCreative, error) {
	var c storage.MediaCreative
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO media_creatives (account_id, line_item_id, account_media_id, landing_url)
			SELECT $1, li.id, am.id, $4 FROM line_items li, account_media am
			WHERE li.id = $2 AND li.account_id = $1 AND NOT li.deleted
			  AND am.id = $3 AND am.account_id = $1 AND NOT am.deleted
			FOR SHARE OF li, am
			RETURNING id`, n.AccountID, n.LineItemID, n.AccountMediaID, n.LandingURL).Scan(&id)
		if err != nil {
			return err
		}
		c, err = mediaCreative(ctx, tx, n.AccountID, id, false)
		return err
	})
	return c, wrap("create media creative of "+n.AccountID, err)
}

// DeleteMediaCreative soft-deletes media creative id of the account and
// returns it; storage.ErrNotFound if it is missing or deleted already.
func (db *DB) DeleteMediaCreative(ctx context.Context, accountID, id string) (storage.MediaCreative, error) {
	var c storage.MediaCreative
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE media_creatives SET deleted = true, updated_at = now()
			WHERE id = $1 AND account_id = $2 AND NOT deleted`, id, accountID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrNotFound
		}
		c, err = mediaCreative(ctx, tx, accountID, id, true)
		return err
	})
	return c, wrap("delete media creative "+id, err)
}

// MediaByKey loads the upload whose media_key is key.
func (db *DB) MediaByKey(ctx context.Context, key string) (storage.Media, error) {
	m, err := scanMedia(db.pool.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE media_key = $1`, key))
	return m, wrap("load media "+key, err)
}

// mediaLibraryFrom joins an entry to its media (for the kind filter and
// tweeted) and its poster.
const mediaLibraryFrom = `media_library l JOIN media m ON m.media_key = l.media_key
	LEFT JOIN media pm ON pm.media_key = l.poster_media_key`

const mediaLibraryColumns = `l.account_id, l.media_key, l.name, l.file_name, l.title, l.description, l.poster_media_key,
	l.created_at, l.updated_at, l.deleted, COALESCE(pm.output_key, ''),
	EXISTS (SELECT 1 FROM posts p WHERE p.author_id = ANY(m.owner_id || m.additional_owners) AND m.id = ANY(p.media_ids))`

func scanMediaLibraryEntry(row pgx.Row, tail ...any) (storage.MediaLibraryEntry, error) {
	var e storage.MediaLibraryEntry
	err := row.Scan(append([]any{&e.AccountID, &e.MediaKey, &e.Name, &e.FileName, &e.Title, &e.Description,
		&e.PosterMediaKey, &e.CreatedAt, &e.UpdatedAt, &e.Deleted, &e.PosterOutputKey, &e.Tweeted}, tail...)...)
	return e, err
}

// ListMediaLibrary returns one page of the account's media library.
func (db *DB) ListMediaLibrary(ctx context.Context, f storage.MediaLibraryFilter, opts storage.ListOptions) (storage.Page[storage.MediaLibraryEntry], error) {
	spec := listSpec{Listing: storage.ListingMediaLibrary, From: mediaLibraryFrom, Columns: mediaLibraryColumns, ID: "l.media_key", Deleted: "l.deleted"}
	spec.Filter.add("l.account_id = $?", f.AccountID)
	if f.Kind != "" {
		spec.Filter.add("m.kind = $?", f.Kind)
	}
	if len(f.Terms) > 0 {
		spec.Filter.add(`regexp_split_to_array(lower(concat_ws(' ', l.name, l.title, l.file_name, l.description)),
			'[^[:alnum:]]+') @> $?::text[]`, f.Terms)
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanMediaLibraryEntry)
	if err != nil {
		return page, fmt.Errorf("list media library of %s: %w", f.AccountID, err)
	}
	if err := attachMedia(ctx, db.pool, page.Items); err != nil {
		return page, fmt.Errorf("list media library of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// MediaLibraryEntry loads the account's library entry of key, if it is not
// deleted; else storage.ErrNotFound.
func (db *DB) MediaLibraryEntry(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error) {
	e, err := mediaLibraryEntry(ctx, db.pool, accountID, key, false)
	return e, wrap("load media library entry "+key, err)
}

func mediaLibraryEntry(ctx context.Context, q querier, accountID, key string, withDeleted bool) (storage.MediaLibraryEntry, error) {
	e, err := scanMediaLibraryEntry(q.QueryRow(ctx, `SELECT `+mediaLibraryColumns+` FROM `+mediaLibraryFrom+`
		WHERE l.account_id = $1 AND l.media_key = $2 AND (NOT l.deleted OR $3)`, accountID, key, withDeleted))
	if err != nil {
		return e, err
	}
	entries := []storage.MediaLibraryEntry{e}
	if err := attachMedia(ctx, q, entries); err != nil {
		return e, err
	}
	return entries[0], nil
}

// attachMedia loads the media of entries in one query.
func attachMedia(ctx context.Context, q querier, entries []storage.MediaLibraryEntry) error {
	if len(entries) == 0 {
		return nil
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.MediaKey
	}
	media, err := collectMedia(q.Query(ctx, `SELECT `+mediaColumns+` FROM media WHERE media_key = ANY($1)`, keys))
	if err != nil {
		return fmt.Errorf("load library media: %w", translate(err))
	}
	byKey := make(map[string]storage.Media, len(media))
	for _, m := range media {
		byKey[m.Key] = m
	}
	for i := range entries {
		entries[i].Media = byKey[entries[i].MediaKey]
	}
	return nil
}

// AddToMediaLibrary adds the upload key to the account's library with
// fields. A deleted entry of the same key is brought back with the new
// fields; an entry already there is storage.ErrConflict. With preroll (an
// AMPLIFY_VIDEO) a PREROLL account media of the key is created in the same
// transaction.
func (db *DB) AddToMediaLibrary(ctx context.Context, accountID, key string, f storage.MediaLibraryFields, preroll bool) (storage.MediaLibraryEntry, error) {
	var e storage.MediaLibraryEntry
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO media_library AS l (account_id, media_key, name, file_name, title, description, poster_media_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (account_id, media_key) DO UPDATE SET name = EXCLUDED.name, file_name = EXCLUDED.file_name,
				title = EXCLUDED.title, description = EXCLUDED.description, poster_media_key = EXCLUDED.poster_media_key,
				deleted = false, created_at = now(), updated_at = now()
			WHERE l.deleted`, accountID, key, f.Name, f.FileName, f.Title, f.Description, f.PosterMediaKey)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("media %s is in the library already: %w", key, storage.ErrConflict)
		}
		if preroll {
			if _, err := tx.Exec(ctx, `INSERT INTO account_media (account_id, media_key, creative_type, video_id)
				VALUES ($1, $2, $3, $2)`, accountID, key, storage.CreativePreroll); err != nil {
				return fmt.Errorf("create preroll account media: %w", err)
			}
		}
		e, err = mediaLibraryEntry(ctx, tx, accountID, key, false)
		return err
	})
	return e, wrap(fmt.Sprintf("add media %s to the library of %s", key, accountID), err)
}

// UpdateMediaLibrary sets the non-nil fields of the account's entry of key
// (not deleted, else storage.ErrNotFound) and returns it.
func (db *DB) UpdateMediaLibrary(ctx context.Context, accountID, key string, f storage.MediaLibraryFields) (storage.MediaLibraryEntry, error) {
	var e storage.MediaLibraryEntry
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE media_library SET name = COALESCE($3, name), file_name = COALESCE($4, file_name),
				title = COALESCE($5, title), description = COALESCE($6, description),
				poster_media_key = COALESCE($7, poster_media_key), updated_at = now()
			WHERE account_id = $1 AND media_key = $2 AND NOT deleted`,
			accountID, key, f.Name, f.FileName, f.Title, f.Description, f.PosterMediaKey)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrNotFound
		}
		e, err = mediaLibraryEntry(ctx, tx, accountID, key, false)
		return err
	})
	return e, wrap(fmt.Sprintf("update media library entry %s of %s", key, accountID), err)
}

// DeleteMediaLibrary soft-deletes the account's entry of key (not deleted,
// else storage.ErrNotFound) and, in the same transaction, the PREROLL
// account media its addition made; it returns the deleted entry.
func (db *DB) DeleteMediaLibrary(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error) {
	var e storage.MediaLibraryEntry
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE media_library SET deleted = true, updated_at = now()
			WHERE account_id = $1 AND media_key = $2 AND NOT deleted`, accountID, key)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `UPDATE account_media SET deleted = true, updated_at = now()
			WHERE account_id = $1 AND media_key = $2 AND creative_type = $3 AND NOT deleted`,
			accountID, key, storage.CreativePreroll); err != nil {
			return fmt.Errorf("delete preroll account media: %w", err)
		}
		e, err = mediaLibraryEntry(ctx, tx, accountID, key, true)
		return err
	})
	return e, wrap(fmt.Sprintf("delete media library entry %s of %s", key, accountID), err)
}
