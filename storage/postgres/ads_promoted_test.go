package postgres_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// livePosts stores n live posts by the user and returns their ids.
func livePosts(t *testing.T, db *postgres.DB, userID int64, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = factory.Post(t, db, &factory.PostOpts{Author: storage.User{ID: userID}}).ID
	}
	return ids
}

// TestPromotedTweetsOfDeletedLineItem: deleting a line item does not delete
// its promoted tweets, but hides them from list, get and delete unless
// with_deleted.
func TestPromotedTweetsOfDeletedLineItem(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	_, _, li := factory.AdsChain(t, db, acct.ID)
	posts := livePosts(t, db, acct.UserID, 3)
	pts, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, posts[:2])
	if err != nil || len(pts) != 2 {
		t.Fatalf("create = %v, %v", pts, err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE line_items SET deleted = true WHERE id = $1`, li); err != nil {
		t.Fatalf("delete line item: %v", err)
	}
	sort := storage.Sort{Field: "created_at"}
	for _, withDeleted := range []bool{false, true} {
		page, err := db.ListPromotedTweets(ctx, storage.PromotedTweetFilter{AccountID: acct.ID},
			storage.ListOptions{Count: 10, Sort: sort, WithDeleted: withDeleted, WithTotal: true})
		want := 0
		if withDeleted {
			want = 2
		}
		if err != nil || len(page.Items) != want || *page.Total != int64(want) {
			t.Fatalf("with_deleted=%v: %d items (total %v), %v; want %d", withDeleted, len(page.Items), page.Total, err, want)
		}
		got, err := db.PromotedTweet(ctx, acct.ID, pts[0].ID, withDeleted)
		if withDeleted && (err != nil || got.Deleted) {
			t.Fatalf("get with_deleted = %+v, %v; want the not-deleted promoted tweet", got, err)
		}
		if !withDeleted && !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("get = %v, want ErrNotFound", err)
		}
	}
	if _, err := db.DeletePromotedTweet(ctx, acct.UserID, acct.ID, pts[0].ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete of a hidden promoted tweet: %v, want ErrNotFound", err)
	}
	if _, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, posts[2:]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("promote on a deleted line item: %v, want ErrNotFound", err)
	}
}

// TestPromotedTweetWrites: duplicates are refused as a whole, another
// account's line item is not found, and create and delete are in history.
func TestPromotedTweetWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	other := factory.AdAccount(t, db, nil)
	_, _, li := factory.AdsChain(t, db, acct.ID)
	_, _, otherLI := factory.AdsChain(t, db, other.ID)
	posts := livePosts(t, db, acct.UserID, 3)
	p7, p8, p9 := posts[0], posts[1], posts[2]
	pts, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, []int64{p7})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	tests := []struct {
		name, li string
		tweets   []int64
		want     error
	}{
		{"already promoted", li, []int64{p8, p7}, storage.ErrDuplicateTweet},
		{"another account's line item", otherLI, []int64{p9}, storage.ErrNotFound},
		{"missing line item", "nosuchli", []int64{p9}, storage.ErrNotFound},
	}
	for _, tt := range tests {
		if _, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, tt.li, tt.tweets); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	page, err := db.ListPromotedTweets(ctx, storage.PromotedTweetFilter{AccountID: acct.ID, LineItemIDs: []string{li}},
		storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("after refused creates: %d promoted tweets, %v; want 1 (no partial insert)", len(page.Items), err)
	}
	d, err := db.DeletePromotedTweet(ctx, acct.UserID, acct.ID, pts[0].ID)
	if err != nil || !d.Deleted {
		t.Fatalf("delete = %+v, %v", d, err)
	}
	again, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, []int64{p7})
	if err != nil || len(again) != 1 {
		t.Fatalf("promote a post again after its deletion: %v, %v", again, err)
	}
	h := adsHistoryOf(t, dbURL, storage.EntityPromotedTweet, pts[0].ID)
	if len(h) != 2 || h[0].ChangeType != storage.ChangeCreate || h[1].ChangeType != storage.ChangeDelete {
		t.Fatalf("history = %+v, want CREATE then DELETE", h)
	}
	if h[0].Data["tweet_id"] != strconv.FormatInt(p7, 10) || h[1].Changes["deleted"]["new"] != true {
		t.Fatalf("history data %v, changes %v", h[0].Data, h[1].Changes)
	}
}

// TestPromotedTweetsMustBeAccountPosts: every post must exist, be live and
// be written by a user of the account (its owner or a user granted it);
// otherwise the first such post is a *storage.TweetNotFoundError and
// nothing is promoted or recorded.
func TestPromotedTweetsMustBeAccountPosts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	other := factory.AdAccount(t, db, nil)
	_, _, li := factory.AdsChain(t, db, acct.ID)
	own := livePosts(t, db, acct.UserID, 1)[0]
	othersPost := livePosts(t, db, other.UserID, 1)[0]
	strangersPost := factory.Post(t, db, nil).ID
	at := time.Now().UTC()
	deletedPost := factory.Post(t, db, &factory.PostOpts{Author: storage.User{ID: acct.UserID}, DeletedAt: &at}).ID
	for _, tc := range []struct {
		name    string
		tweets  []int64
		missing int64
	}{
		{"no such post", []int64{own, 999999999999999}, 999999999999999},
		{"deleted post", []int64{own, deletedPost}, deletedPost},
		{"another account's user's post", []int64{othersPost, own}, othersPost},
		{"a post of a user without access", []int64{own, strangersPost}, strangersPost},
	} {
		_, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, tc.tweets)
		var nf *storage.TweetNotFoundError
		if !errors.As(err, &nf) || nf.TweetID != tc.missing {
			t.Errorf("%s: %v, want TweetNotFoundError for %d", tc.name, err, tc.missing)
		}
	}
	page, err := db.ListPromotedTweets(ctx, storage.PromotedTweetFilter{AccountID: acct.ID},
		storage.ListOptions{Count: 10, WithDeleted: true, Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("refused promotions stored %d promoted tweets, %v", len(page.Items), err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var entries int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM account_history WHERE account_id = $1`, acct.ID).Scan(&entries); err != nil || entries != 0 {
		t.Fatalf("refused promotions wrote %d history entries, %v", entries, err)
	}
	// a user granted the account: their posts may be promoted
	granted := factory.User(t, db, nil)
	if err := db.GrantAdAccount(ctx, acct.ID, granted.ID); err != nil {
		t.Fatal(err)
	}
	grantedPost := livePosts(t, db, granted.ID, 1)[0]
	pts, err := db.CreatePromotedTweets(ctx, acct.UserID, acct.ID, li, []int64{own, grantedPost})
	if err != nil || len(pts) != 2 || !slices.Equal([]int64{pts[0].TweetID, pts[1].TweetID}, []int64{own, grantedPost}) {
		t.Fatalf("promote own and granted user's posts: %+v, %v", pts, err)
	}
}
