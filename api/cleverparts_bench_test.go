package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// BenchmarkCleverParts drives GET /2/compliance/jobs/{id} through the
// cached replica (as BenchmarkGetComplianceJob's "cached") with the request
// path's clever part against the plain way (docs/clever-parts.md): the call
// bound as a socket deadline and a shared wait deadline (bound=socket, what
// the API runs) or as a context.WithTimeout per statement and per wait
// (bound=timeout). cpu-ns/op is the process's CPU time (user and system)
// per request; run the test binary several times for alternating rounds
// and compare with benchstat -col /bound.
func BenchmarkCleverParts(b *testing.B) {
	jb := newJobBench(b)
	for _, bc := range jb.boundVariants(b) {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			before := cpuTime(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() && getJob(b, bc.handler, jb.path, jb.bd.Bearer) {
				}
			})
			b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// boundVariant is the request path (a cached replica) with the clever call
// bound or the plain one.
type boundVariant struct {
	name, short string
	handler     http.Handler
}

func (jb jobBench) boundVariants(b *testing.B) []boundVariant {
	out := []boundVariant{{name: "bound=socket", short: "socket"}, {name: "bound=timeout", short: "timeout"}}
	for i := range out {
		db := boundedDBWith(b, jb.bd.DBURL, out[i].short == "timeout")
		_, out[i].handler = apitest.CachedReplica(b, db, jb.rc, jb.prefix, jb.prefix+"auth-invalidate-"+out[i].short)
	}
	return out
}

// BenchmarkCleverPartsRounds is BenchmarkCleverParts in paired rounds, for
// a loaded machine: each round sends a block of requests (32 in flight)
// through every variant in turn and takes the process's CPU per request of
// each block; reported are the median CPU per request of each variant and
// the median over rounds of its block's CPU against bound=socket's in the
// same round, in percent (timeout-% is what the plain call bound adds to a
// request), with its quartiles over the rounds. It does its rounds once,
// whatever -benchtime says.
func BenchmarkCleverPartsRounds(b *testing.B) {
	const rounds, block = 60, 2000
	jb := newJobBench(b)
	variants := jb.boundVariants(b)
	for _, v := range variants {
		sendBlock(b, v.handler, jb.path, jb.bd.Bearer, block) // warm up
	}
	cpu := make([][]float64, len(variants))
	for r := range rounds { // whatever b.N: the rounds are the measure
		for k := range variants {
			i := (k + r) % len(variants) // rotate the order each round
			before := cpuTime(b)
			sendBlock(b, variants[i].handler, jb.path, jb.bd.Bearer, block)
			cpu[i] = append(cpu[i], float64(cpuTime(b)-before)/block)
		}
	}
	for i, v := range variants {
		b.ReportMetric(quantile(cpu[i], 0.5), v.short+"-cpu-ns/op")
		if i == 0 {
			continue
		}
		ratios := make([]float64, len(cpu[i]))
		for r := range ratios {
			ratios[r] = 100 * (cpu[i][r]/cpu[0][r] - 1)
		}
		b.ReportMetric(quantile(ratios, 0.25), v.short+"-p25-%")
		b.ReportMetric(quantile(ratios, 0.5), v.short+"-%")
		b.ReportMetric(quantile(ratios, 0.75), v.short+"-p75-%")
	}
}

// quantile is the q quantile of v (nearest rank).
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

// sendBlock sends n GETs of path to h, 32 in flight.
func sendBlock(b *testing.B, h http.Handler, path, bearer string, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for left.Add(-1) >= 0 && getJob(b, h, path, bearer) {
			}
		})
	}
	wg.Wait()
}

// getJob sends one GET of path to h with bearer, under a cancellable
// context as a server's request has (pgx then watches it), and reports
// whether it was answered 200 (an error is recorded otherwise).
func getJob(b *testing.B, h http.Handler, path, bearer string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	req.Header.Set("Authorization", bearer)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Errorf("status %d: %s", rec.Code, rec.Body)
		return false
	}
	return true
}

// boundedDBWith is boundedDB with the plain call bound or not.
func boundedDBWith(b *testing.B, dbURL string, plain bool) *postgres.DB {
	db, err := postgres.OpenWith(context.Background(), dbURL, postgres.Options{CallTimeout: 5 * time.Second, ConnectTimeout: 5 * time.Second, PlainCallBound: plain})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	return db
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
