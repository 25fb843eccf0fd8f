package ingest

// Group, the consumer-group source: partitions that move between members
// only once the member that had them is done with them.
//
// A kafka.Reader with a GroupID hands its partitions over as soon as a
// rebalance starts, while the batches it fetched are still on their way to
// ClickHouse: the new owner starts from the last commit and stores those
// messages again. errors collapses the copies, but every rollup fed by the
// landing views counts them twice. Group closes that window with
// kafka-go's lower-level ConsumerGroup, which joins the next generation only
// after every function started in the current one has returned:
//
//   - Each generation reads its partitions with one partition reader each,
//     from the committed offsets, and records the last offset it handed out
//     per partition.
//   - When the generation ends (the coordinator asks for a rebalance, or
//     the member lost its coordinator), no message is handed out any more,
//     and FetchMessage returns ErrRevoked once, so the fetcher cuts
//     the batch in hand at once.
//   - The generation's drain then waits until every message it handed out
//     has been committed. It keeps the member in the group meanwhile with
//     heartbeats of its own (kafka-go's stop at the first refusal, and a
//     member that neither heartbeats nor rejoins is dropped after its session
//     timeout, partitions and all).
//   - If that takes longer than the drain timeout, or the coordinator says
//     the member is no longer in the group, the generation is abandoned: an
//     insert attempt running for it is cancelled and none starts after it,
//     so its batches are dropped uncommitted for the next owner to store.
//     Only then does the member rejoin.
//
// The writer may also pause a partition whose shard refuses its rows
// (park.go): its reader then holds its next message until the partition is
// resumed, so nothing is skipped and nothing more of it is fetched.
//
// The pipeline learns about epochs (one per generation) from ErrRevoked:
// the n-th batch epoch is the number of ErrRevoked it saw, and Group counts
// the same way. The pipeline asks Group before each insert attempt whether
// the batch's epoch may still be written, and commits through the epoch's
// generation (a commit for a partition the generation was not assigned, or
// for an abandoned generation, is dropped: Kafka would accept it from any
// member and move another owner's offset).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// ErrRevoked is returned by a Consumer's FetchMessage once per generation that
// ended: the partitions of the messages handed out so far are being taken
// back. The fetcher sends the batch in hand at once.
var ErrRevoked = errors.New("ingest: the consumer group's partitions were revoked")

// errAbandoned: a batch's generation was abandoned; the batch is dropped,
// uncommitted, for the partition's next owner.
var errAbandoned = errors.New("ingest: the batch's generation was abandoned")

// Consumer is what a Pipeline consumes: a *kafka.Reader, or a *Group.
type Consumer interface {
	FetchMessage(ctx context.Context) (kafka.Message, error)
	CommitMessages(ctx context.Context, msgs ...kafka.Message) error
}

// fenced is a Consumer whose partitions move only after their batches are
// settled (Group). Its methods are called from the writer's goroutine.
type fenced interface {
	// attempt reports whether batches of epoch may still be written; if so,
	// ctx ends when the epoch is abandoned, and done must be called when the
	// attempt returned.
	attempt(epoch uint64) (ctx context.Context, done func(), ok bool)
	// commitEpoch commits the highest stored offset per partition through the
	// generation of epoch.
	commitEpoch(ctx context.Context, epoch uint64, stored map[TopicPartition]int64) error
	// pause and resume hold back, and hand out again, the messages of one
	// partition in the generation of epoch.
	pause(epoch uint64, tp TopicPartition)
	resume(epoch uint64, tp TopicPartition)
}

// GroupConfig configures a Group.
type GroupConfig struct {
	// Reader is the consumer-group reader configuration the group stands
	// in for (GroupID, Topic or GroupTopics, Brokers, Dialer, timeouts,
	// fetch sizes). The fetch settings go to every partition reader.
	Reader kafka.ReaderConfig
	// DrainTimeout bounds how long a generation that ended waits for its
	// batches to be committed before it abandons them; default two thirds of
	// Reader.RebalanceTimeout (which is how long the coordinator waits for
	// a member to rejoin).
	DrainTimeout time.Duration
	Logger       *slog.Logger
}

