package api_test

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// BenchmarkGetComplianceJob drives GET /2/compliance/jobs/{id} with a bearer
// token through the whole API handler on real PostgreSQL and Redis (no
// network client), without and with the credential cache, and a bare
// handler doing only the primary-key read and the JSON answer (as
// scripts/ceiling/get does), for profiles:
//
//	go test -run '^$' -bench GetComplianceJob -cpuprofile cpu.out ./api/
//
// Figures are reported, never asserted.
func BenchmarkGetComplianceJob(b *testing.B) {
	bd := setup(b, 1e6)
	job := factory.ComplianceJob(b, bd.db, &factory.ComplianceJobOpts{App: bd.app})
	path := "/2/compliance/jobs/" + ids.Format(job.ID)
	rc, prefix := storagetest.RedisPrefix(b)
	_, cached := cachedReplica(b, bd.db, rc, prefix, prefix+"auth-invalidate")
	for _, bc := range []struct {
		name    string
		handler http.Handler
	}{{"uncached", bd.api}, {"cached", cached}, {"bare", bareJobHandler(b, bd.dbURL)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16) // 32 requests in flight on 2 CPUs, like wrk -c32
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodGet, path, nil)
					req.Header.Set("Authorization", bd.bearer)
					rec := httptest.NewRecorder()
					bc.handler.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// bareJobHandler answers GET /2/compliance/jobs/{id} with one primary-key
// read of the job row and its JSON, nothing else (scripts/ceiling/get).
func bareJobHandler(b *testing.B, dbURL string) http.Handler {
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	type job struct {
		ID, Type, Name, Status, UploadURL, DownloadURL string
		Resumable                                      bool
		UploadExpiresAt, DownloadExpiresAt, CreatedAt  time.Time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2/compliance/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var j job
		var n int64
		err = pool.QueryRow(r.Context(), `SELECT id, type, name, resumable, status, upload_url, download_url,
			upload_expires_at, download_expires_at, created_at FROM compliance_jobs WHERE id = $1`, id).
			Scan(&n, &j.Type, &j.Name, &j.Resumable, &j.Status, &j.UploadURL, &j.DownloadURL,
				&j.UploadExpiresAt, &j.DownloadExpiresAt, &j.CreatedAt)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		j.ID = strconv.FormatInt(n, 10)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(struct{ Data job }{j})
	})
	return mux
}
