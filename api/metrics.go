package api

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the api's own series. The route label is a route template of
// the route table (or "other" for a path no route serves), never a path:
// paths hold ids.
type metrics struct {
	requests    *prometheus.CounterVec   // route, code
	duration    *prometheus.HistogramVec // route
	inFlight    prometheus.Gauge
	rateLimited *prometheus.CounterVec // route
	authFailed  *prometheus.CounterVec // reason: missing, invalid
	reloads     *prometheus.CounterVec // result: ok, error
}

// routeOther labels requests for paths no route serves.
const routeOther = "other"

// routePages labels requests Config.Pages served.
const routePages = "pages"

func newMetrics(reg prometheus.Registerer, l *limiter) *metrics {
	const ns, sub = "errtrail", "api"
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "Requests answered, by route template and status code (499: the client left first)."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
			Help:    "Time from a request reaching the api to its answer, by route template.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "in_flight_requests",
			Help: "Requests being answered."}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "rate_limited_total",
			Help: "Requests refused with 429, by route template."}, []string{"route"}),
		authFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "auth_failures_total",
			Help: "Requests refused with 401, by reason: missing (no bearer token) or invalid (not an accepted token)."}, []string{"reason"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "token_file_reloads_total",
			Help: "Re-reads of the token file, by result (ok, error: the tokens last read stay)."}, []string{"result"}),
	}
	for _, r := range []string{"missing", "invalid"} {
		m.authFailed.WithLabelValues(r)
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight, m.rateLimited, m.authFailed, m.reloads)
	if l != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "rate_limit_clients",
			Help: "Clients whose rate-limit buckets are kept."}, func() float64 { return float64(l.clients()) }))
	}
	return m
}
