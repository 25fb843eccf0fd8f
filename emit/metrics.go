package emit

import "github.com/prometheus/client_golang/prometheus"

// Drop reasons, the values of errtrail_emit_dropped_total{reason}.
const (
	DropQueueFull  = "queue_full"  // the queue was full (Kafka slow or down)
	DropKafkaError = "kafka_error" // Kafka refused the batch or could not be reached
	DropTooLarge   = "too_large"   // the event JSON is over the contract's 1 MiB, or the body over the capture bound
	DropClosed     = "closed"      // published after Close, or still queued when Close's deadline passed
	DropInvalid    = "invalid"     // the event is outside the contract (AppendJSON failed)
)

var dropReasons = []string{DropQueueFull, DropKafkaError, DropTooLarge, DropClosed, DropInvalid}

// Metrics are the publisher's counters. The label values are the fixed
// reasons above, never an agent or caller.
type Metrics struct {
	Queued  prometheus.Counter
	Sent    prometheus.Counter
	Dropped *prometheus.CounterVec
	dropped map[string]prometheus.Counter
	queue   func() float64
}

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
	for _, r := range dropReasons {
		m.dropped[r] = m.Dropped.WithLabelValues(r)
	}
	if reg != nil {
		gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "errtrail", Subsystem: "emit", Name: "queue_length",
			Help: "Events waiting in the publish queue."}, func() float64 {
			if m.queue == nil {
				return 0
			}
			return m.queue()
		})
		reg.MustRegister(m.Queued, m.Sent, m.Dropped, gauge)
	}
	return m
}

func (m *Metrics) drop(reason string, n int) {
	if n > 0 {
		m.dropped[reason].Add(float64(n))
	}
}
