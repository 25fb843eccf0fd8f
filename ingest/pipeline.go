package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/parse"
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
	Table  string   // insert target, database-qualified if needed; default "landing"
	Limits Limits

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

	// InsertSettings returns the query settings of one insert given the
	// batch's token, which names its offset range per partition and is the
	// same on every retry (schema.InsertSettings: insert deduplication on
	// servers that have it). nil sends no settings.
	InsertSettings func(token string) map[string]any

	Progress    ProgressFunc // required
	Retain      RetainFunc   // optional; run every RetainEvery
	RetainEvery time.Duration

	// LagInterval is the time between two polls of the consumer group's
	// lag (lag.go); default 10s, <0 turns the lag gauges off. LagClient
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
		c.Table = "landing"
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

// Pipeline is one consumer: Kafka reader → batches → decode → insert → commit.
type Pipeline struct {
	cfg  Config
	r    *kafka.Reader
	conn driver.Conn
	m    *Metrics
	log  *slog.Logger
	bad  *LogLimiter // bad input
	warn *LogLimiter // retries, commits

	insertSQL string
	running   atomic.Bool
	failed    atomic.Pointer[PermanentError]

	// decode stage state: touched only by the decode goroutine
	parts map[TopicPartition]*partState
	win   *window
	decs  []*parse.Decoder
	recs  []parse.Record
	keep  []bool
	stats []workerStats

	// insert stage state: touched only by the insert goroutine
	ledger Ledger

	// lag is nil when lag polling is off; flight is shared by the decode
	// stage (writer) and lag (reader).
	lag      *lagMonitor
	flight   *inflight
	lagClose func()
}

// slot is a decoded batch on its way to ClickHouse: the batch and the
// workers' column buffers. Two slots exist, so the next batch is decoded
// while this one is inserted; the buffers are reused when the slot returns.
type slot struct {
	b     *batch
	cols  []*columns
	used  int // workers used by this batch
	rows  int
	token string
}

// partState is what the writer knows of one partition.
type partState struct {
	known  bool  // progress read from ClickHouse since this partition was (re)seen
	last   int64 // offset of the last message seen
	floor  int64 // highest offset known to be in ClickHouse or in an earlier row of this run
	own    int64 // highest offset this process wrote (or queued in the batch in hand)
	warned bool  // the stored progress was found beyond the log's end
}

type workerStats struct {
	decoded int
	dead    map[parse.ErrReason]int
}

// New returns a Pipeline reading r (a consumer-group kafka.Reader on
// cfg.Topics) and writing through conn (native protocol). Unless
// cfg.LagInterval < 0, it also polls the lag of r's consumer group.
func New(cfg Config, r *kafka.Reader, conn driver.Conn) (*Pipeline, error) {
	cfg.defaults()
	if cfg.Progress == nil {
		return nil, errors.New("ingest: Config.Progress is required")
	}
	if len(cfg.Topics) == 0 || slices.Contains(cfg.Topics, "") {
		return nil, errors.New("ingest: Config.Topics must name at least one topic, and no empty one")
	}
	p := &Pipeline{
		cfg: cfg, r: r, conn: conn, m: cfg.Metrics, log: cfg.Logger,
		bad:       NewLogLimiter(cfg.Logger, 10, 10*time.Second),
		warn:      NewLogLimiter(cfg.Logger, 5, 10*time.Second),
		insertSQL: "INSERT INTO " + cfg.Table + " (" + strings.Join(LandingColumns, ", ") + ")",
		parts:     map[TopicPartition]*partState{},
		win:       newWindow(cfg.DedupWindow),
	}
	if cfg.LagInterval > 0 && r != nil && r.Config().GroupID != "" {
		client := cfg.LagClient
		if client == nil {
			c, t := newLagClient(r.Config(), cfg.Topics)
			client, p.lagClose = c, t.CloseIdleConnections
		}
		p.flight = newInflight()
		p.lag = newLagMonitor(client, r.Config().GroupID, cfg.Topics, cfg.LagInterval, p.m, p.warn, p.flight)
	}
	for i := 0; i < cfg.Workers; i++ {
		p.decs = append(p.decs, parse.NewDecoder(cfg.Decoder))
		p.stats = append(p.stats, workerStats{dead: map[parse.ErrReason]int{}})
	}
	p.recs = make([]parse.Record, cfg.Workers)
	return p, nil
}

