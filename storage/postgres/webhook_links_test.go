package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// newWebhook registers a valid webhook of app at url.
func newWebhook(t *testing.T, db *postgres.DB, appID int64, url string) storage.Webhook {
	t.Helper()
	w, err := db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: appID, URL: url, CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWebhookLinks: a link is made, replaced (keeping its created_at),
// listed and removed within its app only; deleting the webhook removes
// its link.
func TestWebhookLinks(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	a := newWebhook(t, db, app.ID, "https://a.example/1")
	b := newWebhook(t, db, app.ID, "https://a.example/2")

	l, err := db.LinkWebhook(ctx, storage.WebhookLink{WebhookID: a.ID, AppID: app.ID, Query: "expansions=author_id"})
	if err != nil || l.Query != "expansions=author_id" || l.AppID != app.ID || l.CreatedAt.IsZero() {
		t.Fatalf("link: %+v, %v", l, err)
	}
	again, err := db.LinkWebhook(ctx, storage.WebhookLink{WebhookID: a.ID, AppID: app.ID, Query: ""})
	if err != nil || again.Query != "" || !again.CreatedAt.Equal(l.CreatedAt) {
		t.Fatalf("relink: %+v, %v (first %+v)", again, err, l)
	}
	if _, err := db.LinkWebhook(ctx, storage.WebhookLink{WebhookID: a.ID, AppID: other.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("link another app's webhook: %v", err)
	}
	if _, err := db.LinkWebhook(ctx, storage.WebhookLink{WebhookID: b.ID, AppID: app.ID, Query: "tweet.fields=lang"}); err != nil {
		t.Fatal(err)
	}
	links, err := db.WebhookLinks(ctx, app.ID)
	if err != nil || len(links) != 2 || links[0].WebhookID != a.ID || links[1].Query != "tweet.fields=lang" {
		t.Fatalf("links: %+v, %v", links, err)
	}
	if links, err := db.WebhookLinks(ctx, other.ID); err != nil || len(links) != 0 {
		t.Fatalf("other app's links: %+v, %v", links, err)
	}

	if _, err := db.UnlinkWebhook(ctx, other.ID, a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unlink another app's webhook: %v", err)
	}
	if ok, err := db.UnlinkWebhook(ctx, app.ID, a.ID); err != nil || !ok {
		t.Fatalf("unlink: %v, %v", ok, err)
	}
	if ok, err := db.UnlinkWebhook(ctx, app.ID, a.ID); err != nil || ok {
		t.Fatalf("unlink again: %v, %v", ok, err)
	}

	if err := db.DeleteWebhook(ctx, app.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_stream_links WHERE webhook_id = $1`, b.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("link of a deleted webhook: %d rows, %v", n, err)
	}
	if _, err := db.UnlinkWebhook(ctx, app.ID, b.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unlink a deleted webhook: %v", err)
	}
	if _, err := db.LinkWebhook(ctx, storage.WebhookLink{WebhookID: b.ID, AppID: app.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("link a deleted webhook: %v", err)
	}
	if err := db.DeleteWebhook(ctx, app.ID, b.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}
