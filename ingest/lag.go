package ingest

// Consumer lag, measured from Kafka on a timer of its own.
//
// The lag monitor asks the brokers, every Config.LagInterval, for the
// consumer group's committed offsets (OffsetFetch) and for the first and
// end offsets of every partition of the consumed topics (ListOffsets), and
// reads the Kafka timestamp of the oldest message the group has not
// committed. It does not depend on inserts or on fetching: while ClickHouse
// is down the pipeline stops fetching and commits nothing, and the lag it
// reports keeps growing with what producers publish.
//
// Every ingest instance of a group reports the WHOLE group: kafka-go does
// not tell a member which partitions it was assigned, and the committed
// offsets are the group's state, the same whoever asks. So each instance
// exports the same values (within one poll), any surviving instance still
// shows the lag of a member that is wedged, and queries and alerts aggregate
// with max, never sum.
//
// Besides the timer, a commit asks for a poll (kick): the gauges then show
// the offsets the group just committed, instead of the state of the last
// tick while the rows are stored already (issue 24: committed 0 and a lag
// of 16 s on /metrics after every row was stored and committed, for up to
// an interval). Commits come once per batch; kicks that come while a poll
// runs or waits make one poll, and kicked polls are lagKickGap apart at
// least, so a busy pipeline adds at most one poll a second.
//
// A failed poll changes no lag gauge: they keep the last successfully
// polled value (and are absent until the first success), the failure is
// counted in lag_poll_errors_total{step}, and
// lag_poll_success_timestamp_seconds tells how old the values are. A poll
// that fails never reads as lag 0.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// LagClient is what the lag monitor asks Kafka; *kafka.Client implements
// it. The requests carry no address: the client's own (the brokers) is
// used, and its transport routes each request to the group coordinator or
// the partition leader.
type LagClient interface {
	Metadata(context.Context, *kafka.MetadataRequest) (*kafka.MetadataResponse, error)
	OffsetFetch(context.Context, *kafka.OffsetFetchRequest) (*kafka.OffsetFetchResponse, error)
	ListOffsets(context.Context, *kafka.ListOffsetsRequest) (*kafka.ListOffsetsResponse, error)
	Fetch(context.Context, *kafka.FetchRequest) (*kafka.FetchResponse, error)
}

// Steps of a lag poll, the values of lag_poll_errors_total's step label.
const (
	lagStepMetadata   = "metadata"    // the topics' partitions
	lagStepCommitted  = "committed"   // the group's committed offsets
	lagStepEndOffsets = "end_offsets" // the partitions' first and end offsets
	lagStepTimestamp  = "timestamp"   // the message at a committed offset
)

var lagSteps = []string{lagStepMetadata, lagStepCommitted, lagStepEndOffsets, lagStepTimestamp}

// defaultLagInterval is the time between two lag polls. Each costs a
// metadata request (served from the transport's cache), one OffsetFetch,
// two ListOffsets and at most one small fetch per partition whose committed
// offset moved (none for a partition whose oldest uncommitted message is
// in flight in this process).
const defaultLagInterval = 5 * time.Second

// lagKickGap is the least time between the start of a poll and that of
// a poll a commit asked for.
const lagKickGap = time.Second

// newLagClient returns a kafka.Client that reaches the brokers the reader
// reads, the way the reader does: its transport copies the reader's Dialer
// (TLS, SASL, client id, dial function, timeouts). Close the transport's
// idle connections when done.
func newLagClient(rc kafka.ReaderConfig, topics []string) (*kafka.Client, *kafka.Transport) {
	d := rc.Dialer
	if d == nil {
		d = kafka.DefaultDialer
	}
	dial := d.DialFunc
	if dial == nil {
		nd := &net.Dialer{Timeout: d.Timeout, LocalAddr: d.LocalAddr,
			FallbackDelay: d.FallbackDelay, KeepAlive: d.KeepAlive}
		if !d.DualStack {
			nd.FallbackDelay = -1
		}
		dial = nd.DialContext
	}
	t := &kafka.Transport{
		Dial:           dial,
		DialTimeout:    d.Timeout,
		ClientID:       d.ClientID,
		TLS:            d.TLS,
		SASL:           d.SASLMechanism,
		MetadataTopics: slices.Clone(topics),
	}
	return &kafka.Client{Addr: kafka.TCP(rc.Brokers...), Transport: t}, t
}

