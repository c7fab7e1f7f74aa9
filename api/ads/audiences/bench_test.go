package audiences_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/validation"
)

// BenchmarkAudienceBatch sends max-size batches (2500 operations, 5 MB)
// and runs the worker on each: ids/s is identifiers per second from the
// request to counted membership, accept-p50/p99-ms the API's answer time.
// In the same run, bare-ids/s is a program that only hex-checks the same
// digests and COPYs them, in request order, into a table of the members'
// shape (the bare program); bare-sorted-ids/s is the same with the
// keys sorted first, as the worker writes them (docs/ads-audiences.md).
func BenchmarkAudienceBatch(b *testing.B) {
	s := adstest.New(b)
	owner := s.User(b, "bench")
	e := &env{s: s, owner: owner, acct: owner.Account(b).ID}
	body := maxBatch(b, 2500, 5_000_000)
	digests := regexp.MustCompile(`[0-9a-f]{64}`).FindAll(body, -1)
	var accept []time.Duration
	var total, bare, bareSorted time.Duration
	n := 0
	for b.Loop() {
		audience, took, all := e.batchOnce(b, body)
		accept, total = append(accept, took), total+all
		if size, _ := e.size(b, audience); size != int64(len(digests)) {
			b.Fatalf("audience_size %d, want %d", size, len(digests))
		}
		bare += bareLoad(b, s, digests, audience, false)
		bareSorted += bareLoad(b, s, digests, audience, true)
		n++
	}
	ids := float64(len(digests) * n)
	b.ReportMetric(ids/total.Seconds(), "ids/s")
	b.ReportMetric(ids/bare.Seconds(), "bare-ids/s")
	b.ReportMetric(ids/bareSorted.Seconds(), "bare-sorted-ids/s")
	slices.Sort(accept)
	b.ReportMetric(ms(accept[len(accept)/2]), "accept-p50-ms")
	b.ReportMetric(ms(accept[min(len(accept)-1, len(accept)*99/100)]), "accept-p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// batchOnce sends body to a new audience of the owner and runs the worker
// on it: the audience, the API's answer time and the time to counted
// membership.
func (e *env) batchOnce(b *testing.B, body []byte) (audience string, accept, total time.Duration) {
	audience = e.create(b, e.owner, e.acct, "bench-"+time.Now().Format(time.RFC3339Nano))
	start := time.Now()
	e.post(b, e.owner, e.acct, audience, "application/json", body).Status(b, http.StatusOK)
	accept = time.Since(start)
	if errs := e.applyPending(b); len(errs) > 0 {
		b.Fatalf("apply: %v", errs)
	}
	return audience, accept, time.Since(start)
}

// bareLoad hex-checks the digests and COPYs them into a fresh table of
// the members' shape (primary key included), sorted by key first or not,
// returning the time it took.
func bareLoad(b testing.TB, s *adstest.Server, digests [][]byte, audience string, sorted bool) time.Duration {
	ctx := context.Background()
	s.Exec(b, `CREATE TABLE IF NOT EXISTS bench_bare (audience_id text NOT NULL, member_key bytea NOT NULL,
		effective_at timestamptz NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (audience_id, member_key))`)
	s.Exec(b, `TRUNCATE bench_bare`)
	start := time.Now()
	now := time.Now()
	rows := make([][]any, len(digests))
	for i, d := range digests {
		if !validation.IsSHA256Hex(string(d)) {
			b.Fatalf("digest %d", i)
		}
		key := make([]byte, 33)
		key[0] = 1
		if _, err := hex.Decode(key[1:], d); err != nil {
			b.Fatal(err)
		}
		rows[i] = []any{audience, key, now, now}
	}
	if sorted {
		slices.SortFunc(rows, func(x, y []any) int { return bytes.Compare(x[1].([]byte), y[1].([]byte)) })
	}
	conn, err := s.SQL().Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"bench_bare"}, []string{"audience_id", "member_key", "effective_at", "expires_at"},
		pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkAudienceBatchPeople is BenchmarkAudienceBatch with users of two
// identifiers each (an email and a phone number, 2500 operations, 5 MB):
// every user is one member of two keys, so the worker joins them and
// writes the person index (docs/ads-audiences.md). ids/s counts
// identifiers, people/s members.
func BenchmarkAudienceBatchPeople(b *testing.B) {
	s := adstest.New(b)
	owner := s.User(b, "bench")
	e := &env{s: s, owner: owner, acct: owner.Account(b).ID}
	body, users := fillBatch(b, 2500, 5_000_000, len(`{"email":[""],"phone_number":[""]},`)+128, func(buf *bytes.Buffer, u int) {
		fmt.Fprintf(buf, `{"email":["%s"],"phone_number":["%s"]}`, digest(fmt.Sprintf("user-%d@example.com", u)), digest(fmt.Sprintf("+1555%07d", u)))
	})
	var accept []time.Duration
	var total time.Duration
	n := 0
	for b.Loop() {
		audience, took, all := e.batchOnce(b, body)
		accept, total = append(accept, took), total+all
		if size, rows := e.size(b, audience); size != int64(users) || rows != int64(2*users) {
			b.Fatalf("audience_size %d, rows %d; want %d, %d", size, rows, users, 2*users)
		}
		n++
	}
	b.ReportMetric(float64(2*users*n)/total.Seconds(), "ids/s")
	b.ReportMetric(float64(users*n)/total.Seconds(), "people/s")
	slices.Sort(accept)
	b.ReportMetric(ms(accept[len(accept)/2]), "accept-p50-ms")
}