// Ready reports whether the pipeline is consuming (for /readyz).
func (p *Pipeline) Ready() bool { return p.running.Load() && p.failed.Load() == nil }

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
func (p *Pipeline) Run(ctx context.Context) error {
	p.running.Store(true)
	defer p.running.Store(false)

	fetchCtx, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	// hard bounds the work after the stop signal: it ends ShutdownTimeout
	// after ctx, or when Run returns.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	go func() {
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
	}()

	batches := make(chan *batch, 1)
	free := make(chan *batch, 4) // filling, queued, decoding, inserting: bounded memory
	for i := 0; i < cap(free); i++ {
		free <- newBatch()
	}
	slots := make(chan *slot, 2)
	for i := 0; i < cap(slots); i++ {
		s := &slot{}
		for w := 0; w < p.cfg.Workers; w++ {
			s.cols = append(s.cols, &columns{})
		}
		slots <- s
	}
	decoded := make(chan *slot, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.batchLoop(fetchCtx, hard, batches, free) }()
	decodeDone := make(chan error, 1)
	go func() { decodeDone <- p.decodeLoop(hard, batches, decoded, slots) }()
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

	err := p.insertLoop(hard, decoded, slots, free)
	var perm *PermanentError
	if err == nil {
		// decoded is closed: the decode stage ended, maybe on its own error.
		err = <-decodeDone
		decodeDone = nil
	}
	if errors.As(err, &perm) {
		stopFetch()
		p.failed.Store(perm)
		p.m.PermanentFailure.Set(1)
		p.log.Error("INGEST STOPPED: permanent ClickHouse error; nothing after the last committed offset is skipped. Fix the cause and restart.",
			"class", perm.Class, "error", perm.Err)
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

// batchLoop fetches messages and cuts them into batches, which it sends to
// out. A batch is cut at its row or byte limit, or when its oldest message
// waited Limits.Wait: the fetch of the next message is bounded by that
// deadline. batchLoop blocks (and so stops fetching) while the writer has
// no free batch. When fetchCtx ends it sends the batch in hand and closes
// out; a message fetched but not sent is not committed and will be fetched
// again.
func (p *Pipeline) batchLoop(fetchCtx, hard context.Context, out chan<- *batch, free chan *batch) {
	defer close(out)
	l := p.cfg.Limits
	var (
		cur            *batch
		ctx            = fetchCtx // bounded by cur's deadline while cur has messages
		cancel         = context.CancelFunc(func() {})
		counted, bytes int // consumed messages and value bytes not yet in the metrics
	)
	account := func() {
		p.m.Consumed.Add(float64(counted))
		p.m.ConsumedBytes.Add(float64(bytes))
		counted, bytes = 0, 0
	}
	flush := func() bool {
		cancel()
		ctx, cancel = fetchCtx, func() {}
		account()
		if cur == nil || len(cur.msgs) == 0 {
			return true
		}
		select {
		case out <- cur:
			cur = nil
			return true
		case <-hard.Done():
			return false
		}
	}
	defer func() { cancel() }()
	for {
		m, err := p.r.FetchMessage(ctx)
		if err != nil {
			switch {
			case fetchCtx.Err() != nil || errors.Is(err, io.EOF):
				flush()
				return
			case ctx.Err() != nil: // cur waited Limits.Wait
				if !flush() {
					return
				}
				continue
			}
			p.m.FetchErrors.Inc()
			p.warn.Log(slog.LevelWarn, "kafka fetch failed", "error", err)
			select {
			case <-fetchCtx.Done():
				flush()
				return
			case <-time.After(time.Second):
			}
			continue
		}
		counted++
		bytes += len(m.Value)
		if cur == nil {
			select {
			case cur = <-free:
			case <-hard.Done():
				return
			}
			cur.reset()
		}
		var now time.Time // only the first message's time is kept
		if len(cur.msgs) == 0 {
			now = time.Now()
			due, stop := context.WithDeadline(fetchCtx, now.Add(l.Wait))
			ctx, cancel = due, stop
		}
		if cur.add(m, l, now) && !flush() {
			return
		}
		if counted >= 1024 {
			account()
		}
	}
}

// decodeLoop filters replays, decodes and drops re-sends, batch after
// batch, into free slots; it runs while the insert stage writes the previous
// slot. It closes out when in is closed or on error.
func (p *Pipeline) decodeLoop(hard context.Context, in <-chan *batch, out chan<- *slot, free <-chan *slot) error {
	defer close(out)
	for b := range in {
		var s *slot
		select {
		case s = <-free:
		case <-hard.Done():
			return hard.Err()
		}
		s.b = b
		if p.flight != nil {
			p.flight.note(b)
		}
		if err := p.filterReplays(hard, b); err != nil {
			return err
		}
		p.decode(s, time.Now())
		b.dropPayloads()
		p.dedupAndCount(s)
		s.token = p.token(b)
		select {
		case out <- s:
		case <-hard.Done():
			return hard.Err()
		}
	}
	return nil
}

// insertLoop writes decoded slots in order, one insert at a time, and
// commits each after its insert succeeded.
func (p *Pipeline) insertLoop(hard context.Context, in <-chan *slot, freeSlots chan<- *slot, freeBatches chan<- *batch) error {
	for s := range in {
		b := s.b
		seq := p.ledger.Open(b.maxOff)
		if s.rows > 0 {
			if err := p.insert(hard, s); err != nil {
				return err
			}
			p.m.RowsInserted.Add(float64(s.rows))
			p.m.BatchRows.Observe(float64(s.rows))
			p.m.BatchBytes.Observe(float64(b.bytes))
			p.m.LastInsert.SetToCurrentTime()
		}
		p.commit(hard, p.ledger.Written(seq))
		b.reset()
		s.b = nil
		freeBatches <- b
		freeSlots <- s
	}
	return nil
}

// filterReplays drops messages whose offset ClickHouse already holds. The
// progress table is read when a partition is first seen and whenever its
// offsets jump (a rebalance or a restart of the reader), at most once per
// batch.
func (p *Pipeline) filterReplays(hard context.Context, b *batch) error {
	// kafka-go has no assignment callback; its rebalance counter (reset by
	// each Stats call) tells that partitions may have moved, possibly to a
	// member that wrote rows and could not commit: read progress again.
	if p.r != nil {
		if n := p.r.Stats().Rebalances; n > 0 {
			p.m.Rebalances.Add(float64(n))
			for _, st := range p.parts {
				st.known = false
			}
		}
	}
	refreshed := false
	skipped := 0
	// Messages come in runs of one partition: look the partition up, and
	// record the run's highest offset, once per run.
	var (
		key    TopicPartition
		st     *partState
		runMax int64
	)
	endRun := func() {
		if st == nil {
			return
		}
		if cur, ok := b.maxOff[key]; !ok || runMax > cur {
			b.maxOff[key] = runMax
		}
	}
	for i := range b.msgs {
		m := &b.msgs[i]
		if st == nil || int32(m.Partition) != key.Partition || m.Topic != key.Topic {
			endRun()
			key = TopicPartition{m.Topic, int32(m.Partition)}
			st = p.part(key)
			runMax = m.Offset
		}
		if (!st.known || m.Offset != st.last+1) && !refreshed {
			if err := p.refreshProgress(hard); err != nil {
				return err
			}
			refreshed = true
		}
		st.known = true
		st.last = m.Offset
		runMax = max(runMax, m.Offset)
		if m.Offset <= st.floor && st.floor > st.own && m.HighWaterMark > 0 && st.floor >= m.HighWaterMark {
			// ClickHouse holds offsets this log never reached: the topic was
			// deleted and created again (or truncated). Skipping would drop
			// every new message up to the old offsets; store them instead.
			if !st.warned {
				p.log.Error("stored progress is beyond the end of the partition (topic recreated?); ignoring it for this partition",
					"topic", m.Topic, "partition", m.Partition, "stored", st.floor, "high_watermark", m.HighWaterMark)
				st.warned = true
			}
			st.floor = st.own
		}
		if m.Offset <= st.floor {
			skipped++
			continue
		}
		st.floor = m.Offset
		st.own = m.Offset
		b.todo = append(b.todo, i)
	}
	endRun()
	if skipped > 0 {
		p.m.Skipped.WithLabelValues("replayed").Add(float64(skipped))
		p.log.Info("skipped replayed messages already in ClickHouse", "messages", skipped)
	}
	return nil
}

func (p *Pipeline) part(k TopicPartition) *partState {
	st := p.parts[k]
	if st == nil {
		st = &partState{last: -2, floor: -1, own: -1}
		p.parts[k] = st
	}
	return st
}

// readProgress raises each partition's floor to what ClickHouse holds, for
// every topic.
func (p *Pipeline) readProgress(hard context.Context) error {
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	for _, topic := range p.cfg.Topics {
		prog, err := p.cfg.Progress(ctx, p.conn, topic)
		if err != nil {
			return err
		}
		for part, off := range prog {
			st := p.part(TopicPartition{topic, part})
			if off > st.floor {
				st.floor = off
			}
		}
	}
	return nil
}

func (p *Pipeline) refreshProgress(hard context.Context) error {
	for attempt := 0; ; attempt++ {
		err := p.readProgress(hard)
		if err == nil {
			return nil
		}
		if hard.Err() != nil {
			return hard.Err()
		}
		class := Classify(err)
		if class.Permanent() {
			p.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: fmt.Errorf("reading ingest progress: %w", err)}
		}
		p.m.InsertRetries.WithLabelValues(string(class)).Inc()
		d := p.cfg.Backoff.Delay(attempt, nil)
		p.warn.Log(slog.LevelWarn, "reading ingest progress failed; retrying", "class", class, "attempt", attempt+1, "backoff", d, "error", err)
		if !sleep(hard, d) {
			return hard.Err()
		}
	}
}