// lagTries bounds the attempts of one poll that fail on errors a broker
// reports as temporary (kafka.Error.Temporary), lagRetryWait apart.
const (
	lagTries     = 3
	lagRetryWait = 500 * time.Millisecond
)

func temporary(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.Temporary()
}

// offsetTime is the Kafka timestamp of the message at an offset.
type offsetTime struct {
	off int64
	at  time.Time
}

// lagReading is the result of one successful poll.
type lagReading struct {
	messages  int64         // end offset minus committed position, summed
	oldest    time.Duration // age of the oldest uncommitted message; 0 when caught up
	committed int64         // committed offsets, summed (0 for a partition without a commit)
	end       int64         // end offsets (high watermarks), summed
}

// lagMonitor polls the group's lag. poll and run are called from one
// goroutine.
type lagMonitor struct {
	client LagClient
	group  string
	topics []string
	every  time.Duration
	m      *Metrics
	warn   *LogLimiter
	flight *inflight // this process's batches; may be nil
	now    func() time.Time

	stamps map[TopicPartition]offsetTime // the message at the last committed position seen
	kick   chan struct{}                 // a commit happened: poll (capacity 1, kicks coalesce)
}

func newLagMonitor(client LagClient, group string, topics []string, every time.Duration, m *Metrics, warn *LogLimiter, flight *inflight) *lagMonitor {
	return &lagMonitor{client: client, group: group, topics: slices.Clone(topics), every: every,
		m: m, warn: warn, flight: flight, now: time.Now, stamps: map[TopicPartition]offsetTime{}, kick: make(chan struct{}, 1)}
}

// afterCommit tells the monitor that the group committed offsets: it polls
// soon (run), not at its next tick. It never blocks.
func (l *lagMonitor) afterCommit() {
	select {
	case l.kick <- struct{}{}:
	default: // a poll is asked for already
	}
}

// run polls at once, then every interval and after commits (afterCommit;
// lagKickGap after the previous poll's start at the soonest), until ctx
// ends.
func (l *lagMonitor) run(ctx context.Context) {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		began := time.Now()
		l.pollOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.kick:
			if wait := lagKickGap - time.Since(began); wait > 0 && !sleep(ctx, wait) {
				return
			}
		}
	}
}

// pollOnce polls and sets the gauges, or counts the failure and leaves them.
func (l *lagMonitor) pollOnce(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, max(l.every, 5*time.Second))
	defer cancel()
	r, step, err := l.poll(pctx)
	// A broker answers a few errors while it settles (no coordinator
	// for a new group yet, a leader moving): ask again within the poll.
	for try := 1; err != nil && try < lagTries && temporary(err) && sleep(pctx, lagRetryWait); try++ {
		r, step, err = l.poll(pctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return // stopping: not a failure
		}
		l.m.LagPollErrors.WithLabelValues(step).Inc()
		l.warn.Log(slog.LevelWarn, "kafka lag poll failed; the lag gauges keep their last value",
			"step", step, "group", l.group, "err", err)
		return
	}
	l.m.LagMessages.WithLabelValues().Set(float64(r.messages))
	l.m.LagSeconds.WithLabelValues().Set(r.oldest.Seconds())
	l.m.CommittedOffsets.WithLabelValues().Set(float64(r.committed))
	l.m.EndOffsets.WithLabelValues().Set(float64(r.end))
	l.m.LagPollSuccess.Set(float64(l.now().UnixMilli()) / 1000)
}

