package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches the children of each label set served, so a request
	// costs one map lookup instead of hashing its labels into both vectors.
	// Routes are the mux's patterns and methods and statuses are bounded, so
	// it stays small.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct {
	method, route string
	status        int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_http_requests_total", Help: "HTTP requests served, by method, route and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aviary_http_request_duration_seconds", Help: "HTTP request latency, by method and route.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *httpMetrics) observe(method, route string, status int, elapsed time.Duration) {
	method = methodLabel(method)
	key := seriesKey{method: method, route: route, status: status}
	v, ok := m.series.Load(key)
	if !ok {
		v, _ = m.series.LoadOrStore(key, &series{
			requests: m.requests.WithLabelValues(method, route, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(method, route),
		})
	}
	s := v.(*series)
	s.requests.Inc()
	s.duration.Observe(elapsed.Seconds())
}

// labelledMethods are the request methods that get their own metric label.
var labelledMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// methodLabel bounds the method label: clients choose the method freely, so
// any other one is counted as "other" rather than as a new series.
func methodLabel(method string) string {
	if labelledMethods[method] {
		return method
	}
	return "other"
}