// kafkaHeaders converts without copying: parse.MsgHeader has kafka.Header's layout.
func kafkaHeaders(h []kafka.Header) []parse.MsgHeader {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*parse.MsgHeader)(unsafe.Pointer(unsafe.SliceData(h))), len(h))
}

// decode fills the worker column buffers from b.todo, split into contiguous
// chunks (one per worker) so that concatenating the workers in order keeps
// the order of every partition.
func (p *Pipeline) decode(s *slot, now time.Time) {
	b := s.b
	n := len(b.todo)
	w := p.cfg.Workers
	if n < 1024 {
		w = 1
	}
	if w > n {
		w = max(n, 1)
	}
	s.used = w
	chunk := (n + w - 1) / w
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := min(i*chunk, n), min((i+1)*chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.decodeChunk(i, s.cols[i], b, b.todo[lo:hi], now.Unix())
		}()
	}
	wg.Wait()
}

func (p *Pipeline) decodeChunk(w int, cols *columns, b *batch, idx []int, ingested int64) {
	dec, rec, st := p.decs[w], &p.recs[w], &p.stats[w]
	cols.reset()
	st.decoded = 0
	clear(st.dead)
	var raw []byte
	for _, i := range idx {
		m := &b.msgs[i]
		meta := rowMeta{topic: m.Topic, partition: int32(m.Partition), offset: m.Offset,
			kafkaTimeMS: m.Time.UnixMilli(), ingestedAt: ingested}
		err := dec.DecodeMessage(m.Value, kafkaHeaders(m.Headers), meta.kafkaTimeMS, rec)
		if err == nil {
			cols.appendRow(&meta, rec, nil, nil)
			st.decoded++
		} else {
			var de *parse.DecodeError
			if !errors.As(err, &de) {
				de = &parse.DecodeError{Reason: parse.ErrBadEvent, Path: "event", Offset: -1, Detail: "decoder returned an untyped error"}
			}
			raw = raw[:0]
			if p.cfg.RawMax > 0 {
				raw = p.cfg.RedactRaw(raw, m.Value, p.cfg.RawMax)
			}
			cols.appendRow(&meta, rec, de, raw)
			st.dead[de.Reason]++
			p.bad.Log(slog.LevelWarn, "message dead-lettered", "partition", m.Partition, "offset", m.Offset,
				"reason", string(de.Reason), "error", de.Error())
		}
	}
}