// poll reads the group's lag from Kafka. On error it names the step that
// failed.
func (l *lagMonitor) poll(ctx context.Context) (lagReading, string, error) {
	var r lagReading
	meta, err := l.client.Metadata(ctx, &kafka.MetadataRequest{Topics: l.topics})
	if err != nil {
		return r, lagStepMetadata, err
	}
	parts := map[string][]int{}
	for _, t := range meta.Topics {
		if !slices.Contains(l.topics, t.Name) {
			continue
		}
		if t.Error != nil {
			return r, lagStepMetadata, fmt.Errorf("topic %s: %w", t.Name, t.Error)
		}
		for _, p := range t.Partitions {
			parts[t.Name] = append(parts[t.Name], p.ID)
		}
	}
	for _, t := range l.topics {
		if len(parts[t]) == 0 {
			return r, lagStepMetadata, fmt.Errorf("topic %s: no partitions in the metadata", t)
		}
	}

	committed, err := l.committed(ctx, parts)
	if err != nil {
		return r, lagStepCommitted, err
	}
	first, end, err := l.endOffsets(ctx, parts)
	if err != nil {
		return r, lagStepEndOffsets, err
	}

	now := l.now()
	seen := map[TopicPartition]bool{}
	for topic, ps := range parts {
		for _, part := range ps {
			tp := TopicPartition{topic, int32(part)}
			seen[tp] = true
			c, ok := committed[tp]
			if !ok {
				c = -1
			}
			e, f := end[tp], first[tp]
			pos := c
			if pos < f {
				// Nothing committed yet (ingest starts at the first offset),
				// or retention deleted what the commit points at: the oldest
				// message still to be consumed is the first one kept.
				pos = f
			}
			r.end += e
			r.committed += max(c, 0)
			if l.flight != nil {
				l.flight.forget(tp, pos)
			}
			if pos >= e {
				delete(l.stamps, tp)
				continue
			}
			r.messages += e - pos
			at, err := l.stampAt(ctx, tp, pos)
			if err != nil {
				return r, lagStepTimestamp, fmt.Errorf("%s/%d offset %d: %w", topic, part, pos, err)
			}
			if !at.IsZero() {
				r.oldest = max(r.oldest, now.Sub(at))
			}
		}
	}
	for tp := range l.stamps {
		if !seen[tp] {
			delete(l.stamps, tp)
		}
	}
	r.oldest = max(r.oldest, 0).Truncate(time.Millisecond)
	return r, "", nil
}

