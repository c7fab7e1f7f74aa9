package lineitems_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
)

// benchLineItems is how many line items the benchmark account holds.
const benchLineItems = 100_000

// benchEnv is an account holding benchLineItems line items, inserted in
// one INSERT ... SELECT generate_series.
func benchEnv(b *testing.B) env {
	b.Helper()
	e := newEnv(b)
	start := time.Now()
	e.s.Exec(b, `INSERT INTO line_items (account_id, campaign_id, name, objective, product_type, placements, goal, bid_strategy)
		SELECT $1, $2, 'line item ' || md5(g::text), 'ENGAGEMENTS', 'PROMOTED_TWEETS', '{ALL_ON_SERVICE}', 'ENGAGEMENT', 'AUTO'
		FROM generate_series(1, $3::int) g`, e.acct.ID, e.campaignID, benchLineItems)
	e.s.Exec(b, `ANALYZE line_items`)
	b.Logf("setup: %d line items in %s", benchLineItems, time.Since(start).Round(time.Millisecond))
	return e
}

// timed sends one signed request and returns its latency and body (the
// client's JSON decoding is not timed).
func timed(b *testing.B, e env, method, path string, params url.Values) (time.Duration, []byte) {
	b.Helper()
	target, body := e.s.URL+path, io.Reader(nil)
	if method == http.MethodPut {
		body = strings.NewReader(params.Encode())
	} else if len(params) > 0 {
		target += "?" + params.Encode()
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.Fatal(err)
	}
	if method == http.MethodPut {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	app, tok := e.s.App, e.alice.Token
	if err := auth.SignRequest(req, "", app.ConsumerKey, app.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s %s: %d %v: %.300s", method, path, resp.StatusCode, err, raw)
	}
	return d, raw
}

// report adds p50 and p99 of ds (milliseconds) to the benchmark's output.
func report(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	at := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkListLineItemsPage: one count=1000 page sorted by name-asc out
// of 100,000 line items, walking the pages through their cursors.
func BenchmarkListLineItemsPage(b *testing.B) {
	e := benchEnv(b)
	params := url.Values{"count": {"1000"}, "sort_by": {"name-asc"}}
	var ds []time.Duration
	for b.Loop() {
		d, raw := timed(b, e, http.MethodGet, e.path(""), params)
		ds = append(ds, d)
		var page struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil || len(page.Data) != 1000 && page.NextCursor != nil {
			b.Fatalf("page: %v, %d items", err, len(page.Data))
		}
		if page.NextCursor == nil {
			params.Del("cursor")
		} else {
			params.Set("cursor", *page.NextCursor)
		}
	}
	report(b, ds)
}

// BenchmarkUpdateLineItem: one PUT of a line item of an account holding
// 100,000 line items (rules, update and history in one transaction).
func BenchmarkUpdateLineItem(b *testing.B) {
	e := benchEnv(b)
	id := e.create(b, with(e.baseParams(e.campaignID), url.Values{"bid_amount_local_micro": {"1000000"}}))["id"].(string)
	var ds []time.Duration
	i := 0
	for b.Loop() {
		i++
		d, _ := timed(b, e, http.MethodPut, e.path("/"+id), url.Values{"bid_amount_local_micro": {strings.Repeat("1", 1+i%9) + "0000"}})
		ds = append(ds, d)
	}
	report(b, ds)
}