// dedupAndCount drops rows whose producer event_id is in the window (the
// first copy wins, in partition order), and accounts the batch's metrics.
func (p *Pipeline) dedupAndCount(s *slot) {
	resent := 0
	s.rows = 0
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		if cap(p.keep) < c.n {
			p.keep = make([]bool, c.n)
		}
		keep := p.keep[:c.n]
		drop := false
		for i := 0; i < c.n; i++ {
			keep[i] = !p.win.seen(c.eventHash[i])
			drop = drop || !keep[i]
		}
		if drop {
			before := c.n
			c.keepOnly(keep)
			resent += before - c.n
		}
		s.rows += c.n
		st := &p.stats[w]
		p.m.Decoded.Add(float64(st.decoded))
		for r, n := range st.dead {
			p.m.DeadLetter.WithLabelValues(string(r)).Add(float64(n))
		}
	}
	if resent > 0 {
		p.m.Skipped.WithLabelValues("resent").Add(float64(resent))
	}
}

// insert writes the worker buffers with one INSERT, retrying transient
// errors forever (a clickhouse-go batch cannot be re-sent, so each attempt
// builds a new one from the buffers, which stay untouched).
func (p *Pipeline) insert(hard context.Context, s *slot) error {
	rows := s.rows
	var settings map[string]any
	if p.cfg.InsertSettings != nil {
		settings = p.cfg.InsertSettings(s.token)
	}
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := p.insertOnce(hard, s, settings)
		if err == nil {
			p.m.InsertDuration.Observe(time.Since(start).Seconds())
			if attempt > 0 {
				p.log.Info("insert succeeded after retries", "attempts", attempt+1, "rows", rows)
			}
			return nil
		}
		if hard.Err() != nil {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", rows, hard.Err())
		}
		class := Classify(err)
		if class.Permanent() {
			p.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: err}
		}
		p.m.InsertRetries.WithLabelValues(string(class)).Inc()
		d := p.cfg.Backoff.Delay(attempt, nil)
		p.warn.Log(slog.LevelWarn, "insert failed; keeping the rows and retrying", "class", class,
			"attempt", attempt+1, "rows", rows, "backoff", d, "error", err)
		if !sleep(hard, d) {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", rows, hard.Err())
		}
	}
}

