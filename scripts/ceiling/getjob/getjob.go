// Package getjob is the handler of the request path's ceiling
// (docs/benchmarks.md): GET /2/compliance/jobs/{id} doing only what no
// implementation can skip, one primary-key read of the job row with pgx
// and the JSON answer. No authentication, rate limiting, middleware,
// logging or metrics. scripts/ceiling/get serves it over HTTP; the API's
// in-process request path benchmark drives it beside the API's handler.
package getjob

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type job struct {
	ID                string    `json:"id"`
	Type              string    `json:"type"`
	Name              string    `json:"name"`
	Resumable         bool      `json:"resumable"`
	Status            string    `json:"status"`
	UploadURL         string    `json:"upload_url"`
	DownloadURL       string    `json:"download_url"`
	UploadExpiresAt   time.Time `json:"upload_expires_at"`
	DownloadExpiresAt time.Time `json:"download_expires_at"`
	CreatedAt         time.Time `json:"created_at"`
}

// Handler serves GET /2/compliance/jobs/{id} from pool (and GET /healthz).
func Handler(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2/compliance/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
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
		_ = json.NewEncoder(w).Encode(struct {
			Data job `json:"data"`
		}{j})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	return mux
}
