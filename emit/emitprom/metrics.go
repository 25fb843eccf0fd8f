// Package emitprom counts what an errtrail publisher (emit/kafkapub) does
// in Prometheus metrics: errtrail_emit_queued_total, _sent_total,
// _dropped_total{reason} and _queue_length, registered only in the
// registry given to NewMetrics.
//
//	pub, err := kafkapub.New(kafkapub.Config{Brokers: brokers,
//		Metrics: emitprom.NewMetrics(prometheus.DefaultRegisterer)})
//
// It is a package of its own so that an agent that publishes events does
// not link client_golang unless it wants these metrics (docs/emit.md has
// the cost).
package emitprom

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/emit/kafkapub"
)

// Metrics are the publisher's counters (a kafkapub.Metrics). The label
// values are the fixed drop reasons, never an agent or caller.
type Metrics struct {
	Queued  prometheus.Counter
	Sent    prometheus.Counter
	Dropped *prometheus.CounterVec
	dropped map[string]prometheus.Counter
	queue   atomic.Pointer[func() int] // set by the publisher, read at scrape time
}

var _ kafkapub.Metrics = (*Metrics)(nil)

// NewMetrics creates the metrics and registers them with reg (none when
// reg is nil). The queue length gauge reads the publisher it is given to.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Queued: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "emit", Name: "queued_total",
			Help: "Error-reply events accepted into the publish queue."}),
		Sent: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "emit", Name: "sent_total",
			Help: "Error-reply events Kafka acknowledged."}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "emit", Name: "dropped_total",
			Help: "Error-reply events lost, by reason (queue_full, kafka_error, too_large, closed, invalid)."}, []string{"reason"}),
		dropped: map[string]prometheus.Counter{},
	}
	for _, r := range kafkapub.DropReasons() {
		m.dropped[r] = m.Dropped.WithLabelValues(r)
	}
	if reg != nil {
		gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "errtrail", Subsystem: "emit", Name: "queue_length",
			Help: "Events waiting in the publish queue."}, func() float64 {
			if f := m.queue.Load(); f != nil {
				return float64((*f)())
			}
			return 0
		})
		reg.MustRegister(m.Queued, m.Sent, m.Dropped, gauge)
	}
	return m
}

// AddQueued implements kafkapub.Metrics.
func (m *Metrics) AddQueued(n int) { m.Queued.Add(float64(n)) }

// AddSent implements kafkapub.Metrics.
func (m *Metrics) AddSent(n int) { m.Sent.Add(float64(n)) }

// AddDropped implements kafkapub.Metrics. A reason outside DropReasons
// (a builder's, through emit.DropCounter) gets its own series.
func (m *Metrics) AddDropped(reason string, n int) {
	if n <= 0 {
		return
	}
	c, ok := m.dropped[reason]
	if !ok {
		c = m.Dropped.WithLabelValues(reason)
	}
	c.Add(float64(n))
}

// SetQueueLength implements kafkapub.Metrics.
func (m *Metrics) SetQueueLength(f func() int) { m.queue.Store(&f) }
