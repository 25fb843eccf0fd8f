package loadgen

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-faster/city"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// Defaults for Config.
const (
	DefaultBrokers = "127.0.0.1:19092"
	DefaultTopic   = "errtrail.replies"
)

// Config is one run of the load tool.
type Config struct {
	Brokers  []string // default DefaultBrokers
	Topic    string   // default DefaultTopic
	Scenario *Scenario

	// Speed runs scenario time Speed× faster than real time (default 1).
	// Zero or less runs unpaced, as fast as Kafka takes it (flood).
	Speed float64
	// Clock chooses observed_at. "real" (default): the wall time at which the
	// event is due, Started + scenario time / Speed, so what lands in
	// ClickHouse looks like it happens now and windows shrink by Speed (the
	// alerter tests use compressed windows). "scenario": Start + scenario
	// time, so gaps between timestamps are scenario gaps (a caller that waits
	// a 12 s Retry-After shows a 12 s gap at any speed) and may run ahead of
	// the wall clock.
	Clock string
	Start time.Time // anchor of the scenario clock; default the run's start

	MaxEvents int64         // stop after this many messages (0: no bound)
	Duration  time.Duration // stop after this much real time (0: the scenario's end)
	// Loop restarts the scenario when its time is over (flood uses it with
	// MaxEvents or Duration as the bound).
	Loop  bool
	Scale float64 // multiplies every caller's rate (default 1)

	Progress      io.Writer     // progress lines; nil: none
	ProgressEvery time.Duration // default 2 s
	KeepIDs       int           // event ids listed in the report, at most (default 100000; <0 none)

	// Output, when set, receives the messages (one value per line) instead of
	// Kafka; for inspecting a scenario and for tests without a broker.
	Output io.Writer

	Partitions  int   // partitions of the topic when the tool creates it (default: the broker's)
	BatchSize   int   // kafka-go Writer.BatchSize (default 1000)
	MaxInFlight int64 // messages handed to the writer and not yet acknowledged (default 200000)
	Compression bool  // lz4 (default on through NewConfig / the command)
	// BodyForm is how reply bodies are written: BodyString (default),
	// BodyJSON (JSON bodies embedded as reply.body_json) or BodyMixed.
	BodyForm string
	// PadBytes, when positive, adds a top-level "x_pad" string of that many
	// bytes to every valid event, to measure large messages (memory under a
	// backlog). Decoders ignore unknown event fields, so the rows do not
	// change. The padding repeats a short pattern: Kafka stores it
	// compressed to a fraction, the consumer holds it whole.
	PadBytes int
}

type msgMeta struct {
	agent, caller string
	kind          Kind
	source        string
	id            string
	poison        string
	observedMS    int64
}

type tally struct {
	mu       sync.Mutex
	by       map[Count]int64
	poison   map[string]int64
	produced int64
	valid    int64
	failed   int64
	bytes    int64
	hash     uint64
	ids      []string
	keepIDs  int
	first    int64
	last     int64
	inflight atomic.Int64
	sent     atomic.Int64
	lastErr  error
}

func (t *tally) done(msgs []kafka.Message, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range msgs {
		m := msgs[i].WriterData.(*msgMeta)
		if err != nil {
			t.failed++
			t.lastErr = err
			continue
		}
		t.produced++
		t.bytes += int64(len(msgs[i].Value))
		if m.poison != "" {
			t.poison[m.poison]++
			continue
		}
		t.valid++
		t.by[Count{Agent: m.agent, Caller: m.caller, Kind: m.kind, Source: m.source}]++
		t.hash += city.CH64([]byte(m.id))
		if t.keepIDs > 0 && len(t.ids) <= t.keepIDs {
			t.ids = append(t.ids, m.id)
		}
		if t.first == 0 || m.observedMS < t.first {
			t.first = m.observedMS
		}
		if m.observedMS > t.last {
			t.last = m.observedMS
		}
	}
	t.inflight.Add(-int64(len(msgs)))
}

func newRunID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "lg-" + hex.EncodeToString(b[:])
}

