package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/otlpin"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
	"github.com/segmentio/kafka-go"
)

// ProgressFunc returns the highest Kafka offset per partition that
// ClickHouse holds for topic (schema.Progress).
type ProgressFunc func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error)

// RetainFunc drops data older than the retention on servers without TTL
// (schema.Retain).
type RetainFunc func(ctx context.Context, conn driver.Conn) error

// Config configures a Pipeline. Zero values take the documented defaults.
type Config struct {
	Topics []string // the topics the reader consumes; used for replay filtering
	// OTLP names the topics (among Topics) that carry OpenTelemetry data as
	// the Collector's Kafka exporter writes it, and their format; their
	// messages are decoded by package otlpin into zero or more rows each
	// (one per failed protocol reply, kafka_index its place). Every other
	// topic carries error events.
	OTLP map[string]otlpin.Format
	// OTLPCaller is the attribute that names the caller in OTLP data
	// (otlpin.Config.CallerAttribute; default enduser.id).
	OTLPCaller string
	Table      string // insert target, database-qualified if needed; default "landing"
	Limits     Limits

	Workers     int           // decode goroutines; default GOMAXPROCS
	DedupWindow int           // producer event ids remembered per generation; default 262,144; <0 disables
	Decoder     parse.Options // KeepRaw defaults to -1: ingest redacts raw bytes itself, for dead letters only
	// RedactRaw makes the raw bytes of a dead-letter row; default
	// parse.RedactRaw.
	RedactRaw func(dst, value []byte, max int) []byte
	RawMax    int // bytes of raw kept per dead-letter row; default 4 KiB, <0 keeps none

	// InsertBlockRows is the size of the blocks one INSERT sends; default
	// 1,024. The driver builds its column buffers anew for every INSERT,
	// grows them while the first block is appended (a string column's
	// bytes and offsets are copied about four times over, as Go grows a
	// large slice by a quarter) and keeps them for the blocks after it, so
	// the first block's size is what an INSERT pays for growing. ClickHouse
	// squashes the blocks of an INSERT (up to min_insert_block_size_rows,
	// about a million rows) before writing, so a batch is still one part
	// per table partition. docs/performance.md has the sweep behind the
	// default.
	InsertBlockRows int

	Backoff         Backoff
	InsertTimeout   time.Duration // one insert attempt; default 60s
	ShutdownTimeout time.Duration // flush and commit after the stop signal; default 30s
	CommitTimeout   time.Duration // one Kafka commit; default 10s

	// UnknownTableGrace is how long an insert refused with UNKNOWN_TABLE
	// is retried, once this process has stored a batch, before the error
	// is permanent (grace.go); default 30s, <0 none.
	UnknownTableGrace time.Duration

	// InsertSettings returns the query settings of one insert given the
	// batch's token, which names its offset range per partition and is the
	// same on every retry (schema.InsertSettings: insert deduplication on
	// servers that have it). nil sends no settings.
	InsertSettings func(token string) map[string]any

	// Shards, on a cluster, sends each shard its rows directly (shards.go)
	// instead of through the Distributed Table, so that one shard down
	// fails only its own rows; with a Group source those rows are parked
	// and their partitions paused while the other shards' flow (park.go).
	// nil: every insert goes to Table.
	Shards *Shards

	Progress    ProgressFunc // required
	Retain      RetainFunc   // optional; run every RetainEvery
	RetainEvery time.Duration

	// LagInterval is the time between two polls of the consumer group's
	// lag (lag.go); default 5s, <0 turns the lag gauges off. LagClient
	// asks Kafka; default: a kafka.Client over the reader's brokers whose
	// transport copies the reader's Dialer (TLS, SASL). The group is the
	// reader's GroupID.
	LagInterval time.Duration
	LagClient   LagClient

	Logger  *slog.Logger
	Metrics *Metrics
}

