package factory

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// MediaOpts are the options of Media; the zero value of a field means its
// default.
type MediaOpts struct {
	// Owner defaults to a new user.
	Owner *storage.User
	// Category defaults to tweet_image; MediaType to the category's first
	// type.
	Category  string
	MediaType string
	// TotalBytes defaults to 1024.
	TotalBytes int64
	// AdditionalOwners are user ids who may also post the media.
	AdditionalOwners []int64
	// ExpiresAt defaults to now + storage.MediaUploadTTL.
	ExpiresAt time.Time
}

// Media records a new upload session (state uploading).
func Media(t testing.TB, db *postgres.DB, opts *MediaOpts) storage.Media {
	t.Helper()
	if opts == nil {
		opts = &MediaOpts{}
	}
	m := storage.Media{Category: opts.Category, MediaType: opts.MediaType, TotalBytes: opts.TotalBytes,
		AdditionalOwners: opts.AdditionalOwners, ExpiresAt: opts.ExpiresAt, CreatedAt: now()}
	if m.Category == "" {
		m.Category = storage.MediaTweetImage
	}
	if m.MediaType == "" {
		m.MediaType = storage.MediaTypesOf(m.Category)[0]
	}
	if m.TotalBytes == 0 {
		m.TotalBytes = 1024
	}
	if m.ExpiresAt.IsZero() {
		m.ExpiresAt = m.CreatedAt.Add(storage.MediaUploadTTL)
	}
	if opts.Owner != nil {
		m.OwnerID = opts.Owner.ID
	} else {
		m.OwnerID = User(t, db, nil).ID
	}
	id, err := db.NextID(t.Context())
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	m.ID, m.Kind = id, storage.MediaKindOf(m.Category)
	m.Key = storage.MediaKey(m.Kind, id)
	out, err := db.CreateMedia(t.Context(), m)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	return out
}