// Group consumes a consumer group's partitions and hands a partition over in
// a rebalance only after the batches fetched from it are stored and
// committed, or abandoned (see the file comment). Safe for one fetching
// goroutine and one committing goroutine.
type Group struct {
	cfg    GroupConfig
	cg     *kafka.ConsumerGroup
	client *kafka.Client // the drain's heartbeats
	closeT func()
	log    *slog.Logger
	warn   *LogLimiter
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	cur      *generation   // the newest generation; nil before the first
	changed  chan struct{} // closed and replaced when cur changes or ends
	reported uint64        // ErrRevoked returned so far
	epochs   uint64        // generations started so far
	closed   bool
	onEnd    func() // called as a generation ends by a rebalance (not by Close); set by the pipeline

	joined atomic.Bool // a generation has started: the member is in the group
}

// generation is one generation's state. Its fields after gen are guarded by
// Group.mu.
type generation struct {
	epoch    uint64
	gen      *kafka.Generation
	msgs     chan fetched
	assigned map[TopicPartition]bool
	abandon  context.Context // ends when the generation is abandoned
	cancel   context.CancelFunc

	ended     bool                             // the drain began: nothing more is handed out
	abandoned bool                             // no attempt may start, no commit is sent
	handed    map[TopicPartition]int64         // last offset handed out
	stored    map[TopicPartition]int64         // last offset committed (or handed to a commit)
	attempts  int                              // insert attempts running
	progress  chan struct{}                    // closed and replaced on a commit or an attempt's end
	paused    map[TopicPartition]chan struct{} // closed on resume
}

type fetched struct {
	m   kafka.Message
	ctx context.Context // the generation's: ended means the message is not handed out
}

// NewGroup joins the consumer group of cfg.Reader in the background and
// returns at once; kafka-go keeps retrying while brokers are away.
func NewGroup(cfg GroupConfig) (*Group, error) {
	rc := cfg.Reader
	if rc.GroupID == "" {
		return nil, errors.New("ingest: GroupConfig.Reader.GroupID is required")
	}
	topics := rc.GroupTopics
	if rc.Topic != "" {
		topics = []string{rc.Topic}
	}
	if len(topics) == 0 {
		return nil, errors.New("ingest: GroupConfig.Reader names no topic")
	}
	if rc.RebalanceTimeout <= 0 {
		rc.RebalanceTimeout = 30 * time.Second
	}
	if rc.HeartbeatInterval <= 0 {
		rc.HeartbeatInterval = 3 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = rc.RebalanceTimeout * 2 / 3
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Reader = rc
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                     rc.GroupID,
		Brokers:                rc.Brokers,
		Dialer:                 rc.Dialer,
		Topics:                 topics,
		GroupBalancers:         rc.GroupBalancers,
		HeartbeatInterval:      rc.HeartbeatInterval,
		PartitionWatchInterval: rc.PartitionWatchInterval,
		WatchPartitionChanges:  rc.WatchPartitionChanges,
		SessionTimeout:         rc.SessionTimeout,
		RebalanceTimeout:       rc.RebalanceTimeout,
		JoinGroupBackoff:       rc.JoinGroupBackoff,
		RetentionTime:          rc.RetentionTime,
		StartOffset:            rc.StartOffset,
		Logger:                 rc.Logger,
		ErrorLogger:            rc.ErrorLogger,
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: consumer group: %w", err)
	}
	client, t := newLagClient(rc, topics)
	ctx, stop := context.WithCancel(context.Background())
	g := &Group{cfg: cfg, cg: cg, client: client, closeT: t.CloseIdleConnections, log: cfg.Logger,
		warn: NewLogLimiter(cfg.Logger, 5, 10*time.Second), ctx: ctx, stop: stop, changed: make(chan struct{})}
	g.wg.Add(1)
	go func() { defer g.wg.Done(); g.run() }()
	return g, nil
}

// onGenerationEnd makes f run each time a generation ends while the member
// stays in the group: a rebalance takes its partitions back. It runs as the
// drain begins, so a member counts the rebalance even when it leaves before
// its next generation delivers a message. The pipeline counts rebalances
// with it.
func (g *Group) onGenerationEnd(f func()) {
	g.mu.Lock()
	g.onEnd = f
	g.mu.Unlock()
}

