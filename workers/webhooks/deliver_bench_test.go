package webhooks_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// benchDeliveries is how many pending deliveries each iteration drains.
const benchDeliveries = 10000

// BenchmarkDeliverer: deliveries per second of one Deliverer draining
// benchDeliveries pending deliveries of one webhook to a local receiver
// (reads, sends in order, outcomes recorded in batches, until every
// outcome is recorded), against a bare loop that POSTs the same signed
// bodies with a plain http.Client to the same receiver. The ratio metric
// is deliverer/bare (the goal: at least 0.8); sent/s is the deliverer's
// pace until the receiver had every delivery (before the last outcomes
// are recorded). The Deliverer polls at its production default (it is
// woken by the notification of the queued deliveries; a 10 ms poll made
// PostgreSQL run a claim query 100 times a second beside the sends).
func BenchmarkDeliverer(b *testing.B) {
	// The receiver counts what arrives and signals the last of an
	// iteration's deliveries (no polling goroutine beside the sends).
	var received atomic.Int64
	var all atomic.Pointer[chan struct{}]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if received.Add(1) == benchDeliveries {
			close(*all.Load())
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	f := newFixture(b, srv.URL+"/hook")
	ctx := b.Context()
	var deliverTime, sentTime, bareTime time.Duration
	for i := 0; b.Loop(); i++ {
		// The Deliverer.
		f.queue(b, 1+i*benchDeliveries, benchDeliveries)
		received.Store(0)
		arrived := make(chan struct{})
		all.Store(&arrived)
		d := &webhooks.Deliverer{Store: f.db, Listen: f.db, Client: webhooks.NewDeliveryClient(loopback(b), 0), Concurrency: 1}
		start := time.Now()
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = d.Run(runCtx) }()
		<-arrived
		sentTime += time.Since(start)
		cancel()
		<-done // the last outcomes recorded, the lease released
		deliverTime += time.Since(start)
		var pending int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'`).Scan(&pending); err != nil || pending != 0 {
			b.Fatalf("%d deliveries not recorded delivered (%v)", pending, err)
		}

		// The bare loop: the same bodies, signed, POSTed in order.
		bodies := make([][]byte, benchDeliveries)
		sigs := make([]string, benchDeliveries)
		for j := range bodies {
			bodies[j] = []byte(`{"data":{"id":"` + strconv.Itoa(j) + `","text":"post number ` + strconv.Itoa(j) + `"}}`)
			sigs[j] = domain.Sign(f.app.ConsumerSecret, bodies[j])
		}
		client := &http.Client{Timeout: 10 * time.Second}
		start = time.Now()
		for j := range bodies {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hook", bytes.NewReader(bodies[j]))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhooks.HeaderSignature, sigs[j])
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		bareTime += time.Since(start)
		client.CloseIdleConnections()
	}
	n := float64(b.N * benchDeliveries)
	b.ReportMetric(n/deliverTime.Seconds(), "deliveries/s")
	b.ReportMetric(n/sentTime.Seconds(), "sent/s")
	b.ReportMetric(n/bareTime.Seconds(), "bare-posts/s")
	b.ReportMetric(bareTime.Seconds()/deliverTime.Seconds(), "ratio")
}