// committed returns the group's committed offset (the next offset to
// consume) per partition; a partition without a commit has none.
func (l *lagMonitor) committed(ctx context.Context, parts map[string][]int) (map[TopicPartition]int64, error) {
	res, err := l.client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: l.group, Topics: parts})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error
	}
	out := map[TopicPartition]int64{}
	for topic, ps := range res.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("%s/%d: %w", topic, p.Partition, p.Error)
			}
			if p.CommittedOffset >= 0 {
				out[TopicPartition{topic, int32(p.Partition)}] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// endOffsets returns each partition's first offset (the log start) and end
// offset (the high watermark: the offset the next message will get). They
// are two requests: a broker answers one partition once per request.
func (l *lagMonitor) endOffsets(ctx context.Context, parts map[string][]int) (first, end map[TopicPartition]int64, err error) {
	list := func(which int64) (map[TopicPartition]int64, error) {
		req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
		for topic, ps := range parts {
			for _, p := range ps {
				req.Topics[topic] = append(req.Topics[topic], kafka.OffsetRequest{Partition: p, Timestamp: which})
			}
		}
		res, err := l.client.ListOffsets(ctx, req)
		if err != nil {
			return nil, err
		}
		out := map[TopicPartition]int64{}
		for topic, ps := range res.Topics {
			for _, p := range ps {
				if p.Error != nil {
					return nil, fmt.Errorf("%s/%d: %w", topic, p.Partition, p.Error)
				}
				off := p.LastOffset
				if which == kafka.FirstOffset {
					off = p.FirstOffset
				}
				out[TopicPartition{topic, int32(p.Partition)}] = off
			}
		}
		for topic, ps := range parts {
			for _, p := range ps {
				if _, ok := out[TopicPartition{topic, int32(p)}]; !ok {
					return nil, fmt.Errorf("%s/%d: no offset in the answer", topic, p)
				}
			}
		}
		return out, nil
	}
	if first, err = list(kafka.FirstOffset); err != nil {
		return nil, nil, err
	}
	if end, err = list(kafka.LastOffset); err != nil {
		return nil, nil, err
	}
	return first, end, nil
}

// stampAt returns the Kafka timestamp of the message at offset off of tp:
// from this process's in-flight batches when one starts there, from the
// previous poll when the position did not move, else by fetching it. A zero
// time means the message carries no timestamp.
func (l *lagMonitor) stampAt(ctx context.Context, tp TopicPartition, off int64) (time.Time, error) {
	if s, ok := l.stamps[tp]; ok && s.off == off {
		return s.at, nil
	}
	if l.flight != nil {
		if at, ok := l.flight.lookup(tp, off); ok {
			l.stamps[tp] = offsetTime{off, at}
			return at, nil
		}
	}
	res, err := l.client.Fetch(ctx, &kafka.FetchRequest{
		Topic: tp.Topic, Partition: int(tp.Partition), Offset: off,
		MinBytes: 1, MaxBytes: 64 << 10, MaxWait: 100 * time.Millisecond,
	})
	if err != nil {
		return time.Time{}, err
	}
	if res.Error != nil {
		return time.Time{}, res.Error
	}
	// The broker answers whole record batches, which may start before off.
	for {
		rec, err := res.Records.ReadRecord()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return time.Time{}, errors.New("no message at or after the offset in the answer")
			}
			return time.Time{}, err
		}
		if rec.Offset >= off {
			l.stamps[tp] = offsetTime{off, rec.Time}
			return rec.Time, nil
		}
	}
}

// inflight remembers where this process's batches start in each partition
// (offset and Kafka timestamp of each batch's first message there), so that
// the lag monitor needs no fetch when the oldest uncommitted message of a
// partition is in flight here: during a ClickHouse outage, always. The
// decoder notes each batch; the monitor forgets what the group
// committed. Safe for concurrent use.
type inflight struct {
	mu sync.Mutex
	at map[TopicPartition][]offsetTime // ascending offsets, at most inflightKeep
}

// inflightKeep bounds the batch starts remembered per partition (the
// pipeline holds at most four batches).
const inflightKeep = 8

func newInflight() *inflight { return &inflight{at: map[TopicPartition][]offsetTime{}} }

// note records where b starts in each partition it holds. Messages come in
// runs of one partition; the first run of a partition has its lowest offset.
func (f *inflight) note(b *batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var prev *kafka.Message
	var done []TopicPartition
	for i := range b.msgs {
		m := &b.msgs[i]
		if prev != nil && prev.Partition == m.Partition && prev.Topic == m.Topic {
			continue
		}
		prev = m
		tp := TopicPartition{m.Topic, int32(m.Partition)}
		if slices.Contains(done, tp) {
			continue
		}
		done = append(done, tp)
		s := f.at[tp]
		if n := len(s); n > 0 && s[n-1].off >= m.Offset {
			s = s[:0] // the reader went back (a rebalance, a restart): start over
		}
		if len(s) == inflightKeep {
			s = append(s[:0], s[1:]...)
		}
		f.at[tp] = append(s, offsetTime{m.Offset, m.Time})
	}
}

// lookup returns the timestamp of the message at off if a batch starts there.
func (f *inflight) lookup(tp TopicPartition, off int64) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.at[tp] {
		if s.off == off {
			return s.at, true
		}
	}
	return time.Time{}, false
}

// forget drops the batch starts of tp below off (committed).
func (f *inflight) forget(tp TopicPartition, off int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.at[tp]
	i := 0
	for i < len(s) && s[i].off < off {
		i++
	}
	switch {
	case i == 0:
	case i == len(s):
		delete(f.at, tp)
	default:
		f.at[tp] = append(s[:0], s[i:]...)
	}
}
