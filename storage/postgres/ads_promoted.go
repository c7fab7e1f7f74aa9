package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// promotedTweetColumns are read by scanPromotedTweet; the table is
// aliased pt and joined to its line item li.
const promotedTweetColumns = `pt.id, pt.account_id, pt.line_item_id, pt.tweet_id, pt.entity_status, pt.approval_status,
	pt.created_at, pt.updated_at, pt.deleted`

// promotedTweetFrom joins each promoted tweet to its line item, whose
// deletion hides it from reads without with_deleted.
const promotedTweetFrom = `promoted_tweets pt JOIN line_items li ON li.id = pt.line_item_id`

func scanPromotedTweet(row pgx.Row, tail ...any) (storage.PromotedTweet, error) {
	var p storage.PromotedTweet
	err := row.Scan(append([]any{&p.ID, &p.AccountID, &p.LineItemID, &p.TweetID, &p.EntityStatus, &p.ApprovalStatus,
		&p.CreatedAt, &p.UpdatedAt, &p.Deleted}, tail...)...)
	return p, err
}

// ListPromotedTweets returns one page of the account's promoted tweets
// matching f. Without opts.WithDeleted, deleted promoted tweets and those
// of deleted line items are left out.
func (db *DB) ListPromotedTweets(ctx context.Context, f storage.PromotedTweetFilter, opts storage.ListOptions) (storage.Page[storage.PromotedTweet], error) {
	spec := listSpec{Listing: storage.ListingPromotedTweets, From: promotedTweetFrom, Columns: promotedTweetColumns, ID: "pt.id", Deleted: "(pt.deleted OR li.deleted)"}
	spec.Filter.add("pt.account_id = $?", f.AccountID)
	spec.Filter.in("pt.line_item_id", f.LineItemIDs)
	spec.Filter.in("pt.id", f.PromotedTweetIDs)
	page, err := listPage(ctx, db.pool, spec, opts, scanPromotedTweet)
	if err != nil {
		return page, fmt.Errorf("list promoted tweets of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// PromotedTweet returns the account's promoted tweet id; a deleted one, or
// one whose line item is deleted, only when withDeleted. Else
// storage.ErrNotFound.
func (db *DB) PromotedTweet(ctx context.Context, accountID, id string, withDeleted bool) (storage.PromotedTweet, error) {
	p, err := scanPromotedTweet(db.pool.QueryRow(ctx, `SELECT `+promotedTweetColumns+` FROM `+promotedTweetFrom+`
		WHERE pt.account_id = $1 AND pt.id = $2 AND (NOT (pt.deleted OR li.deleted) OR $3)`, accountID, id, withDeleted))
	return p, wrap("load promoted tweet "+id, err)
}

// CreatePromotedTweets promotes each post on the account's non-deleted line
// item, recording each creation in account history, all or none. A missing
// line item is storage.ErrNotFound; a post that is missing, deleted or not
// written by a user of the account is a *storage.TweetNotFoundError; a
// post already promoted (not deleted) on it is storage.ErrDuplicateTweet.
func (db *DB) CreatePromotedTweets(ctx context.Context, userID int64, accountID, lineItemID string, tweetIDs []int64) ([]storage.PromotedTweet, error) {
	var out []storage.PromotedTweet
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockChildLineItem(ctx, tx, accountID, lineItemID, "FOR NO KEY UPDATE"); err != nil {
			return err
		}
		if err := lockAccountPosts(ctx, tx, accountID, tweetIDs); err != nil {
			return err
		}
		if err := refuseDuplicateTweets(ctx, tx, lineItemID, tweetIDs); err != nil {
			return err
		}
		for _, tweetID := range tweetIDs {
			p, err := insertPromotedTweet(ctx, tx, userID, accountID, lineItemID, tweetID)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("promote posts on line item %s: %w", lineItemID, err)
	}
	return out, nil
}

// lockChildLineItem locks the account's non-deleted line item id (lock is
// the row lock clause) while a child entity is added to it; a missing one
// is storage.ErrNotFound.
func lockChildLineItem(ctx context.Context, tx pgx.Tx, accountID, id, lock string) error {
	var found string
	err := tx.QueryRow(ctx, `SELECT id FROM line_items WHERE account_id = $1 AND id = $2 AND NOT deleted `+lock, accountID, id).Scan(&found)
	return wrap("lock line item "+id, err)
}

// lockAccountPosts share-locks the posts tweetIDs (so none is deleted
// before the promotion commits) and returns a *storage.TweetNotFoundError
// for the first that is missing, deleted or written by no user of the
// account.
func lockAccountPosts(ctx context.Context, tx pgx.Tx, accountID string, tweetIDs []int64) error {
	rows, err := tx.Query(ctx, `SELECT p.id FROM posts p
		WHERE p.id = ANY($2) AND p.deleted_at IS NULL
		  AND EXISTS (SELECT 1 FROM ad_account_users u WHERE u.account_id = $1 AND u.user_id = p.author_id)
		FOR SHARE OF p`, accountID, tweetIDs)
	if err != nil {
		return wrap("check posts to promote", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return wrap("check posts to promote", err)
	}
	for _, id := range tweetIDs {
		if !slices.Contains(found, id) {
			return &storage.TweetNotFoundError{TweetID: id}
		}
	}
	return nil
}

func refuseDuplicateTweets(ctx context.Context, tx pgx.Tx, lineItemID string, tweetIDs []int64) error {
	var dup *int64
	err := tx.QueryRow(ctx, `SELECT min(tweet_id) FROM promoted_tweets WHERE line_item_id = $1 AND NOT deleted AND tweet_id = ANY($2)`,
		lineItemID, tweetIDs).Scan(&dup)
	if err != nil {
		return wrap("check promoted posts of "+lineItemID, err)
	}
	if dup != nil {
		return fmt.Errorf("post %d: %w", *dup, storage.ErrDuplicateTweet)
	}
	return nil
}

func insertPromotedTweet(ctx context.Context, tx pgx.Tx, userID int64, accountID, lineItemID string, tweetID int64) (storage.PromotedTweet, error) {
	p, err := scanPromotedTweet(tx.QueryRow(ctx, `INSERT INTO promoted_tweets AS pt (account_id, line_item_id, tweet_id)
		VALUES ($1, $2, $3) RETURNING `+promotedTweetColumns, accountID, lineItemID, tweetID))
	if err != nil {
		return p, wrap(fmt.Sprintf("insert promoted post %d", tweetID), err)
	}
	return p, recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityPromotedTweet, EntityID: p.ID,
		ChangeType: storage.ChangeCreate, UserID: userID, After: p.Snapshot()})
}

// DeletePromotedTweet soft-deletes the account's promoted tweet id and
// records it in account history. One already deleted, or hidden by its
// deleted line item, is storage.ErrNotFound.
func (db *DB) DeletePromotedTweet(ctx context.Context, userID int64, accountID, id string) (storage.PromotedTweet, error) {
	var after storage.PromotedTweet
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		before, err := scanPromotedTweet(tx.QueryRow(ctx, `SELECT `+promotedTweetColumns+` FROM `+promotedTweetFrom+`
			WHERE pt.account_id = $1 AND pt.id = $2 AND NOT pt.deleted AND NOT li.deleted FOR UPDATE OF pt`, accountID, id))
		if err != nil {
			return wrap("lock promoted tweet "+id, err)
		}
		after, err = scanPromotedTweet(tx.QueryRow(ctx, `UPDATE promoted_tweets AS pt SET deleted = true, updated_at = now()
			WHERE pt.id = $1 RETURNING `+promotedTweetColumns, id))
		if err != nil {
			return wrap("delete promoted tweet "+id, err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityPromotedTweet, EntityID: id,
			ChangeType: storage.ChangeDelete, UserID: userID, Before: before.Snapshot(), After: after.Snapshot()})
	})
	if err != nil {
		return storage.PromotedTweet{}, fmt.Errorf("delete promoted tweet %s: %w", id, err)
	}
	return after, nil
}
