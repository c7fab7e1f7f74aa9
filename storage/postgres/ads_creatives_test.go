package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// creativesMedia records an upload of owner in category and drives it
// through the worker's steps to succeeded.
func creativesMedia(t *testing.T, db *postgres.DB, owner storage.User, category string) storage.Media {
	t.Helper()
	ctx, at := t.Context(), time.Now().UTC()
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
	res := storage.MediaResult{Width: 1280, Height: 720, DurationMS: 15000, OutputKey: storage.MediaOutputKey(m.ID, "mp4")}
	if err := db.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	out, err := db.MediaByKey(ctx, m.Key)
	if err != nil {
		t.Fatalf("MediaByKey: %v", err)
	}
	return out
}

func strPtr(s string) *string { return &s }

// TestMediaLibraryPrerollLifecycle: an AMPLIFY_VIDEO entry brings a PREROLL
// account media in its transaction, a second add of a live entry is a
// conflict, deleting the entry deletes the account media too, and adding
// it again restores the entry with a new account media.
func TestMediaLibraryPrerollLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	owner := factory.User(t, db, nil)
	acct := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &owner})
	video := creativesMedia(t, db, owner, storage.MediaAmplifyVideo)

	e, err := db.AddToMediaLibrary(ctx, acct.ID, video.Key, storage.MediaLibraryFields{Name: strPtr("clip")}, true)
	if err != nil {
		t.Fatalf("AddToMediaLibrary: %v", err)
	}
	if e.Media.ID != video.ID || *e.Name != "clip" || e.Deleted {
		t.Fatalf("entry = %+v", e)
	}
	prerolls := func(withDeleted bool) []storage.AccountMedia {
		page, err := db.ListAccountMedia(ctx, storage.AccountMediaFilter{AccountID: acct.ID, CreativeTypes: []string{storage.CreativePreroll}},
			storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}, WithDeleted: withDeleted})
		if err != nil {
			t.Fatalf("ListAccountMedia: %v", err)
		}
		return page.Items
	}
	if got := prerolls(false); len(got) != 1 || *got[0].VideoID != video.Key || *got[0].MediaKey != video.Key {
		t.Fatalf("prerolls after add = %+v", got)
	}
	if _, err := db.AddToMediaLibrary(ctx, acct.ID, video.Key, storage.MediaLibraryFields{}, true); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second add: %v, want ErrConflict", err)
	}
	if got := prerolls(false); len(got) != 1 {
		t.Fatalf("the refused add changed account media: %+v", got)
	}
	del, err := db.DeleteMediaLibrary(ctx, acct.ID, video.Key)
	if err != nil || !del.Deleted {
		t.Fatalf("DeleteMediaLibrary = %+v, %v", del, err)
	}
	if got := prerolls(false); len(got) != 0 {
		t.Fatalf("preroll survived the delete: %+v", got)
	}
	if _, err := db.DeleteMediaLibrary(ctx, acct.ID, video.Key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	again, err := db.AddToMediaLibrary(ctx, acct.ID, video.Key, storage.MediaLibraryFields{}, true)
	if err != nil || again.Deleted || again.Name != nil {
		t.Fatalf("re-add = %+v, %v", again, err)
	}
	if got := prerolls(true); len(got) != 2 {
		t.Fatalf("prerolls with deleted after re-add = %d, want 2", len(got))
	}
}

// TestMediaLibraryTerms: q terms match whole words of any text field,
// case-insensitively, and every term must match.
func TestMediaLibraryTerms(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	owner := factory.User(t, db, nil)
	acct := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &owner})
	fields := []storage.MediaLibraryFields{
		{Name: strPtr("Summer Sale"), FileName: strPtr("beach-day.png")},
		{Name: strPtr("Winter"), Title: strPtr("snow sale")},
		{Description: strPtr("salesforce demo")},
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		m := creativesMedia(t, db, owner, storage.MediaTweetVideo)
		keys[i] = m.Key
		if _, err := db.AddToMediaLibrary(ctx, acct.ID, m.Key, f, false); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	tests := []struct {
		terms []string
		want  []string
	}{
		{[]string{"sale"}, []string{keys[0], keys[1]}},
		{[]string{"beach"}, []string{keys[0]}},
		{[]string{"png"}, []string{keys[0]}},
		{[]string{"sale", "snow"}, []string{keys[1]}},
		{[]string{"salesforce"}, []string{keys[2]}},
		{[]string{"autumn"}, nil},
	}
	for _, tc := range tests {
		page, err := db.ListMediaLibrary(ctx, storage.MediaLibraryFilter{AccountID: acct.ID, Terms: tc.terms},
			storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}})
		if err != nil {
			t.Fatalf("ListMediaLibrary(%v): %v", tc.terms, err)
		}
		var got []string
		for _, e := range page.Items {
			got = append(got, e.MediaKey)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("terms %v: got %v, want %v", tc.terms, got, tc.want)
		}
	}
}

// TestCreateMediaCreativeScope: the line item and the account media must
// both be the account's and not deleted.
func TestCreateMediaCreativeScope(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	other := factory.AdAccount(t, db, nil)
	_, _, lineItem := factory.AdsChain(t, db, acct.ID)
	_, _, otherLineItem := factory.AdsChain(t, db, other.ID)
	media, err := db.CreateAccountMedia(ctx, storage.AccountMedia{AccountID: acct.ID, CreativeType: storage.CreativeBanner,
		MediaURL: strPtr("https://media.example/banner.jpg")})
	if err != nil {
		t.Fatalf("CreateAccountMedia: %v", err)
	}
	deleted, err := db.CreateAccountMedia(ctx, storage.AccountMedia{AccountID: acct.ID, CreativeType: storage.CreativeBanner})
	if err != nil {
		t.Fatalf("CreateAccountMedia: %v", err)
	}
	if _, err := db.DeleteAccountMedia(ctx, acct.ID, deleted.ID); err != nil {
		t.Fatalf("DeleteAccountMedia: %v", err)
	}
	tests := []struct {
		name              string
		lineItem, mediaID string
		wantErr           error
	}{
		{"own", lineItem, media.ID, nil},
		{"other account's line item", otherLineItem, media.ID, storage.ErrNotFound},
		{"deleted account media", lineItem, deleted.ID, storage.ErrNotFound},
		{"unknown account media", lineItem, "zzzz", storage.ErrNotFound},
	}
	for _, tc := range tests {
		c, err := db.CreateMediaCreative(ctx, storage.NewMediaCreative{AccountID: acct.ID, LineItemID: tc.lineItem,
			AccountMediaID: tc.mediaID, LandingURL: strPtr("https://example.com")})
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		}
		if tc.wantErr == nil && (c.CreativeType != storage.CreativeBanner || c.LineItemID != lineItem || *c.LandingURL != "https://example.com") {
			t.Fatalf("%s: created %+v", tc.name, c)
		}
	}
}
