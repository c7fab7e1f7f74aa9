package webhooks_test

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// hooks is the API with a webhooks module whose clock stands at Now, whose
// replay tasks go to a Redis database of the test's own (Inspector reads
// it), and whose replay horizon is horizon (0: the default).
type hooks struct {
	*apitest.Bundle
	Now       time.Time
	Inspector *asynq.Inspector
}

func setupHooks(t *testing.T, horizon time.Duration) *hooks {
	t.Helper()
	addr, n := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: n}
	queue := asynq.NewClient(opt)
	t.Cleanup(func() { queue.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	now := time.Now().UTC()
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Webhooks = webhooks.New(webhooks.Deps{Store: db, Queue: queue, ReplayHorizon: horizon, Max: 5,
			Clock: func() time.Time { return now }})
	})
	return &hooks{Bundle: b, Now: now, Inspector: insp}
}

// webhook registers a valid webhook of app directly in the store (no CRC).
func (h *hooks) webhook(t *testing.T, app storage.App, url string) storage.Webhook {
	t.Helper()
	w, err := h.DB.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: url, CheckedAt: h.Now, Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// wantExact checks an answer's status and exact body.
func wantExact(t *testing.T, what string, r apitest.Reply, status int, body string) {
	t.Helper()
	if r.Status != status || r.Raw != body+"\n" {
		t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Raw, status, body)
	}
}