// Joined reports whether the member has been in the group: a first
// generation started (it stays true through later rebalances).
func (g *Group) Joined() bool { return g.joined.Load() }

// Config returns the reader configuration the group stands in for (the lag
// monitor reads the group id, brokers and dialer from it).
func (g *Group) Config() kafka.ReaderConfig { return g.cfg.Reader }

// Close leaves the group. Call it after the pipeline's Run returned: a
// generation that has not settled by then is abandoned at once.
func (g *Group) Close() error {
	g.mu.Lock()
	g.closed = true
	g.signal()
	g.mu.Unlock()
	g.stop()
	err := g.cg.Close()
	g.wg.Wait()
	g.closeT()
	return err
}

// signal wakes whoever waits for a change of cur. Called with mu held.
func (g *Group) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *Group) run() {
	for {
		gen, err := g.cg.Next(g.ctx)
		if err != nil {
			if g.ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			g.warn.Log(slog.LevelWarn, "kafka consumer group: joining failed; retrying", "err", err)
			continue
		}
		g.begin(gen)
	}
}

// begin starts a generation: its drain first (so kafka-go waits for it
// whenever it waits for a partition reader), then one reader per partition.
func (g *Group) begin(gen *kafka.Generation) {
	ge := &generation{gen: gen, msgs: make(chan fetched), assigned: map[TopicPartition]bool{},
		handed: map[TopicPartition]int64{}, stored: map[TopicPartition]int64{}, progress: make(chan struct{})}
	ge.abandon, ge.cancel = context.WithCancel(context.Background())
	for topic, parts := range gen.Assignments {
		for _, pa := range parts {
			ge.assigned[TopicPartition{topic, int32(pa.ID)}] = true
		}
	}
	g.mu.Lock()
	ge.epoch = g.epochs
	g.epochs++
	g.cur = ge
	g.signal()
	g.mu.Unlock()
	g.joined.Store(true)
	g.log.Info("kafka consumer group: generation started", "generation", gen.ID, "partitions", len(ge.assigned))
	gen.Start(func(ctx context.Context) {
		<-ctx.Done()
		g.drain(ge)
	})
	for topic, parts := range gen.Assignments {
		for _, pa := range parts {
			gen.Start(func(ctx context.Context) { g.readPartition(ctx, ge, topic, pa.ID, pa.Offset) })
		}
	}
}

// readPartition feeds one partition of the generation to FetchMessage until
// the generation ends.
func (g *Group) readPartition(ctx context.Context, ge *generation, topic string, partition int, offset int64) {
	rc := g.cfg.Reader
	prc := kafka.ReaderConfig{
		Brokers: rc.Brokers, Topic: topic, Partition: partition, Dialer: rc.Dialer,
		QueueCapacity: rc.QueueCapacity, MinBytes: rc.MinBytes, MaxBytes: rc.MaxBytes, MaxWait: rc.MaxWait,
		ReadBatchTimeout: rc.ReadBatchTimeout, ReadLagInterval: -1, ReadBackoffMin: rc.ReadBackoffMin,
		ReadBackoffMax: rc.ReadBackoffMax, IsolationLevel: rc.IsolationLevel, MaxAttempts: rc.MaxAttempts,
		Logger: rc.Logger, ErrorLogger: rc.ErrorLogger,
	}
	r := kafka.NewReader(prc)
	defer r.Close()
	if err := r.SetOffset(offset); err != nil {
		g.warn.Log(slog.LevelWarn, "kafka: setting a partition's start offset failed", "topic", topic,
			"partition", partition, "offset", offset, "err", err)
	}
	for {
		m, err := r.FetchMessage(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			g.warn.Log(slog.LevelWarn, "kafka fetch failed", "topic", topic, "partition", partition, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if wait := g.pausedUntil(ge, TopicPartition{topic, int32(partition)}); wait != nil {
			select { // the message waits in this goroutine: nothing is skipped
			case <-wait:
			case <-ctx.Done():
				return
			}
		}
		select {
		case ge.msgs <- fetched{m, ctx}:
		case <-ctx.Done():
			return
		}
	}
}

// pausedUntil returns a channel closed when tp is resumed, or nil if tp is
// not paused.
func (g *Group) pausedUntil(ge *generation, tp TopicPartition) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return ge.paused[tp]
}

// pause stops handing out messages of tp in the generation of epoch (the
// writer parks its rows: their shard is down); resume hands them out
// again, from the first one held back. Both are no-ops for another epoch.
func (g *Group) pause(epoch uint64, tp TopicPartition) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ge := g.cur
	if ge == nil || ge.epoch != epoch || ge.paused[tp] != nil {
		return
	}
	if ge.paused == nil {
		ge.paused = map[TopicPartition]chan struct{}{}
	}
	ge.paused[tp] = make(chan struct{})
}

