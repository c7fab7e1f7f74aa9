package api_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/scripts/ceiling/getjob"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// BenchmarkGetComplianceJob drives GET /2/compliance/jobs/{id} with a bearer
// token through the whole API handler on real PostgreSQL and Redis (no
// network client), without and with the credential cache (the cached
// replica opens the database as cmd/aviary does: every call bounded), and a bare
// handler doing only the primary-key read and the JSON answer (as
// scripts/ceiling/get does), for profiles:
//
//	go test -run '^$' -bench GetComplianceJob -cpuprofile cpu.out ./api/
//
// Figures are reported, never asserted.
func BenchmarkGetComplianceJob(b *testing.B) {
	jb := newJobBench(b)
	bd, path := jb.bd, jb.path
	_, cached := apitest.CachedReplica(b, boundedDB(b, bd.DBURL), jb.rc, jb.prefix, jb.prefix+"auth-invalidate")
	for _, bc := range []struct {
		name    string
		handler http.Handler
	}{{"uncached", bd.API}, {"cached", cached}, {"bare", bareJobHandler(b, bd.DBURL)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16) // 32 requests in flight on 2 CPUs, like wrk -c32
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() && getJob(b, bc.handler, path, bd.Bearer) {
				}
			})
		})
	}
}

// jobBench is what the request-path benchmarks share: an API bundle, the
// path of one compliance job of its app, and a Redis prefix for replicas.
type jobBench struct {
	bd     *apitest.Bundle
	path   string
	rc     *redis.Client
	prefix string
}

func newJobBench(b *testing.B) jobBench {
	bd := apitest.Setup(b, 1e6)
	job := factory.ComplianceJob(b, bd.DB, &factory.ComplianceJobOpts{App: bd.App})
	rc, prefix := storagetest.RedisPrefix(b)
	return jobBench{bd: bd, path: "/2/compliance/jobs/" + ids.Format(job.ID), rc: rc, prefix: prefix}
}

// boundedDB opens the database as the API does (cmd/aviary): every call
// bounded by a CallTimeout.
func boundedDB(b *testing.B, dbURL string) *postgres.DB {
	return boundedDBWith(b, dbURL, false)
}

// bareJobHandler is the ceiling's handler (scripts/ceiling/getjob) on
// its own pool of the same database.
func bareJobHandler(b *testing.B, dbURL string) http.Handler {
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return getjob.Handler(pool)
}
