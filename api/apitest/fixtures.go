package apitest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/validation"
)

// Query scans one row of sql on a connection of its own.
func (b *Bundle) Query(t testing.TB, sql string, dest ...any) {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(b.DB)
	if !ok {
		t.Fatal("the bundle's database URL is unknown")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// DBConn is a connection of the test's own to the bundle's database.
func DBConn(t *testing.T, b *Bundle) *pgx.Conn {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(b.DB)
	if !ok {
		t.Fatal("the bundle's database URL is unknown")
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// StrconvID parses a decimal id; false when s holds anything but digits.
func StrconvID(s string) (int64, bool) {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// MustID parses an id as the API validates one, failing the test if s is
// not one.
func MustID(t testing.TB, s string) int64 {
	t.Helper()
	id, ok := validation.ParseID(s)
	if !ok {
		t.Fatalf("not an id: %q", s)
	}
	return id
}

// PostIDOf reads the number a post id starts with, failing the test if
// there is none.
func PostIDOf(t *testing.T, s string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscan(s, &id); err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return id
}

// WaitSettled waits until the posts created so far are inside the window
// of a search without end_time.
func WaitSettled() { time.Sleep(search.Settle + 100*time.Millisecond) }

// AddStory stores a news story as the news:refresh worker would, updated
// at at.
func AddStory(t *testing.T, db *postgres.DB, s storage.NewsStory, at time.Time) storage.NewsStory {
	t.Helper()
	out, _, err := db.UpsertNewsStory(t.Context(), s, at, nil)
	if err != nil {
		t.Fatalf("store story: %v", err)
	}
	return out
}

// FinalizedMedia records an upload of owner (factory.Media with opts, 10
// bytes unless set), one complete segment, and finalizes it at at.
func FinalizedMedia(t testing.TB, db *postgres.DB, owner storage.User, opts factory.MediaOpts, at time.Time) storage.Media {
	t.Helper()
	opts.Owner = &owner
	if opts.TotalBytes == 0 {
		opts.TotalBytes = 10
	}
	if opts.ExpiresAt.IsZero() {
		opts.ExpiresAt = at.Add(time.Hour)
	}
	m := factory.Media(t, db, &opts)
	ctx := context.Background()
	seg := storage.MediaSegment{MediaID: m.ID, Index: 0, Key: storage.MediaSegmentKey(m.ID, "fixture"), Size: m.TotalBytes}
	if _, err := db.AddMediaSegment(ctx, seg, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	m, err := db.FinalizeMedia(ctx, m.ID, at)
	if err != nil {
		t.Fatalf("finalize: %v", err)
	}
	return m
}

// SucceededMedia is FinalizedMedia processed with result r.
func SucceededMedia(t testing.TB, db *postgres.DB, owner storage.User, opts factory.MediaOpts, r storage.MediaResult) storage.Media {
	t.Helper()
	now := time.Now()
	m := FinalizedMedia(t, db, owner, opts, now)
	ctx := context.Background()
	if _, err := db.StartMediaProcessing(ctx, m.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteMedia(ctx, m.ID, r, now); err != nil {
		t.Fatal(err)
	}
	m, err := db.Media(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
