package adsposts_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// fixture is an account owned by alice, with bob granted access to it.
type fixture struct {
	s     *adstest.Server
	alice *adstest.Caller
	bob   *adstest.Caller
	acct  storage.AdAccount
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := adstest.New(t)
	f := &fixture{s: s, alice: s.User(t, "alice"), bob: s.User(t, "bob")}
	f.acct = f.alice.Account(t)
	if err := s.DB.GrantAdAccount(t.Context(), f.acct.ID, f.bob.User.ID); err != nil {
		t.Fatalf("grant: %v", err)
	}
	return f
}

func (f *fixture) createPath() string { return "/12/accounts/" + f.acct.ID + "/tweet" }
func (f *fixture) listPath() string   { return "/12/accounts/" + f.acct.ID + "/tweets" }

// libraryMedia uploads a processed media of category by alice and adds it
// to the account's media library; it returns its media key.
func (f *fixture) libraryMedia(t *testing.T, category string) string {
	t.Helper()
	ctx, at, db := t.Context(), time.Now().UTC(), f.s.DB
	owner := f.alice.User
	m := factory.Media(t, db, &factory.MediaOpts{Owner: &owner, Category: category})
	if _, err := db.AddMediaSegment(ctx, storage.MediaSegment{MediaID: m.ID, Key: "media/seg", Size: m.TotalBytes}, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	if _, err := db.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := db.StartMediaProcessing(ctx, m.ID, at); err != nil {
		t.Fatalf("start: %v", err)
	}
	res := storage.MediaResult{Width: 1280, Height: 720, DurationMS: 15000, OutputKey: storage.MediaOutputKey(m.ID, "mp4"),
		PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := db.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	f.alice.Post(t, "/12/accounts/"+f.acct.ID+"/media_library", url.Values{"media_key": {m.Key}}).Status(t, http.StatusOK)
	return m.Key
}

// card stores a card of account (as the cards endpoints would) and
// returns its card_uri; deleted marks it deleted.
func card(t *testing.T, s *adstest.Server, accountID string, deleted bool) string {
	t.Helper()
	id := "c" + storagetest.RandomSuffix(8)
	uri := "card://" + id
	s.Exec(t, `INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name, deleted_at)
		VALUES ($1, $2, 'component', 'IMAGE_WEBSITE', $3, 'a card', CASE WHEN $4 THEN now() END)`, id, accountID, uri, deleted)
	return uri
}

// counts are the rows a refused request must not have added.
func (f *fixture) counts(t *testing.T) [3]int64 {
	t.Helper()
	var c [3]int64
	f.s.Scan(t, `SELECT (SELECT count(*) FROM posts), (SELECT count(*) FROM ads_posts), (SELECT count(*) FROM events WHERE type = 'post.create')`,
		nil, &c[0], &c[1], &c[2])
	return c
}