// Run plays cfg.Scenario into Kafka and returns what was produced. It stops
// at the end of the scenario, at cfg.MaxEvents or cfg.Duration, or when ctx
// is done, and always flushes what it handed to the writer before it
// returns. The error is non-nil when messages failed or ctx ended the run;
// the report is valid either way.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	sc := cfg.Scenario
	if sc == nil {
		return nil, errors.New("loadgen: no scenario")
	}
	if len(cfg.Brokers) == 0 {
		cfg.Brokers = []string{DefaultBrokers}
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Clock == "" {
		cfg.Clock = "real"
	}
	if cfg.Clock != "real" && cfg.Clock != "scenario" {
		return nil, fmt.Errorf("loadgen: clock %q: want real or scenario", cfg.Clock)
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 2 * time.Second
	}
	if cfg.KeepIDs == 0 {
		cfg.KeepIDs = 100000
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 200000
	}
	runID := newRunID()
	started := time.Now()
	anchor := cfg.Start
	if anchor.IsZero() {
		anchor = started
	}
	tl := &tally{by: map[Count]int64{}, poison: map[string]int64{}, keepIDs: cfg.KeepIDs}

	var write func([]kafka.Message) error
	var closeW func() error
	if cfg.Output != nil {
		bw := bufio.NewWriterSize(cfg.Output, 1<<20)
		write = func(ms []kafka.Message) error {
			for _, m := range ms {
				bw.Write(m.Value)
				bw.WriteByte('\n')
			}
			tl.inflight.Add(int64(len(ms)))
			tl.done(ms, nil)
			return nil
		}
		closeW = bw.Flush
	} else {
		if err := EnsureTopic(ctx, cfg.Brokers, cfg.Topic, cfg.Partitions); err != nil {
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		w := &kafka.Writer{
			Addr:                   kafka.TCP(cfg.Brokers...),
			Topic:                  cfg.Topic,
			Balancer:               &kafka.Hash{},
			BatchSize:              cfg.BatchSize,
			BatchBytes:             8 << 20, // must exceed the too_large poison
			BatchTimeout:           5 * time.Millisecond,
			RequiredAcks:           kafka.RequireAll,
			Async:                  true,
			AllowAutoTopicCreation: true,
			MaxAttempts:            10,
			WriteBackoffMin:        50 * time.Millisecond,
			WriteBackoffMax:        2 * time.Second,
			Completion:             tl.done,
		}
		if cfg.Compression {
			w.Compression = compress.Lz4
		}
		write = func(ms []kafka.Message) error {
			tl.inflight.Add(int64(len(ms)))
			// Async: returns at once; Completion accounts for every message.
			return w.WriteMessages(context.Background(), ms...)
		}
		closeW = w.Close
	}

	speed := cfg.Speed
	s := newSim(sc, runID, cfg.Scale)
	total := sc.Total()
	var loopOffset time.Duration // scenario time of earlier loops
	clock := func(t time.Duration) time.Time {
		t += loopOffset
		switch {
		case cfg.Clock == "scenario":
			return anchor.Add(t)
		case speed > 0:
			return started.Add(time.Duration(float64(t) / speed))
		default:
			return time.Now()
		}
	}
	s.clock = clock

	var (
		pending  []kafka.Message
		stopped  bool
		sentN    int64
		deadline time.Time
		runErr   error
	)
	if cfg.Duration > 0 {
		deadline = started.Add(cfg.Duration)
	}
	emit := func(e *emitted) {
		if stopped {
			return
		}
		if cfg.MaxEvents > 0 && sentN >= cfg.MaxEvents {
			stopped = true
			return
		}
		sentN++
		m := kafka.Message{Key: []byte(e.key)}
		if e.ev != nil {
			ms := s.clock(e.at).UnixMilli()
			e.ev.observedMS = ms
			m.Value = appendEvent(make([]byte, 0, 1024+max(cfg.PadBytes, 0)), e.ev, cfg.BodyForm)
			if cfg.PadBytes > 0 {
				m.Value = appendPad(m.Value, cfg.PadBytes)
			}
			m.WriterData = &msgMeta{agent: e.ev.req.agent.Name, caller: e.ev.req.caller, kind: e.ev.kind,
				source: e.ev.sourceKind, id: e.ev.id, observedMS: ms}
		} else {
			m.Value = e.pvalue
			m.WriterData = &msgMeta{poison: e.poison}
		}
		pending = append(pending, m)
	}
	flush := func() {
		if len(pending) == 0 {
			return
		}
		for tl.inflight.Load() > cfg.MaxInFlight && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		if err := write(pending); err != nil && runErr == nil {
			runErr = err
		}
		tl.sent.Add(int64(len(pending)))
		pending = pending[:0:0]
	}

	nextProgress := started.Add(cfg.ProgressEvery)
	var lastSent int64
	lastT := started
	progress := func(now time.Time, scen time.Duration) {
		if cfg.Progress == nil || now.Before(nextProgress) {
			return
		}
		tl.mu.Lock()
		prod, failed, lerr := tl.produced, tl.failed, tl.lastErr
		tl.mu.Unlock()
		sent := tl.sent.Load()
		rate := float64(sent-lastSent) / now.Sub(lastT).Seconds()
		line := fmt.Sprintf("loadgen: %5.1fs  scenario %6.1fs/%.0fs  sent %d (%.0f/s)  acked %d  errors %d",
			now.Sub(started).Seconds(), (scen + loopOffset).Seconds(), total.Seconds(), sent, rate, prod, failed)
		if lerr != nil {
			line += "  last error: " + lerr.Error()
		}
		fmt.Fprintln(cfg.Progress, line)
		lastSent, lastT = sent, now
		nextProgress = now.Add(cfg.ProgressEvery)
	}

	var scen time.Duration
	for !stopped {
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		now := time.Now()
		if !deadline.IsZero() && !now.Before(deadline) {
			break
		}
		next := s.nextAt()
		if next < 0 && speed > 0 && !cfg.Loop {
			// Paced: nothing more to send, but the scenario's time goes on.
			if scen >= total {
				break
			}
			next = total
		}
		if next < 0 {
			if !cfg.Loop {
				scen = total
				break
			}
			// Next loop: counters and id streams go on, so ids stay unique.
			old := s
			s = newSim(sc, runID, cfg.Scale)
			if len(s.q) == 0 {
				break
			}
			loopOffset += total
			s.admitted, s.requests, s.seq, s.rpcSeq = old.admitted, old.requests, old.seq, old.rpcSeq
			s.idr = mrand.New(mrand.NewPCG(old.idr.Uint64(), old.idr.Uint64()))
			s.clock = clock
			continue
		}
		if speed > 0 {
			target := time.Duration(float64(now.Sub(started))*speed) - loopOffset
			if next > target {
				flush()
				wait := time.Duration(float64(next-target) / speed)
				wait = min(wait, 50*time.Millisecond)
				if !deadline.IsZero() {
					wait = min(wait, time.Until(deadline))
				}
				time.Sleep(max(wait, 0))
				progress(time.Now(), scen)
				continue
			}
			scen = target
			s.advance(target, emit)
		} else {
			// Unpaced: a slice of scenario time per step.
			scen = next + 100*time.Millisecond
			s.advance(scen, emit)
		}
		if len(pending) >= cfg.BatchSize || speed <= 0 {
			flush()
		}
		progress(time.Now(), scen)
	}
	flush()
	if err := closeW(); err != nil && runErr == nil {
		runErr = err
	}
	finished := time.Now()
	if scen > total {
		scen = total
	}

	r := &Report{Scenario: sc.Name, RunID: runID, Topic: cfg.Topic, Clock: cfg.Clock, Speed: max(speed, 0),
		Started: started, Finished: finished, ElapsedSec: finished.Sub(started).Seconds(),
		ScenarioSec: (scen + loopOffset).Seconds(), Requests: s.requests}
	tl.mu.Lock()
	r.Produced, r.Valid, r.Failed, r.Bytes = tl.produced, tl.valid, tl.failed, tl.bytes
	r.Poison = tl.produced - tl.valid
	r.PoisonByKind = tl.poison
	r.EventIDHash = tl.hash
	r.FirstObservedMS, r.LastObservedMS = tl.first, tl.last
	if tl.keepIDs > 0 && len(tl.ids) <= tl.keepIDs {
		r.EventIDs = tl.ids
		sort.Strings(r.EventIDs)
	}
	for c, n := range tl.by {
		c.N = n
		r.By = append(r.By, c)
	}
	failed, lastErr := tl.failed, tl.lastErr
	tl.mu.Unlock()
	sort.Slice(r.By, func(i, j int) bool {
		a, b := r.By[i], r.By[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Caller != b.Caller {
			return a.Caller < b.Caller
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Source < b.Source
	})
	for k, n := range s.admitted {
		r.Admitted = append(r.Admitted, Admitted{Agent: k[0], Caller: k[1], N: n})
		r.AdmittedTotal += n
	}
	sort.Slice(r.Admitted, func(i, j int) bool {
		if r.Admitted[i].Agent != r.Admitted[j].Agent {
			return r.Admitted[i].Agent < r.Admitted[j].Agent
		}
		return r.Admitted[i].Caller < r.Admitted[j].Caller
	})
	if r.ElapsedSec > 0 {
		r.EventsPerSec = float64(r.Produced) / r.ElapsedSec
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.ElapsedSec
	}
	if runErr == nil && failed > 0 {
		runErr = fmt.Errorf("loadgen: %d messages not written: %w", failed, lastErr)
	}
	return r, runErr
}