func (p *Pipeline) insertOnce(hard context.Context, s *slot, settings map[string]any) error {
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	if settings != nil {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings(settings)))
	}
	bt, err := p.conn.PrepareBatch(ctx, p.insertSQL)
	if err != nil {
		return err
	}
	step := p.cfg.InsertBlockRows
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for lo := 0; lo < c.n; lo += step {
			if err := c.appendTo(bt, lo, min(lo+step, c.n)); err != nil {
				_ = bt.Abort()
				return err
			}
			if err := bt.Flush(); err != nil {
				_ = bt.Abort()
				return err
			}
		}
	}
	return bt.Send()
}

// token names the rows of a batch: per topic and partition, in order, the
// first and last offset written. It is the same on every retry of the batch
// and differs between batches.
func (p *Pipeline) token(b *batch) string {
	type span struct{ lo, hi int64 }
	spans := map[TopicPartition]span{}
	// Messages come in runs of one partition: merge each run into the map
	// once.
	var (
		k   TopicPartition
		run span
		in  bool
	)
	endRun := func() {
		if !in {
			return
		}
		if s, ok := spans[k]; ok {
			run.lo, run.hi = min(run.lo, s.lo), max(run.hi, s.hi)
		}
		spans[k] = run
	}
	for _, i := range b.todo {
		m := &b.msgs[i]
		if !in || int32(m.Partition) != k.Partition || m.Topic != k.Topic {
			endRun()
			k, run, in = TopicPartition{m.Topic, int32(m.Partition)}, span{m.Offset, m.Offset}, true
		}
		run.lo, run.hi = min(run.lo, m.Offset), max(run.hi, m.Offset)
	}
	endRun()
	keys := slices.SortedFunc(maps.Keys(spans), func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	var sb strings.Builder
	topic := ""
	for _, k := range keys {
		if k.Topic != topic || sb.Len() == 0 {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(k.Topic)
			topic = k.Topic
		}
		fmt.Fprintf(&sb, " %d:%d-%d", k.Partition, spans[k].lo, spans[k].hi)
	}
	return sb.String()
}

// commit moves the consumer group's offsets to the ledger's frontier: one
// CommitMessages call per batch with one message per partition. A failed
// commit is only counted: ClickHouse holds the rows, the next commit covers
// them, and a replay before that is filtered by filterReplays.
func (p *Pipeline) commit(hard context.Context, adv map[TopicPartition]int64) {
	if len(adv) == 0 {
		return
	}
	msgs := make([]kafka.Message, 0, len(adv))
	for k, off := range adv {
		msgs = append(msgs, kafka.Message{Topic: k.Topic, Partition: int(k.Partition), Offset: off})
	}
	ctx, cancel := context.WithTimeout(hard, p.cfg.CommitTimeout)
	defer cancel()
	if err := p.r.CommitMessages(ctx, msgs...); err != nil {
		p.m.CommitErrors.Inc()
		p.warn.Log(slog.LevelWarn, "kafka commit failed; the rows are in ClickHouse and the next commit covers them", "error", err)
	}
}

func (p *Pipeline) retainLoop(ctx context.Context) {
	t := time.NewTicker(p.cfg.RetainEvery)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		err := p.cfg.Retain(rctx, p.conn)
		cancel()
		if err != nil && ctx.Err() == nil {
			p.m.Retention.WithLabelValues("error").Inc()
			p.warn.Log(slog.LevelWarn, "retention failed", "error", err)
		} else if err == nil {
			p.m.Retention.WithLabelValues("ok").Inc()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