func (g *Group) resume(epoch uint64, tp TopicPartition) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ge := g.cur
	if ge == nil || ge.epoch != epoch || ge.paused[tp] == nil {
		return
	}
	close(ge.paused[tp])
	delete(ge.paused, tp)
}

// FetchMessage returns the next message of the current generation, or
// ErrRevoked once for each generation that ended, or io.EOF after Close.
func (g *Group) FetchMessage(ctx context.Context) (kafka.Message, error) {
	for {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return kafka.Message{}, io.EOF
		}
		ge, changed := g.cur, g.changed
		var msgs chan fetched
		if ge != nil && !ge.ended {
			msgs = ge.msgs
		}
		if ge != nil {
			// Messages of epoch e are handed out once e revocations were.
			want := ge.epoch
			if ge.ended {
				want++
			}
			if g.reported < want {
				g.reported++
				g.mu.Unlock()
				return kafka.Message{}, ErrRevoked
			}
		}
		g.mu.Unlock()
		select {
		case f := <-msgs:
			g.mu.Lock()
			if ge.ended || f.ctx.Err() != nil {
				g.mu.Unlock()
				continue // fetched as the generation ended: not handed out, the next owner reads it
			}
			ge.handed[TopicPartition{f.m.Topic, int32(f.m.Partition)}] = f.m.Offset
			g.mu.Unlock()
			return f.m, nil
		case <-changed:
		case <-ctx.Done():
			return kafka.Message{}, ctx.Err()
		}
	}
}

// CommitMessages commits each message's offset + 1 through the current
// generation (a Consumer for callers without epochs).
func (g *Group) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	g.mu.Lock()
	ge := g.cur
	g.mu.Unlock()
	if ge == nil {
		return errors.New("ingest: no consumer group generation to commit through")
	}
	stored := map[TopicPartition]int64{}
	for _, m := range msgs {
		k := TopicPartition{m.Topic, int32(m.Partition)}
		if off, ok := stored[k]; !ok || m.Offset > off {
			stored[k] = m.Offset
		}
	}
	return g.commitEpoch(ctx, ge.epoch, stored)
}

