package webhooks_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// TestCRCSweeper: on real PostgreSQL and a local receiver, the sweeper
// checks the webhooks without a pass for Recheck, once per interval even
// with two sweepers, and records the platform's rules: a pass makes a
// webhook valid, a wrong token or a redirect invalid at once, an HTTP
// error only after 28 h without a pass.
func TestCRCSweeper(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		key := app.ConsumerSecret
		switch r.URL.Path {
		case "/wrong":
			key = "wrong"
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
			return
		case "/down":
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"response_token": domain.Sign(key, []byte(r.URL.Query().Get("crc_token")))})
	}))
	t.Cleanup(srv.Close)
	allow, _ := outbound.ParseAllowList(srv.Listener.Addr().String())
	client := outbound.New(outbound.Config{Allow: allow, NoRedirects: true, Timeout: 2 * time.Second})
	now := time.Now().UTC().Truncate(time.Microsecond)
	tests := []struct {
		path      string
		lastPass  time.Duration // before now
		checked   bool
		wantValid bool
		wantOK    bool
	}{
		{"/ok", 25 * time.Hour, true, true, true},
		{"/wrong", 25 * time.Hour, true, false, false},
		{"/redirect", 25 * time.Hour, true, false, false},
		{"/down", 25 * time.Hour, true, true, false},    // transient, within 28 h
		{"/down?x", 29 * time.Hour, true, false, false}, // transient, past 28 h
		{"/wrong?fresh", time.Hour, false, true, true},  // passed within 24 h: not checked
	}
	ids := make([]int64, len(tests))
	for i, tt := range tests {
		w, err := db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: srv.URL + tt.path, CheckedAt: now.Add(-tt.lastPass)})
		if err != nil {
			t.Fatalf("create %s: %v", tt.path, err)
		}
		ids[i] = w.ID
	}
	sweeper := func() *webhooks.CRCSweeper {
		return &webhooks.CRCSweeper{Store: db, Client: client, Clock: func() time.Time { return now },
			Interval: 30 * time.Minute, Recheck: webhooks.DefaultRecheck}
	}
	n, err := sweeper().Sweep(t.Context())
	if err != nil || n != 5 {
		t.Fatalf("sweep: %d checked, %v; want 5", n, err)
	}
	// A second sweeper in the same interval finds nothing due.
	if n, err := sweeper().Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("second sweep: %d checked, %v; want 0", n, err)
	}
	if c := calls.Load(); c != 5 {
		t.Fatalf("receiver got %d checks, want 5", c)
	}
	for i, tt := range tests {
		w, err := db.WebhookOf(t.Context(), app.ID, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		passed := w.LastCRCOKAt != nil && w.LastCRCOKAt.Equal(now)
		if w.Valid != tt.wantValid || passed != (tt.wantOK && tt.checked) || (w.Failure == "") != tt.wantOK {
			t.Errorf("%s: valid %v, passed now %v, failure %q; want valid %v, ok %v", tt.path, w.Valid, passed, w.Failure, tt.wantValid, tt.wantOK)
		}
	}
}
