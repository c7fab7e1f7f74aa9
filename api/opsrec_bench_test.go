package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/opsredis"
)

// BenchmarkRecordOps is what recording costs each answer on the request
// path (docs/console.md): the Recorder only gathers in memory; its writes
// to Redis happen once a second in Run, off the path (not flushed here).
func BenchmarkRecordOps(b *testing.B) {
	for _, tt := range []struct {
		name   string
		status int
	}{{"2xx", 200}, {"4xx", 404}} {
		b.Run(tt.name, func(b *testing.B) {
			rec := opsredis.NewRecorder(opsredis.New(nil, ""), nil)
			s := &Server{Deps: Deps{Ops: rec}}
			w := httptest.NewRecorder()
			w.Header().Set(RequestIDHeader, "abc")
			r := httptest.NewRequest(http.MethodGet, "/2/users/12", nil)
			sr := &statusRecorder{ResponseWriter: w, status: tt.status, app: 7, problemType: "about:blank", title: "Not Found"}
			now := time.Now()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.recordOps(w, r, sr, now)
			}
		})
	}
}
