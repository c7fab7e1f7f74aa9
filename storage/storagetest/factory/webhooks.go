package factory

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// WebhookDeliveryOpts shape a delivery row; zero fields take the
// defaults: a live post delivery of event 1 at now, pending, never tried.
type WebhookDeliveryOpts struct {
	Kind     string
	EventSeq int64
	EventAt  time.Time
	Body     []byte
	State    string
	// DeadReason goes with State dead.
	DeadReason  string
	Attempts    int
	LastStatus  int
	LastLatency int
	LastError   string
	// LastAttemptAt and DeliveredAt are stored when set.
	LastAttemptAt *time.Time
	DeliveredAt   *time.Time
	ReplayJobID   int64
}

// WebhookDelivery inserts a delivery to hook as the delivery engine
// records them and returns its id.
func WebhookDelivery(t testing.TB, db *postgres.DB, hook storage.Webhook, opts *WebhookDeliveryOpts) int64 {
	t.Helper()
	o := WebhookDeliveryOpts{}
	if opts != nil {
		o = *opts
	}
	if o.Kind == "" {
		o.Kind = storage.DeliveryPost
	}
	if o.EventSeq == 0 && o.Kind == storage.DeliveryPost {
		o.EventSeq = 1
	}
	if o.EventAt.IsZero() {
		o.EventAt = now()
	}
	if o.Body == nil {
		o.Body = []byte(`{"data":{"id":"1","text":"factory"}}`)
	}
	if o.State == "" {
		o.State = storage.DeliveryPending
	}
	var dead, job any
	if o.DeadReason != "" {
		dead = o.DeadReason
	}
	if o.ReplayJobID != 0 {
		job = o.ReplayJobID
	}
	var id int64
	queryRow(t, db, "webhook delivery", &id, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_seq, event_at, body,
			state, dead_reason, attempts, last_status, last_latency_ms, last_error, last_attempt_at, delivered_at, replay_job_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		hook.ID, hook.AppID, o.Kind, o.EventSeq, o.EventAt, o.Body, o.State, dead, o.Attempts, o.LastStatus, o.LastLatency,
		o.LastError, o.LastAttemptAt, o.DeliveredAt, job)
	return id
}

// DeliveryAttempt inserts one attempt row of a delivery.
func DeliveryAttempt(t testing.TB, db *postgres.DB, a storage.DeliveryAttempt) {
	t.Helper()
	execOne(t, db, "delivery attempt", `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, status, latency_ms, error)
		VALUES ($1, $2, $3, $4, $5, $6)`, a.DeliveryID, a.Attempt, a.StartedAt, a.Status, a.LatencyMS, a.Error)
}

// WebhookFailing marks a webhook failing since since, probed next at
// probe, last delivered at delivered (nil: never), as the deliverer does.
func WebhookFailing(t testing.TB, db *postgres.DB, id int64, since, probe time.Time, delivered *time.Time) {
	t.Helper()
	execOne(t, db, "failing webhook", `UPDATE webhooks SET failing_since = $2, next_probe_at = $3, last_delivered_at = $4 WHERE id = $1`,
		id, since, probe, delivered)
}

// queryRow runs one statement returning one row into dest, on a
// connection of its own.
func queryRow(t testing.TB, db *postgres.DB, what string, dest any, sql string, args ...any) {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(db)
	if !ok {
		t.Fatalf("factory: %s: the store's URL is unknown: open it with storagetest.NewDB", what)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("factory: %s: connect: %v", what, err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(dest); err != nil {
		t.Fatalf("factory: insert %s: %v", what, err)
	}
}
