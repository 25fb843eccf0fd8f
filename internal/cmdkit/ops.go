package cmdkit

import (
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is where a process's metrics are and what /metrics serves:
// *prometheus.Registry is one (the process's own, never the global one).
type Registry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// Ready answers /readyz: nil when ready, else why not. detail, if not
// empty, is added to the "ready" answer (such as the time of the latest
// evaluation).
type Ready func() (detail string, err error)

// Ops serves the operations endpoints of a process: /healthz (200 "ok"
// while the process runs), /readyz (200 "ready" while ready returns nil,
// else 503 "not ready: " and the reason) and /metrics from reg.
func Ops(reg Registry, ready Ready) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", MetricsHandler(reg))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { WriteHealthy(w) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		detail, err := ready()
		if err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "not ready: "+err.Error()+"\n")
			return
		}
		WriteReady(w, detail)
	})
	return mux
}

// MetricsHandler serves reg in Prometheus's formats; its own failures are
// counted in reg (promhttp_metric_handler_errors_total).
func MetricsHandler(reg Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// WriteHealthy is the answer of /healthz: 200 "ok".
func WriteHealthy(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "ok\n")
}

// WriteReady is the answer of /readyz when ready: 200 "ready", then ": "
// and detail when there is one.
func WriteReady(w http.ResponseWriter, detail string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if detail != "" {
		detail = ": " + detail
	}
	_, _ = io.WriteString(w, "ready"+detail+"\n")
}