func (c *Config) defaults() {
	if c.Table == "" {
		c.Table = schema.TableLanding
	}
	c.Limits.defaults()
	if c.Decoder.KeepRaw == 0 {
		c.Decoder.KeepRaw = -1 // RawBody is unused: skip redacting every good body
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.InsertBlockRows <= 0 {
		c.InsertBlockRows = 1024
	}
	if c.DedupWindow == 0 {
		c.DedupWindow = 1 << 18
	}
	if c.RawMax == 0 {
		c.RawMax = 4 << 10
	}
	if c.RedactRaw == nil {
		c.RedactRaw = parse.RedactRaw
	}
	if c.InsertTimeout <= 0 {
		c.InsertTimeout = 60 * time.Second
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.CommitTimeout <= 0 {
		c.CommitTimeout = 10 * time.Second
	}
	if c.UnknownTableGrace == 0 {
		c.UnknownTableGrace = defaultUnknownTableGrace
	}
	if c.RetainEvery <= 0 {
		c.RetainEvery = time.Hour
	}
	if c.LagInterval == 0 {
		c.LagInterval = defaultLagInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
}

// PermanentError is returned by Run when ingest stopped on an error that
// retrying cannot fix. Nothing after the failed batch was committed.
type PermanentError struct {
	Class ErrClass
	Err   error
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("ingest stopped (%s): %v", e.Class, e.Err)
}
func (e *PermanentError) Unwrap() error { return e.Err }

// Pipeline is one consumer: three stages, each a type that owns its state,
// joined by channels, plus the loops beside them.
//
//	fetcher --batch--> decoder --slot--> writer ----refused rows----> park lot
//	(fetch.go)         (decode.go,       (write.go, insert.go,         (park.go: on a
//	                    replay.go,        shards.go, ledger.go,         cluster with a
//	                    dedup.go)         commit.go) <--attempt/settle-- Group source)
//
// Each batch carries its acknowledgement to the writer (slot.ack), which
// calls it once the batch is settled: stored and committed, or dropped
// uncommitted with its generation. The ack gives the batch back to the
// fetcher's pool and the slot back to the decoder's, so what is in flight
// is bounded by the pools and fetching stops while ClickHouse refuses rows.
// The Pipeline itself holds only the wiring, the lifecycle (Run, Ready,
// Failure) and the loops beside the stages: retention (retain.go) and the
// lag monitor (lag.go).
type Pipeline struct {
	cfg  Config
	r    Consumer
	conn driver.Conn
	m    *Metrics
	log  *slog.Logger
	warn *LogLimiter // retries, commits

	running atomic.Bool
	failed  atomic.Pointer[PermanentError]

	fetch *fetcher
	dec   *decoder
	wr    *writer

	// lag is nil when lag polling is off; its inflight record is written
	// by the decoder and read by lag.
	lag      *lagMonitor
	lagClose func()
}

// New returns a Pipeline reading r (a *Group, or a consumer-group
// *kafka.Reader, on cfg.Topics) and writing through conn (native protocol).
// Unless cfg.LagInterval < 0, it also polls the lag of r's consumer group.
// Only a *Group keeps a rebalance from storing a partition's in-flight
// messages twice (group.go).
func New(cfg Config, r Consumer, conn driver.Conn) (*Pipeline, error) {
	cfg.defaults()
	if cfg.Progress == nil {
		return nil, errors.New("ingest: Config.Progress is required")
	}
	if sh := cfg.Shards; sh != nil && (len(sh.Conns) == 0 || sh.Of == nil || sh.Table == "") {
		return nil, errors.New("ingest: Config.Shards needs a Table, an Of function and a connection per shard")
	}
	if len(cfg.Topics) == 0 || slices.Contains(cfg.Topics, "") {
		return nil, errors.New("ingest: Config.Topics must name at least one topic, and no empty one")
	}
	p := &Pipeline{
		cfg: cfg, r: r, conn: conn, m: cfg.Metrics, log: cfg.Logger,
		warn: NewLogLimiter(cfg.Logger, 5, 10*time.Second),
	}
	var flight *inflight
	if rc, ok := r.(interface{ Config() kafka.ReaderConfig }); ok && cfg.LagInterval > 0 && rc.Config().GroupID != "" {
		client := cfg.LagClient
		if client == nil {
			c, t := newLagClient(rc.Config(), cfg.Topics)
			client, p.lagClose = c, t.CloseIdleConnections
		}
		flight = newInflight()
		p.lag = newLagMonitor(client, rc.Config().GroupID, cfg.Topics, cfg.LagInterval, p.m, p.warn, flight)
	}
	if g, ok := r.(interface{ onGenerationEnd(func()) }); ok {
		g.onGenerationEnd(p.m.Rebalances.Inc) // a Group: counted as each generation ends
	}
	p.fetch = newFetcher(cfg, r, p.warn)
	p.dec = newDecoder(cfg, r, conn, flight, p.warn)
	p.wr = newWriter(cfg, r, conn, p.lag, p.warn)
	return p, nil
}

// Ready reports whether the pipeline is consuming (for /readyz): running,
// not failed, and, with a Group source, in the consumer group.
func (p *Pipeline) Ready() bool {
	if !p.running.Load() || p.failed.Load() != nil {
		return false
	}
	if j, ok := p.r.(interface{ Joined() bool }); ok {
		return j.Joined()
	}
	return true
}

// Failure returns the permanent error that stopped ingest, or nil.
func (p *Pipeline) Failure() error {
	if e := p.failed.Load(); e != nil {
		return e
	}
	return nil
}

// Run consumes until ctx is cancelled, then flushes what it fetched, inserts
// it, commits and returns nil, all within ShutdownTimeout. After a permanent
// failure it stops consuming, reports it (logs, metric, Ready) and waits for
// ctx to return the *PermanentError. The lag is polled from Run's start
// until ctx ends, whatever the stages do. The caller closes the reader
// after Run.
//
// Each stage runs in a goroutine of its own (the writer in Run's). The
// fetcher stops at ctx's end or a permanent failure; the decoder and the
// writer then finish what was fetched and end when their input is closed,
// or at the shutdown deadline.
func (p *Pipeline) Run(ctx context.Context) error {
	p.running.Store(true)
	defer p.running.Store(false)

	// fetchCtx stops fetching (and retention): at ctx's end, or on a
	// permanent failure.
	fetchCtx, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	// hard bounds the work after the stop signal: it ends ShutdownTimeout
	// after ctx, or when Run returns.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	go p.shutdownDeadline(ctx, hard, cancelHard)

	batches := make(chan *batch, 1)
	decoded := make(chan *slot, 1)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.fetch.run(fetchCtx, hard, batches) }()
	decodeDone := make(chan error, 1)
	go func() { decodeDone <- p.dec.run(hard, batches, decoded) }()
	if p.cfg.Retain != nil {
		wg.Add(1)
		go func() { defer wg.Done(); p.retainLoop(fetchCtx) }()
	}
	lagCtx, stopLag := context.WithCancel(ctx)
	defer stopLag()
	if p.lag != nil {
		wg.Add(1)
		go func() { defer wg.Done(); p.lag.run(lagCtx) }()
		if p.lagClose != nil {
			defer p.lagClose()
		}
	}

	err := p.wr.run(hard, decoded)
	var perm *PermanentError
	if err == nil {
		// decoded is closed: the decoder ended, maybe on its own error.
		err = <-decodeDone
		decodeDone = nil
	}
	if errors.As(err, &perm) {
		stopFetch()
		p.reportPermanent(perm)
		<-ctx.Done()
	}
	cancelHard()
	stopLag()
	if decodeDone != nil {
		<-decodeDone
	}
	wg.Wait()
	return err
}

// shutdownDeadline waits for the stop signal (ctx's end) and then ends hard
// ShutdownTimeout later, unless hard ended first (Run returned).
func (p *Pipeline) shutdownDeadline(ctx, hard context.Context, cancelHard context.CancelFunc) {
	select {
	case <-ctx.Done():
	case <-hard.Done():
		return
	}
	p.log.Info("stop requested: flushing the batch in hand, inserting and committing", "deadline", p.cfg.ShutdownTimeout)
	t := time.NewTimer(p.cfg.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-t.C:
		p.log.Error("shutdown deadline reached; abandoning the batch in hand (it was not committed and will be replayed)",
			"timeout", p.cfg.ShutdownTimeout)
		cancelHard()
	case <-hard.Done():
	}
}

// reportPermanent makes perm visible: Failure, Ready, the metric and the log.
func (p *Pipeline) reportPermanent(perm *PermanentError) {
	p.failed.Store(perm)
	p.m.PermanentFailure.Set(1)
	p.log.Error("INGEST STOPPED: permanent ClickHouse error; nothing after the last committed offset is skipped. Fix the cause and restart.",
		"class", perm.Class, "err", perm.Err)
}
