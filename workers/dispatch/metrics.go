package dispatch

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a dispatcher's Prometheus series, labelled by cursor name
// (and sink), so several dispatchers share one registry.
type metrics struct {
	dispatched *prometheus.CounterVec
	lag        *prometheus.GaugeVec
	held       *prometheus.GaugeVec
	failures   *prometheus.CounterVec
	poisoned   *prometheus.CounterVec
	handle     *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		dispatched: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_events_dispatched_total", Help: "Events every sink took and the cursor moved past, by cursor.",
		}, []string{"cursor"})),
		lag: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "aviary_events_lag", Help: "Events appended and not yet dispatched (head seq - cursor), by cursor, as the lease holder last saw it.",
		}, []string{"cursor"})),
		held: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "aviary_events_cursor_held", Help: "1 while this process holds the cursor's lease (dispatches), else 0.",
		}, []string{"cursor"})),
		failures: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_events_sink_failures_total", Help: "Batches a sink failed to take (each is offered again), by cursor and sink.",
		}, []string{"cursor", "sink"})),
		poisoned: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_events_poison_skipped_total", Help: "Events a sink failed on their own while it took the next one, skipped (logged), by cursor and sink.",
		}, []string{"cursor", "sink"})),
		handle: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aviary_events_sink_seconds", Help: "Time a sink took on one batch, by cursor and sink.",
			Buckets: []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5},
		}, []string{"cursor", "sink"})),
	}
}

// register registers c, or returns the collector already registered
// under its name (another dispatcher of the process).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}
