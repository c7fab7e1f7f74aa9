package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Ads posts (docs/ads-posts.md): a post made through the advertising API
// is a post (createPost: the same insert and post.create event as
// POST /2/tweets) plus its ads_posts row (0041), written in one
// transaction.

// adsPostColumns are postColumns and the ads fields, read from
// "posts p LEFT JOIN ads_posts a ON a.post_id = p.id": a post without an
// ads row reads as organic, replies open to everyone.
const adsPostColumns = postColumns + `, COALESCE(a.account_id, ''), a.name, COALESCE(a.nullcast, false),
	COALESCE(a.conversation_settings, 'EVERYONE'), a.video_cta, a.video_cta_value, a.video_title, a.video_description`

const adsPostFrom = `posts p LEFT JOIN ads_posts a ON a.post_id = p.id`

func scanAdsPost(row pgx.Row, tail ...any) (storage.AdsPost, error) {
	var out storage.AdsPost
	f := &out.Ads
	dest := append(postFields(&out.Post), &f.AccountID, &f.Name, &f.Nullcast, &f.ConversationSettings,
		&f.VideoCTA, &f.VideoCTAValue, &f.VideoTitle, &f.VideoDescription)
	err := row.Scan(append(dest, tail...)...)
	if err == nil {
		out.Post.EditHistory = []int64{out.Post.ID}
	}
	return out, err
}

// CreateAdsPost stores post p (as CreatePost does, with its post.create
// event) and its ads fields f in one transaction. A p.CardURI that names
// no live card of f.AccountID is storage.ErrCardNotFound (the card is
// share-locked until the commit, so it cannot be deleted meanwhile).
func (db *DB) CreateAdsPost(ctx context.Context, p storage.Post, f storage.AdsPostFields) (storage.AdsPost, error) {
	op := fmt.Sprintf("create ads post for user %d on account %s", p.AuthorID, f.AccountID)
	if p.RepostOfID != 0 {
		return storage.AdsPost{}, fmt.Errorf("%s: an ads post is not a repost", op)
	}
	var out storage.AdsPost
	err := db.inTx(ctx, op, func(tx pgx.Tx) error {
		if err := lockCard(ctx, tx, f.AccountID, p.CardURI); err != nil {
			return err
		}
		post, err := createPost(ctx, tx, p)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ads_posts (post_id, account_id, name, nullcast, conversation_settings,
				video_cta, video_cta_value, video_title, video_description)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, post.ID, f.AccountID, f.Name, f.Nullcast, f.ConversationSettings,
			f.VideoCTA, f.VideoCTAValue, f.VideoTitle, f.VideoDescription); err != nil {
			return fmt.Errorf("insert ads fields of post %d: %w", post.ID, err)
		}
		post.EditHistory = []int64{post.ID}
		out = storage.AdsPost{Post: post, Ads: f}
		return nil
	})
	if err != nil {
		return storage.AdsPost{}, err
	}
	return out, nil
}

// lockCard share-locks the live card of the account named uri (none when
// uri is empty).
func lockCard(ctx context.Context, tx pgx.Tx, accountID, uri string) error {
	if uri == "" {
		return nil
	}
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM ads_cards WHERE account_id = $1 AND card_uri = $2 AND deleted_at IS NULL FOR SHARE`,
		accountID, uri).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("card %s of account %s: %w", uri, accountID, storage.ErrCardNotFound)
	}
	return wrap("lock card "+uri, err)
}

// IsAdAccountUser reports whether userID may use the account (its owner
// or a user granted access: ad_account_users).
func (db *DB) IsAdAccountUser(ctx context.Context, accountID string, userID int64) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ad_account_users WHERE account_id = $1 AND user_id = $2)`,
		accountID, userID).Scan(&ok)
	return ok, wrap(fmt.Sprintf("user %d of account %s", userID, accountID), err)
}

// accountPostCondition is the condition on p (posts) of a post an account
// may show: live, the latest version, not a repost, written by a user of
// the account ($1).
const accountPostCondition = `p.deleted_at IS NULL AND p.superseded_at IS NULL AND p.repost_of_id IS NULL
	AND EXISTS (SELECT 1 FROM ad_account_users u WHERE u.account_id = $1 AND u.user_id = p.author_id)`

// AdsPost returns post id as account accountID shows it: a live post
// written by a user of the account; else storage.ErrNotFound.
func (db *DB) AdsPost(ctx context.Context, accountID string, id int64) (storage.AdsPost, error) {
	p, err := scanAdsPost(db.pool.QueryRow(ctx, `SELECT `+adsPostColumns+` FROM `+adsPostFrom+`
		WHERE p.id = $2 AND `+accountPostCondition, accountID, id))
	hideForeignName(accountID, &p)
	return p, wrap(fmt.Sprintf("load ads post %d", id), err)
}

