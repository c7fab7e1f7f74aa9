package webhooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/domain/faults"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage/faultsredis"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestWebhookCRCFaults: an injected CRC failure makes the registration of
// a receiver that answers right fail; the next registration (the fault
// used up) passes; an injected timeout makes its re-validation fail and
// the webhook is listed invalid. The faults count their hits.
func TestWebhookCRCFaults(t *testing.T) {
	t.Parallel()
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	store := faultsredis.New(rc, "t:faults:")
	allow, err := outbound.ParseAllowList("127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	client := outbound.New(outbound.Config{Allow: allow, NoRedirects: true, Timeout: time.Second, MaxBytes: 64 << 10})
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Webhooks = webhooks.New(webhooks.Deps{Store: db, Client: client, Allow: allow, Max: 5, Faults: store})
	})
	receiver := newReceiver(t, b.App.ConsumerSecret, false)
	add := func(kind faults.Kind) faults.Fault {
		f := faults.Fault{AppID: b.App.ID, Effect: faults.Effect{Kind: kind}, Count: 1}
		if err := f.Normalize(); err != nil {
			t.Fatal(err)
		}
		f, err := store.Create(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	failing := add(faults.CRCFailure)
	wantFailure(t, register(t, b, b.Bearer, receiver.URL+"/ok"), webhooks.ReasonCRC)
	r := register(t, b, b.Bearer, receiver.URL+"/ok")
	id, _ := apitest.Obj(r.Body, "data", "id").(string)
	if id == "" {
		t.Fatalf("register after the fault: %d %s", r.Status, r.Raw)
	}
	timeout := add(faults.CRCTimeout)
	put := b.Call(t, "PUT", "/2/webhooks/"+id, b.Bearer, "", nil)
	wantFailure(t, put, webhooks.ReasonCRC)
	if !json.Valid([]byte(put.Raw)) || !strings.Contains(put.Raw, "no answer within") {
		t.Errorf("timeout answer %s", put.Raw)
	}
	all, err := store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if (f.ID == failing.ID || f.ID == timeout.ID) && f.Hits != 1 {
			t.Errorf("fault %s: %d hits, want 1", f.Effect.Kind, f.Hits)
		}
	}
}
