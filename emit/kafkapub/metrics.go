package kafkapub

// Drop reasons, the values of errtrail_emit_dropped_total{reason}.
const (
	DropQueueFull  = "queue_full"  // the queue was full (Kafka slow or down)
	DropKafkaError = "kafka_error" // Kafka refused the batch or could not be reached
	DropTooLarge   = "too_large"   // the event JSON is over the contract's 1 MiB, or the body over the capture bound
	DropClosed     = "closed"      // published after Close, or still queued when Close's deadline passed
	DropInvalid    = "invalid"     // the event is outside the contract (AppendJSON failed)
)

// DropReasons returns every drop reason, for a metric that shows each from
// the start.
func DropReasons() []string {
	return []string{DropQueueFull, DropKafkaError, DropTooLarge, DropClosed, DropInvalid}
}

// Metrics receives the publisher's counts. The publisher calls it on its
// hot path and from its own goroutine: an implementation must be safe for
// concurrent use and must not block. The reasons are the fixed Drop*
// values, never an agent or caller. emitprom.NewMetrics is the Prometheus
// implementation; it lives in a package of its own so that a publisher
// does not link client_golang unless it asks for it.
type Metrics interface {
	AddQueued(n int)                 // events accepted into the queue
	AddSent(n int)                   // events Kafka acknowledged
	AddDropped(reason string, n int) // events lost, by reason
	// SetQueueLength is called once, by New, with a function that reads
	// the queue's length (for a gauge read at scrape time).
	SetQueueLength(func() int)
}

// noMetrics counts nothing: Config.Metrics left nil.
type noMetrics struct{}

func (noMetrics) AddQueued(int)             {}
func (noMetrics) AddSent(int)               {}
func (noMetrics) AddDropped(string, int)    {}
func (noMetrics) SetQueueLength(func() int) {}
