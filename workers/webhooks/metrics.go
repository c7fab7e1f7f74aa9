package webhooks

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery outcomes (the deliveries metric's label).
const (
	outcomeDelivered       = "delivered"
	outcomeRetried         = "retried"
	outcomeDeadUnreachable = "dead_unreachable"
	outcomeDeadRejected    = "dead_rejected"
	outcomeProbeFailed     = "probe_failed"
)

// deliveryMetrics are a deliverer's Prometheus series.
type deliveryMetrics struct {
	attempts  *prometheus.CounterVec
	delivered prometheus.Counter // attempts{outcome="delivered"}
	latency   prometheus.Histogram
	failing   prometheus.Gauge
	pending   prometheus.Gauge
	draining  prometheus.Gauge
	recordErr prometheus.Counter
}

func newDeliveryMetrics(reg prometheus.Registerer) *deliveryMetrics {
	m := &deliveryMetrics{
		attempts: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aviary_webhook_deliveries_total",
			Help: "Delivery attempts by outcome: delivered, retried (a failure with attempts left), dead_unreachable, dead_rejected, probe_failed.",
		}, []string{"outcome"})),
		latency: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "aviary_webhook_attempt_seconds", Help: "Time from sending a delivery to the receiver's status line (or the failure).",
			Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10},
		})),
		failing: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "aviary_webhook_failing", Help: "Live webhooks that are failing (only probes are sent), as a deliverer last counted.",
		})),
		pending: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "aviary_webhook_deliveries_pending", Help: "Pending deliveries of all webhooks (the queues' depth), as a deliverer last counted.",
		})),
		draining: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "aviary_webhook_draining", Help: "Webhooks this process holds and sends now.",
		})),
		recordErr: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "aviary_webhook_record_failures_total", Help: "Outcome batches that could not be recorded (their deliveries are sent again).",
		})),
	}
	m.delivered = m.attempts.WithLabelValues(outcomeDelivered)
	return m
}

// register registers c, or returns the collector already registered
// under its name (another deliverer of the process).
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
