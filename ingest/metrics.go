package ingest

import (
	"github.com/errtrail/errtrail/parse"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are ingest's own Prometheus metrics, namespace errtrail_ingest.
// Label values are bounded: reason is a parse.ErrReason, class an ErrClass,
// why one of "replayed", "resent", step one of the lag poll's steps.
//
// The consumer_* gauges are the whole consumer group's, polled from Kafka
// (lag.go): every instance of the group exports the same values, so
// aggregate them with max, never sum. They have no labels and are absent
// until the first successful poll; a failed poll leaves them at the last
// successful poll's value.
type Metrics struct {
	Consumed         prometheus.Counter
	ConsumedBytes    prometheus.Counter
	Decoded          prometheus.Counter
	DeadLetter       *prometheus.CounterVec // reason
	Skipped          *prometheus.CounterVec // why
	RowsInserted     prometheus.Counter
	InsertDuration   prometheus.Histogram
	BatchRows        prometheus.Histogram
	BatchBytes       prometheus.Histogram
	InsertRetries    *prometheus.CounterVec // class
	InsertFailures   *prometheus.CounterVec // class
	CommitErrors     prometheus.Counter
	FetchErrors      prometheus.Counter
	Rebalances       prometheus.Counter
	Abandoned        prometheus.Counter
	ParkedRows       prometheus.Gauge
	LagMessages      *prometheus.GaugeVec   // no labels: absent until the first lag poll succeeds
	LagSeconds       *prometheus.GaugeVec   // no labels
	CommittedOffsets *prometheus.GaugeVec   // no labels
	EndOffsets       *prometheus.GaugeVec   // no labels
	LagPollErrors    *prometheus.CounterVec // step
	LagPollSuccess   prometheus.Gauge
	LastInsert       prometheus.Gauge
	PermanentFailure prometheus.Gauge
	Retention        *prometheus.CounterVec // result
	OTLPItems        *prometheus.CounterVec // outcome: error, ok, other
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "errtrail_ingest"
	m := &Metrics{
		Consumed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "messages_consumed_total",
			Help: "Kafka messages fetched from the topic."}),
		ConsumedBytes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "consumed_bytes_total",
			Help: "Bytes of Kafka message values fetched."}),
		Decoded: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "messages_decoded_total",
			Help: "Messages decoded into an errors row."}),
		DeadLetter: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "dead_letter_total",
			Help: "Messages routed to dead_letter, by decode failure reason."}, []string{"reason"}),
		Skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "messages_skipped_total",
			Help: "Messages not written again: replayed (offset already in ClickHouse) or resent (event_id seen in the dedup window)."}, []string{"why"}),
		RowsInserted: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "rows_inserted_total",
			Help: "Rows written to the landing table (errors plus dead_letter)."}),
		InsertDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "insert_duration_seconds",
			Help:    "Duration of successful landing inserts.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
		BatchRows: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "batch_rows",
			Help:    "Rows per inserted batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10)}),
		BatchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "batch_bytes",
			Help:    "Kafka value bytes per inserted batch.",
			Buckets: prometheus.ExponentialBuckets(1024, 4, 9)}),
		InsertRetries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "insert_retries_total",
			Help: "Failed insert attempts that will be retried, by error class."}, []string{"class"}),
		InsertFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "insert_failures_total",
			Help: "Inserts that failed permanently and stopped ingest, by error class."}, []string{"class"}),
		CommitErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "commit_errors_total",
			Help: "Kafka offset commits that failed (the next batch's commit covers them)."}),
		FetchErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "fetch_errors_total",
			Help: "Errors returned by the Kafka consumer."}),
		Rebalances: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "rebalances_total",
			Help: "Consumer group rebalances seen (each makes ingest re-read its progress)."}),
		ParkedRows: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "parked_rows",
			Help: "Rows held in memory, uncommitted, because the cluster shard of their partition refused them while other shards took theirs; their partitions are paused until they are stored."}),
		Abandoned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "abandoned_messages_total",
			Help: "Messages dropped uncommitted because their consumer-group generation ended before they were stored (a rebalance outlasted the drain timeout, or the member was evicted); the partition's next owner stores them. Not a loss: a sign of slow inserts during rebalances."}),
		LagMessages: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "consumer_lag_messages",
			Help: "Messages the consumer group has not committed: end offset (high watermark) minus committed offset, summed over every partition of the consumed topics (from the first offset kept where nothing is committed). The whole group's, polled from Kafka, the same on every instance: aggregate with max, never sum. Absent until the first successful poll; keeps the last polled value while polls fail."}, nil),
		LagSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "consumer_lag_seconds",
			Help: "Age of the oldest message the consumer group has not committed: poll time minus the Kafka timestamp of the message at the committed offset (the producer's clock unless the topic stamps LogAppendTime, so a producer's clock skew adds to it), largest over the partitions with messages waiting; set to 0 by a poll that finds none waiting. Grows while nothing is committed (ClickHouse down). The whole group's, the same on every instance: aggregate with max. Absent until the first successful poll; keeps the last polled value while polls fail."}, nil),
		CommittedOffsets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "consumer_committed_offsets",
			Help: "The consumer group's committed offsets summed over the consumed topics' partitions (0 for a partition without a commit): grows by one per message the group committed, whoever inserted it; flat while nothing is committed. Polled with the lag."}, nil),
		EndOffsets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "consumer_end_offsets",
			Help: "End offsets (high watermarks) summed over the consumed topics' partitions: grows by one per message produced, whether or not ingest consumes. Polled with the lag."}, nil),
		LagPollErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "lag_poll_errors_total",
			Help: "Lag polls that failed, by the step that failed (metadata, committed, end_offsets, timestamp); the consumer_* gauges then keep their last value."}, []string{"step"}),
		LagPollSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "lag_poll_success_timestamp_seconds",
			Help: "Unix time of the last successful lag poll (0: none yet): the consumer_* gauges are as old as this."}),
		LastInsert: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "last_insert_success_timestamp_seconds",
			Help: "Unix time of the last successful landing insert."}),
		PermanentFailure: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "permanent_failure",
			Help: "1 when ingest stopped on an error that retrying cannot fix (see the logs)."}),
		Retention: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "retention_runs_total",
			Help: "Runs of the partition-dropping retention (servers without TTL), by result."}, []string{"result"}),
		OTLPItems: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "otlp_items_total",
			Help: "Spans and log records of OTLP topics, by outcome: error (a failed protocol reply: one row), ok (a protocol reply that succeeded: counted, never stored), other (no protocol reply)."}, []string{"outcome"}),
	}
	for _, o := range []string{"error", "ok", "other"} {
		m.OTLPItems.WithLabelValues(o)
	}
	for _, r := range parse.Reasons {
		m.DeadLetter.WithLabelValues(string(r))
	}
	for _, c := range ErrClasses {
		m.InsertRetries.WithLabelValues(string(c))
		m.InsertFailures.WithLabelValues(string(c))
	}
	for _, w := range []string{"replayed", "resent"} {
		m.Skipped.WithLabelValues(w)
	}
	for _, r := range []string{"ok", "error"} {
		m.Retention.WithLabelValues(r)
	}
	for _, st := range lagSteps {
		m.LagPollErrors.WithLabelValues(st)
	}
	if reg != nil {
		reg.MustRegister(m.Consumed, m.ConsumedBytes, m.Decoded, m.DeadLetter, m.Skipped, m.RowsInserted,
			m.InsertDuration, m.BatchRows, m.BatchBytes, m.InsertRetries, m.InsertFailures,
			m.CommitErrors, m.FetchErrors, m.Rebalances, m.Abandoned, m.ParkedRows, m.LagMessages, m.LagSeconds,
			m.CommittedOffsets, m.EndOffsets, m.LagPollErrors, m.LagPollSuccess, m.LastInsert,
			m.PermanentFailure, m.Retention, m.OTLPItems)
	}
	return m
}
