package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestWebhooks: create, list, load and delete stay within the app; a URL
// is unique among live webhooks only; CRC outcomes update the state.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	at := time.Now().UTC().Truncate(time.Microsecond)
	create := func(appID int64, url string) (storage.Webhook, error) {
		return db.CreateWebhook(ctx, storage.WebhookCreate{AppID: appID, URL: url, CheckedAt: at, Max: 2})
	}
	w, err := create(app.ID, "https://a.example/hook")
	if err != nil || !w.Valid || w.LastCRCOKAt == nil || !w.LastCRCOKAt.Equal(at) {
		t.Fatalf("create: %+v, %v", w, err)
	}
	if _, err := create(app.ID, "https://a.example/hook"); !errors.Is(err, storage.ErrDuplicateWebhookURL) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := create(other.ID, "https://a.example/hook"); err != nil {
		t.Fatalf("same URL, other app: %v", err)
	}
	if _, err := db.WebhookOf(ctx, other.ID, w.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another app's webhook: %v", err)
	}
	if err := db.DeleteWebhook(ctx, other.ID, w.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete another app's webhook: %v", err)
	}
	bad, err := db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: w.ID, At: at.Add(time.Hour), Failure: "HTTP 500"})
	if err != nil || !bad.Valid || bad.Failure != "HTTP 500" || !bad.LastCRCOKAt.Equal(at) || !bad.LastCRCAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("transient failure: %+v, %v", bad, err)
	}
	bad, err = db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: w.ID, At: at.Add(2 * time.Hour), Failure: "wrong token", Invalidate: true})
	if err != nil || bad.Valid {
		t.Fatalf("permanent failure: %+v, %v", bad, err)
	}
	good, err := db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: w.ID, At: at.Add(3 * time.Hour), OK: true})
	if err != nil || !good.Valid || good.Failure != "" || !good.LastCRCOKAt.Equal(at.Add(3*time.Hour)) {
		t.Fatalf("pass: %+v, %v", good, err)
	}
	if err := db.DeleteWebhook(ctx, app.ID, w.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: w.ID, At: at, OK: true}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("CRC of a deleted webhook: %v", err)
	}
	if _, err := create(app.ID, "https://a.example/hook"); err != nil {
		t.Fatalf("URL of a deleted webhook: %v", err)
	}
	list, err := db.Webhooks(ctx, app.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
}

// TestWebhookCapConcurrent: concurrent registrations of one app never
// exceed the cap.
func TestWebhookCapConcurrent(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	const max, tries = 3, 12
	var wg sync.WaitGroup
	errs := make([]error, tries)
	for i := range tries {
		wg.Go(func() {
			_, errs[i] = db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: fmt.Sprintf("https://h%d.example/", i), CheckedAt: time.Now(), Max: max})
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, storage.ErrWebhookLimit):
			t.Fatalf("create: %v", err)
		}
	}
	if list, _ := db.Webhooks(t.Context(), app.ID); created != max || len(list) != max {
		t.Fatalf("created %d, listed %d; want %d", created, len(list), max)
	}
}