// SetAdsPostName names post id of the account (nil clears the name). A
// post made elsewhere gets its ads row here (organic, replies open to
// everyone). A post the account may not show is storage.ErrNotFound.
func (db *DB) SetAdsPostName(ctx context.Context, accountID string, id int64, name *string) (storage.AdsPost, error) {
	var out storage.AdsPost
	err := db.inTx(ctx, fmt.Sprintf("name ads post %d", id), func(tx pgx.Tx) error {
		var found int64
		err := tx.QueryRow(ctx, `SELECT p.id FROM posts p WHERE p.id = $2 AND `+accountPostCondition+` FOR SHARE OF p`,
			accountID, id).Scan(&found)
		if err != nil {
			return err
		}
		// The name is the label of the account that made (or first named)
		// the post: another account that shows the same author's posts
		// does not overwrite it.
		tag, err := tx.Exec(ctx, `INSERT INTO ads_posts (post_id, account_id, name, nullcast) VALUES ($1, $2, $3, false)
			ON CONFLICT (post_id) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
			WHERE ads_posts.account_id = EXCLUDED.account_id`, id, accountID, name)
		if err != nil {
			return fmt.Errorf("set name: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("post %d is named by another account: %w", id, storage.ErrNotFound)
		}
		out, err = scanAdsPost(tx.QueryRow(ctx, `SELECT `+adsPostColumns+` FROM `+adsPostFrom+` WHERE p.id = $1`, id))
		return err
	})
	return out, err
}

// hideForeignName clears the name of a post whose ads row belongs to
// another account than accountID: a name is its account's own label.
func hideForeignName(accountID string, p *storage.AdsPost) {
	if p.Ads.AccountID != "" && p.Ads.AccountID != accountID {
		p.Ads.Name = nil
	}
}

// ListAdsPosts returns one page of the posts f.AuthorID wrote that the
// account shows (live, latest versions, no reposts), newest first.
func (db *DB) ListAdsPosts(ctx context.Context, accountID string, f storage.AdsPostFilter, opts storage.ListOptions) (storage.Page[storage.AdsPost], error) {
	spec := listSpec{Listing: storage.ListingAdsPosts, From: adsPostFrom, Columns: adsPostColumns, ID: "p.id"}
	spec.Filter.add("p.author_id = $?", f.AuthorID)
	spec.Filter.add(`p.deleted_at IS NULL AND p.superseded_at IS NULL AND p.repost_of_id IS NULL
		AND EXISTS (SELECT 1 FROM ad_account_users u WHERE u.account_id = $? AND u.user_id = p.author_id)`, accountID)
	if len(f.PostIDs) > 0 {
		spec.Filter.add("p.id = ANY($?)", f.PostIDs)
	}
	switch f.Timeline {
	case storage.TimelineNullcast:
		spec.Filter.add("COALESCE(a.nullcast, false)")
	case storage.TimelineOrganic:
		spec.Filter.add("NOT COALESCE(a.nullcast, false)")
	}
	if f.NamePrefix != "" {
		spec.Filter.add("a.account_id = $?", accountID)
		spec.Filter.add(`lower(a.name) LIKE $? ESCAPE '\'`, likePrefix(f.NamePrefix))
	}
	if !f.WithMentionsAndReplies {
		spec.Filter.add("p.in_reply_to_post_id IS NULL AND left(ltrim(p.text), 1) <> '@'")
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanAdsPost)
	for i := range page.Items {
		hideForeignName(accountID, &page.Items[i])
	}
	return page, err
}

// copyAdsFields gives the new version next of an edited post the ads row
// of the previous version prev, if it has one: an edit changes the text
// and media, not whether the post is the account's nullcast post, its name
// or its conversation settings. The video fields describe the video, so
// they follow only when the media stay the same.
func copyAdsFields(ctx context.Context, tx pgx.Tx, prev, next storage.Post) error {
	sameMedia := slices.Equal(prev.MediaIDs, next.MediaIDs)
	_, err := tx.Exec(ctx, `INSERT INTO ads_posts (post_id, account_id, name, nullcast, conversation_settings,
			video_cta, video_cta_value, video_title, video_description)
		SELECT $2, account_id, name, nullcast, conversation_settings,
			CASE WHEN $3 THEN video_cta END, CASE WHEN $3 THEN video_cta_value END,
			CASE WHEN $3 THEN video_title END, CASE WHEN $3 THEN video_description END
		FROM ads_posts WHERE post_id = $1`, prev.ID, next.ID, sameMedia)
	if err != nil {
		return fmt.Errorf("copy the ads fields of post %d to its edit %d: %w", prev.ID, next.ID, err)
	}
	return nil
}
