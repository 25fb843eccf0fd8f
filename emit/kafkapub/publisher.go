package kafkapub

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/emit"
)

// DefaultTopic is the contract's default topic.
const DefaultTopic = "errtrail.replies"

// MaxEventBytes is the largest event the decoder accepts
// (--parse.max-bytes); larger ones are dropped as too_large here.
const MaxEventBytes = 1 << 20

// Config configures a Publisher. Zero values take the defaults.
type Config struct {
	Brokers []string // host:port of one or more brokers
	Topic   string   // DefaultTopic

	QueueSize  int           // events waiting at most (10000); beyond, Publish drops (queue_full)
	BatchSize  int           // events per Kafka produce request at most (500)
	BatchBytes int           // bytes per batch at most (1 MiB, at least one event)
	Linger     time.Duration // wait for a batch to fill (20ms)
	// WriteTimeout bounds one batch, retries included (10s); a batch that
	// fails is dropped (kafka_error): the queue, not retries, absorbs outages.
	WriteTimeout time.Duration
	Compression  kafka.Compression // kafka.Lz4
	MaxAttempts  int               // attempts per batch inside kafka-go (3)
	Transport    kafka.RoundTripper
	Metrics      Metrics      // counts nothing when nil; emitprom.NewMetrics for Prometheus
	Logger       *slog.Logger // Kafka failures, at most one line per 10 s; slog.Default when nil
}