func (g *Group) commitEpoch(ctx context.Context, epoch uint64, stored map[TopicPartition]int64) error {
	g.mu.Lock()
	ge := g.cur
	if ge == nil || ge.epoch != epoch || ge.abandoned {
		g.mu.Unlock()
		return fmt.Errorf("ingest: commit of generation epoch %d dropped: its partitions moved on", epoch)
	}
	offsets := map[string]map[int]int64{}
	for k, off := range stored {
		if !ge.assigned[k] {
			continue
		}
		if cur, ok := ge.stored[k]; ok && cur >= off {
			continue
		}
		if offsets[k.Topic] == nil {
			offsets[k.Topic] = map[int]int64{}
		}
		offsets[k.Topic][int(k.Partition)] = off + 1
	}
	g.mu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	// Generation.CommitOffsets has no context; bound it by ctx's deadline.
	done := make(chan error, 1)
	go func() { done <- ge.gen.CommitOffsets(offsets) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Settled once the commit returned, whatever it answered: the drain
	// must not let kafka-go close the generation's connection under it, and
	// rows stored but not committed are found by the next owner's replay
	// filter.
	g.mu.Lock()
	for topic, parts := range offsets {
		for part, next := range parts {
			ge.stored[TopicPartition{topic, int32(part)}] = next - 1
		}
	}
	ge.wake()
	g.mu.Unlock()
	return err
}

// attempt reports whether a batch of epoch may be written now.
func (g *Group) attempt(epoch uint64) (context.Context, func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ge := g.cur
	if ge == nil || ge.epoch != epoch || ge.abandoned {
		return nil, nil, false
	}
	ge.attempts++
	return ge.abandon, func() {
		g.mu.Lock()
		ge.attempts--
		ge.wake()
		g.mu.Unlock()
	}, true
}

// wake tells the drain that something changed. Called with Group.mu held.
func (ge *generation) wake() {
	close(ge.progress)
	ge.progress = make(chan struct{})
}

// settled reports whether every message the generation handed out is
// committed. Called with Group.mu held.
func (ge *generation) settled() bool {
	for k, off := range ge.handed {
		if s, ok := ge.stored[k]; !ok || s < off {
			return false
		}
	}
	return true
}

// drain runs when the generation ended and holds kafka-go back from the
// next one until the generation's batches are committed or abandoned.
func (g *Group) drain(ge *generation) {
	g.mu.Lock()
	ge.ended = true
	g.signal()
	onEnd := g.onEnd
	if g.closed {
		onEnd = nil // the member leaves: no rebalance it saw
	}
	g.mu.Unlock()
	if onEnd != nil {
		onEnd()
	}

	start := time.Now()
	deadline := time.NewTimer(g.cfg.DrainTimeout)
	defer deadline.Stop()
	beat := time.NewTicker(g.cfg.Reader.HeartbeatInterval)
	defer beat.Stop()
	reason := ""
	for reason == "" {
		g.mu.Lock()
		if ge.settled() {
			g.mu.Unlock()
			break
		}
		progress, changed, closed := ge.progress, g.changed, g.closed
		g.mu.Unlock()
		if closed {
			reason = "the consumer closed"
			break
		}
		select {
		case <-progress:
		case <-changed:
		case <-deadline.C:
			reason = "drain timeout"
		case <-beat.C:
			if g.evicted(ge) {
				reason = "no longer a member of the generation"
			}
		}
	}
	if reason == "" {
		if len(ge.handed) > 0 {
			g.log.Info("kafka consumer group: generation ended; every batch fetched in it is stored and committed",
				"generation", ge.gen.ID, "waited", time.Since(start).Round(time.Millisecond))
		}
		return
	}
	g.mu.Lock()
	ge.abandoned = true
	ge.cancel()
	for ge.attempts > 0 {
		// A cancelled attempt returns once the server is done with its
		// insert (settle.go); the member keeps heartbeating meanwhile.
		progress := ge.progress
		g.mu.Unlock()
		select {
		case <-progress:
		case <-beat.C:
			g.evicted(ge)
		}
		g.mu.Lock()
	}
	g.mu.Unlock()
	g.log.Warn("kafka consumer group: generation ended with batches not yet stored; they are dropped uncommitted and their partitions' next owner stores them",
		"generation", ge.gen.ID, "reason", reason, "waited", time.Since(start).Round(time.Millisecond))
}

// evicted sends one heartbeat for the ended generation, which keeps the
// member in the group while it drains, and reports whether the coordinator
// no longer knows it (another member may own its partitions now).
func (g *Group) evicted(ge *generation) bool {
	ctx, cancel := context.WithTimeout(g.ctx, g.cfg.Reader.HeartbeatInterval)
	defer cancel()
	res, err := g.client.Heartbeat(ctx, &kafka.HeartbeatRequest{GroupID: ge.gen.GroupID,
		GenerationID: ge.gen.ID, MemberID: ge.gen.MemberID})
	if err != nil {
		return false // unreachable: the session may still hold; the drain timeout decides
	}
	return errors.Is(res.Error, kafka.IllegalGeneration) || errors.Is(res.Error, kafka.UnknownMemberId) ||
		errors.Is(res.Error, kafka.FencedInstanceID)
}
