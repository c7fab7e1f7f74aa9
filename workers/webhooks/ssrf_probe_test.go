package webhooks_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// TestDeliverySSRFProbes: a webhook per probe of docs/ssrf.md (direct,
// and through each redirect code from an allowed receiver), one delivery
// each, sent by a running Deliverer with NewDeliveryClient as the worker
// builds it: every attempt ends without an answer (the guard refused the
// dial) or with the redirect itself (never followed), and the targets see
// no connection.
func TestDeliverySSRFProbes(t *testing.T) {
	t.Parallel()
	targets := outboundtest.ListenTargets(t)
	redirector := outboundtest.NewRedirector(t)
	allow, err := outbound.ParseAllowList(redirector.Addr())
	if err != nil {
		t.Fatal(err)
	}
	db, dbURL := storagetest.NewDB(t)
	pool := storagetest.BarePool(t, dbURL)
	app := factory.App(t, db, nil)
	cases := targets.Cases(redirector)
	hooks := map[int64]outboundtest.Case{}
	for i, tc := range cases {
		hook, err := db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: tc.Sent, CheckedAt: time.Now()})
		if err != nil {
			t.Fatalf("create webhook %s: %v", tc.Sent, err)
		}
		hooks[hook.ID] = tc
		if _, err := db.AddWebhookDeliveries(t.Context(), []storage.NewDelivery{{WebhookID: hook.ID, AppID: app.ID,
			EventSeq: int64(i + 1), EventAt: time.Now(), Body: fmt.Appendf(nil, `{"data":{"id":"%d"}}`, i)}}); err != nil {
			t.Fatalf("queue: %v", err)
		}
	}
	d := deliverer(t, db)
	d.Client = webhooks.NewDeliveryClient(allow, time.Second)
	d.Concurrency = 16
	run(t, d)
	type result struct {
		status int
		err    string
	}
	got := map[int64]result{}
	eventually(t, "an attempt at every delivery", func() bool {
		rows, err := pool.Query(t.Context(), `SELECT webhook_id, last_status, last_error FROM webhook_deliveries WHERE attempts >= 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var r result
			if err := rows.Scan(&id, &r.status, &r.err); err != nil {
				t.Fatal(err)
			}
			got[id] = r
		}
		return len(got) == len(cases)
	})
	var table outboundtest.Table
	ids := slices.Sorted(maps.Keys(hooks))
	for _, id := range ids {
		tc, r := hooks[id], got[id]
		switch {
		case tc.Via == "direct" && r.status == 0 && strings.Contains(r.err, "not a public address"):
			table.Add(tc, "no answer: refused at dial")
		case tc.Via == "direct" && r.status == 0 && strings.Contains(r.err, "no such host"):
			table.Add(tc, "no answer: no such host")
		case tc.Via != "direct" && strconv.Itoa(r.status) == tc.Via:
			table.Add(tc, "the redirect, not followed (HTTP "+tc.Via+")")
		default:
			t.Errorf("%s via %s: status %d, error %q", tc.Name, tc.Via, r.status, r.err)
			table.Add(tc, fmt.Sprintf("UNEXPECTED %d %s", r.status, r.err))
		}
	}
	t.Log("\n" + table.String())
	if n := targets.Accepted(); n != 0 {
		t.Fatalf("the targets accepted %d connections, want none", n)
	}
}