func (c *Config) defaults() {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 10000
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 500
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = 1 << 20
	}
	if c.Linger <= 0 {
		c.Linger = 20 * time.Millisecond
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.Compression == 0 {
		c.Compression = kafka.Lz4
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Publisher publishes events to Kafka from a bounded queue, in batches, from
// one goroutine of its own. Publish never blocks and never waits for Kafka:
// the event is marshaled, put in the queue or dropped and counted. It is
// safe for concurrent use.
type Publisher struct {
	cfg Config
	w   *kafka.Writer
	q   chan []byte
	m   Metrics

	mu     sync.RWMutex // Publish holds it shared; Close takes it to refuse later events
	closed bool

	stop     chan struct{} // Close asks the loop to drain and stop
	done     chan struct{} // the loop ended
	checked  chan struct{} // the start's topic check ended (topic.go)
	abort    context.CancelFunc
	writeCtx context.Context
	lastLog  atomic.Int64
}

var errNoBrokers = errors.New("kafkapub: no Kafka brokers")

// New starts a publisher. It does not wait for Kafka: a broker that
// is down costs dropped events, never a failed or delayed start. In the
// background it checks that the topic exists and logs at ERROR level when
// the brokers say it does not (CheckTopic: topics are not created for you,
// and every event to a missing topic is dropped).
func New(cfg Config) (*Publisher, error) {
	cfg.defaults()
	if len(cfg.Brokers) == 0 {
		return nil, errNoBrokers
	}
	batchBytes := cfg.BatchBytes
	if batchBytes < MaxEventBytes+4096 {
		batchBytes = MaxEventBytes + 4096 // room for one event of the largest size
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     &kafka.RoundRobin{},
		MaxAttempts:  cfg.MaxAttempts,
		BatchSize:    cfg.BatchSize,
		BatchBytes:   int64(batchBytes),
		BatchTimeout: time.Millisecond, // the loop has lingered already
		WriteTimeout: cfg.WriteTimeout,
		RequiredAcks: kafka.RequireAll,
		Compression:  cfg.Compression,
		Transport:    cfg.Transport,
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{cfg: cfg, w: w, q: make(chan []byte, cfg.QueueSize), m: cfg.Metrics,
		stop: make(chan struct{}), done: make(chan struct{}), checked: make(chan struct{}), abort: cancel, writeCtx: ctx}
	p.m.SetQueueLength(p.QueueLen)
	go p.loop()
	go p.checkAtStart()
	return p, nil
}

// Publish marshals ev and queues it. It returns false when the event was
// dropped (and counted). It does not keep ev or anything ev points to.
func (p *Publisher) Publish(ev *emit.Event) bool {
	b, err := ev.AppendJSON(make([]byte, 0, 512+len(ev.Reply.Body)+len(ev.Reply.Body)/8))
	if err != nil {
		p.m.AddDropped(DropInvalid, 1)
		return false
	}
	return p.PublishJSON(b)
}

// PublishJSON queues an event that is already JSON (the tap's path). The
// publisher owns b from now on.
func (p *Publisher) PublishJSON(b []byte) bool {
	if len(b) > MaxEventBytes {
		p.m.AddDropped(DropTooLarge, 1)
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.m.AddDropped(DropClosed, 1)
		return false
	}
	select {
	case p.q <- b:
		p.m.AddQueued(1)
		return true
	default:
		p.m.AddDropped(DropQueueFull, 1)
		return false
	}
}

// CountDrop implements emit.DropCounter: the builders' drops are counted
// with the publisher's.
func (p *Publisher) CountDrop(reason string) { p.m.AddDropped(reason, 1) }

// QueueLen returns the number of events waiting.
func (p *Publisher) QueueLen() int { return len(p.q) }

// Close stops accepting events (later ones are dropped as closed), sends
// what is queued until ctx ends, drops and counts the rest (closed), and
// closes the Kafka writer. It returns ctx's error when the deadline cut the
// flush short.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	p.mu.Unlock()
	if already {
		<-p.done
		<-p.checked
		return nil
	}
	close(p.stop)
	var err error
	select {
	case <-p.done:
	case <-ctx.Done():
		err = ctx.Err()
		p.abort() // the batch in flight fails now; the loop counts the rest
		<-p.done
	}
	p.abort()
	<-p.checked
	if cerr := p.w.Close(); err == nil && cerr != nil && !errors.Is(cerr, context.Canceled) {
		err = cerr
	}
	return err
}

func (p *Publisher) loop() {
	defer close(p.done)
	batch := make([]kafka.Message, 0, p.cfg.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var first []byte
		select {
		case first = <-p.q:
		case <-p.stop:
			p.drain(batch[:0])
			return
		}
		batch = append(batch[:0], kafka.Message{Value: first})
		size := len(first)
		timer.Reset(p.cfg.Linger)
	fill:
		for len(batch) < p.cfg.BatchSize && size < p.cfg.BatchBytes {
			select {
			case b := <-p.q:
				batch = append(batch, kafka.Message{Value: b})
				size += len(b)
			case <-timer.C:
				break fill
			case <-p.stop:
				break fill
			}
		}
		timer.Stop()
		p.write(batch)
	}
}

// drain sends what is queued at Close, until the write context is
// cancelled; what remains is counted as closed.
func (p *Publisher) drain(batch []kafka.Message) {
	for {
		batch = batch[:0]
		size := 0
	take:
		for len(batch) < p.cfg.BatchSize && size < p.cfg.BatchBytes {
			select {
			case b := <-p.q:
				batch = append(batch, kafka.Message{Value: b})
				size += len(b)
			default:
				break take
			}
		}
		if len(batch) == 0 {
			return
		}
		if p.writeCtx.Err() != nil {
			p.m.AddDropped(DropClosed, len(batch)+len(p.q))
			for len(p.q) > 0 {
				<-p.q
			}
			return
		}
		p.write(batch)
	}
}

func (p *Publisher) write(batch []kafka.Message) {
	ctx, cancel := context.WithTimeout(p.writeCtx, p.cfg.WriteTimeout)
	err := p.w.WriteMessages(ctx, batch...)
	cancel()
	failed := 0
	if err != nil {
		var werrs kafka.WriteErrors
		if errors.As(err, &werrs) {
			failed = werrs.Count()
		} else {
			failed = len(batch)
		}
		reason := DropKafkaError
		if p.writeCtx.Err() != nil {
			reason = DropClosed // cut short by Close's deadline
		}
		p.m.AddDropped(reason, failed)
		p.logFailure(err, failed)
	}
	p.m.AddSent(len(batch) - failed)
	for i := range batch {
		batch[i] = kafka.Message{}
	}
}

func (p *Publisher) logFailure(err error, n int) {
	now := time.Now().UnixNano()
	if last := p.lastLog.Load(); now-last < int64(10*time.Second) || !p.lastLog.CompareAndSwap(last, now) {
		return
	}
	p.cfg.Logger.Warn("kafkapub: Kafka write failed, events dropped", "events", n, "topic", p.cfg.Topic,
		"brokers", strings.Join(p.cfg.Brokers, ","), "err", err)
}
