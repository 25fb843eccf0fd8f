package loadgen

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

	// History, when positive, publishes that much of the scenario's
	// baseline (Scenario.baseline: first phase, no incidents) before the
	// scenario, unpaced, observed from History before the run's start up to
	// the scenario's start (history.go). It is observed_at time: with the
	// real clock at Speed S it holds S× History of baseline behaviour, as
	// the scenario's windows shrink by S. It needs Speed > 0 with the real
	// clock. MaxEvents counts its messages; Duration starts after it.
	History time.Duration
	// OnStart, when set, is called once with the wall time at which the
	// scenario starts to play (after its history, if any), before the
	// scenario's first message; not at all when the run ends inside its
	// history.
	OnStart func(time.Time)
	// AfterHistory, when set, is called once the history Kafka has
	// acknowledged, before the scenario starts, with the run's id (every
	// event_id starts with it and ':') and how many history messages were
	// acknowledged. A test waits there until a consumer has stored them, so
	// that the scenario is judged against the whole baseline however busy
	// the machine is. The history then catches up with the wall clock
	// again (the time the hook took, a few messages), so it still ends
	// where the scenario starts, without a gap. An error ends the run.
	AfterHistory func(ctx context.Context, runID string, acknowledged int64) error

	MaxEvents int64         // stop after this many messages, history included (0: no bound)
	Duration  time.Duration // stop after the scenario played this much real time (0: at its end)
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
	history       bool // published by the history (history.go)
}

// counts are the acknowledged messages of a run, or of its history.
type counts struct {
	by       map[Count]int64
	poison   map[string]int64
	produced int64
	valid    int64
	failed   int64
	bytes    int64
	hash     uint64
	first    int64
	last     int64
}

func newCounts() counts { return counts{by: map[Count]int64{}, poison: map[string]int64{}} }

func (c *counts) add(m *msgMeta, size int) {
	c.produced++
	c.bytes += int64(size)
	if m.poison != "" {
		c.poison[m.poison]++
		return
	}
	c.valid++
	c.by[Count{Agent: m.agent, Caller: m.caller, Kind: m.kind, Source: m.source}]++
	c.hash += city.CH64([]byte(m.id))
	if c.first == 0 || m.observedMS < c.first {
		c.first = m.observedMS
	}
	if m.observedMS > c.last {
		c.last = m.observedMS
	}
}

// sortedCounts lists c.by in a stable order (agent, caller, kind, source).
func (c *counts) sortedCounts() []Count {
	out := make([]Count, 0, len(c.by))
	for k, n := range c.by {
		k.N = n
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
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
	return out
}

type tally struct {
	mu       sync.Mutex
	all      counts // every message, history included
	hist     counts // the history's alone
	ids      []string
	keepIDs  int
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
			t.all.failed++
			if m.history {
				t.hist.failed++
			}
			t.lastErr = err
			continue
		}
		t.all.add(m, len(msgs[i].Value))
		if m.history {
			t.hist.add(m, len(msgs[i].Value))
		}
		if m.poison == "" && t.keepIDs > 0 && len(t.ids) <= t.keepIDs {
			t.ids = append(t.ids, m.id)
		}
	}
	t.inflight.Add(-int64(len(msgs)))
}

func newRunID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "lg-" + hex.EncodeToString(b[:])
}

// driver hands the sims' messages to the writer and keeps the run's
// bounds and progress; Run plays the scenario through it, playHistory
// (history.go) the history before it.
type driver struct {
	cfg     *Config
	tl      *tally
	write   func([]kafka.Message) error
	pending []kafka.Message
	stopped bool  // MaxEvents reached
	sentN   int64 // messages built, for MaxEvents
	lastMS  int64 // latest observed_at built
	runErr  error
	started time.Time // Run's start
	total   time.Duration

	nextProgress time.Time
	lastSent     int64
	lastT        time.Time
}

// emitter returns the function that turns what s emits into messages;
// history marks them as the history's.
func (d *driver) emitter(s *sim, history bool) func(*emitted) {
	cfg := d.cfg
	return func(e *emitted) {
		if d.stopped {
			return
		}
		if cfg.MaxEvents > 0 && d.sentN >= cfg.MaxEvents {
			d.stopped = true
			return
		}
		d.sentN++
		m := kafka.Message{Key: []byte(e.key)}
		if e.ev != nil {
			ms := s.clock(e.at).UnixMilli()
			e.ev.observedMS = ms
			d.lastMS = max(d.lastMS, ms)
			m.Value = appendEvent(make([]byte, 0, 1024+max(cfg.PadBytes, 0)), e.ev, cfg.BodyForm)
			if cfg.PadBytes > 0 {
				m.Value = appendPad(m.Value, cfg.PadBytes)
			}
			m.WriterData = &msgMeta{agent: e.ev.req.agent.Name, caller: e.ev.req.caller, kind: e.ev.kind,
				source: e.ev.sourceKind, id: e.ev.id, observedMS: ms, history: history}
		} else {
			m.Value = e.pvalue
			m.WriterData = &msgMeta{poison: e.poison, history: history}
		}
		d.pending = append(d.pending, m)
	}
}

// flush hands the pending messages to the writer, waiting while too many
// are unacknowledged.
func (d *driver) flush(ctx context.Context) {
	if len(d.pending) == 0 {
		return
	}
	for d.tl.inflight.Load() > d.cfg.MaxInFlight && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := d.write(d.pending); err != nil && d.runErr == nil {
		d.runErr = err
	}
	d.tl.sent.Add(int64(len(d.pending)))
	d.pending = d.pending[:0:0]
}

// progress prints a progress line when one is due; where says how far the
// run is ("scenario 12.0s/75s", "history -41m10s").
func (d *driver) progress(now time.Time, where func() string) {
	if d.cfg.Progress == nil || now.Before(d.nextProgress) {
		return
	}
	tl := d.tl
	tl.mu.Lock()
	prod, failed, lerr := tl.all.produced, tl.all.failed, tl.lastErr
	tl.mu.Unlock()
	sent := tl.sent.Load()
	rate := float64(sent-d.lastSent) / now.Sub(d.lastT).Seconds()
	line := fmt.Sprintf("loadgen: %5.1fs  %s  sent %d (%.0f/s)  acked %d  errors %d",
		now.Sub(d.started).Seconds(), where(), sent, rate, prod, failed)
	if lerr != nil {
		line += "  last error: " + lerr.Error()
	}
	fmt.Fprintln(d.cfg.Progress, line)
	d.lastSent, d.lastT = sent, now
	d.nextProgress = now.Add(d.cfg.ProgressEvery)
}

// Run plays cfg.Scenario into Kafka and returns what was produced: first
// cfg.History of the scenario's baseline at full speed (history.go), then
// the scenario. It stops at the end of the scenario, at cfg.MaxEvents or
// cfg.Duration, or when ctx is done, and always flushes what it handed to
// the writer before it returns. The error is non-nil when messages failed
// or ctx ended the run; the report is valid either way.
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
	if err := checkHistory(&cfg); err != nil {
		return nil, err
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
	tl := &tally{all: newCounts(), hist: newCounts(), keepIDs: cfg.KeepIDs}
	d := &driver{cfg: &cfg, tl: tl, started: time.Now(), total: sc.Total()}
	d.lastT, d.nextProgress = d.started, d.started.Add(cfg.ProgressEvery)

	var closeW func() error
	if cfg.Output != nil {
		bw := bufio.NewWriterSize(cfg.Output, 1<<20)
		d.write = func(ms []kafka.Message) error {
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
		d.write = func(ms []kafka.Message) error {
			tl.inflight.Add(int64(len(ms)))
			// Async: returns at once; Completion accounts for every message.
			// Record timestamps are left to kafka-go: the time of the batch.
			return w.WriteMessages(context.Background(), ms...)
		}
		closeW = w.Close
	}

	// The history, when asked for, ends where the scenario starts: the wall
	// time of the real clock's scenario time 0 (started), and the anchor of
	// the scenario clock.
	anchor := cfg.Start
	if anchor.IsZero() {
		anchor = d.started
	}
	var hist *historyRun
	started := d.started
	play := true
	if cfg.History > 0 {
		var err error
		hist, err = d.playHistory(ctx, sc, runID, anchor, cfg.AfterHistory)
		if err != nil && d.runErr == nil {
			d.runErr = err
		}
		play = err == nil && !d.stopped // not ended by ctx or MaxEvents
		started = hist.scenarioStart
	}

	speed := cfg.Speed
	s := newSim(sc, runID, cfg.Scale)
	if hist != nil {
		s.continueIDs(hist.sim)
	}
	total := d.total
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
	emit := d.emitter(s, false)

	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = started.Add(cfg.Duration)
	}
	if play && cfg.OnStart != nil {
		cfg.OnStart(started)
	}
	var scen time.Duration
	where := func() string {
		return fmt.Sprintf("scenario %6.1fs/%.0fs", (scen + loopOffset).Seconds(), total.Seconds())
	}
	for play && !d.stopped {
		if ctx.Err() != nil {
			if d.runErr == nil {
				d.runErr = ctx.Err()
			}
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
			s.admitted, s.requests = old.admitted, old.requests
			s.continueIDs(old)
			s.clock = clock
			emit = d.emitter(s, false)
			continue
		}
		if speed > 0 {
			target := time.Duration(float64(now.Sub(started))*speed) - loopOffset
			if next > target {
				d.flush(ctx)
				wait := time.Duration(float64(next-target) / speed)
				wait = min(wait, 50*time.Millisecond)
				if !deadline.IsZero() {
					wait = min(wait, time.Until(deadline))
				}
				time.Sleep(max(wait, 0))
				d.progress(time.Now(), where)
				continue
			}
			scen = target
			s.advance(target, emit)
		} else {
			// Unpaced: a slice of scenario time per step.
			scen = next + 100*time.Millisecond
			s.advance(scen, emit)
		}
		if len(d.pending) >= cfg.BatchSize || speed <= 0 {
			d.flush(ctx)
		}
		d.progress(time.Now(), where)
	}
	d.flush(ctx)
	if err := closeW(); err != nil && d.runErr == nil {
		d.runErr = err
	}
	finished := time.Now()
	if scen > total {
		scen = total
	}

	r := &Report{Scenario: sc.Name, RunID: runID, Topic: cfg.Topic, Clock: cfg.Clock, Speed: max(speed, 0),
		Started: d.started, ScenarioStarted: started, Finished: finished,
		ElapsedSec: finished.Sub(d.started).Seconds(), ScenarioSec: (scen + loopOffset).Seconds(),
		Requests: s.requests}
	admitted := s.admitted
	tl.mu.Lock()
	a := &tl.all
	r.Produced, r.Valid, r.Failed, r.Bytes = a.produced, a.valid, a.failed, a.bytes
	r.Poison = a.produced - a.valid
	r.PoisonByKind = a.poison
	r.EventIDHash = a.hash
	r.FirstObservedMS, r.LastObservedMS = a.first, a.last
	if tl.keepIDs > 0 && len(tl.ids) <= tl.keepIDs {
		r.EventIDs = tl.ids
		sort.Strings(r.EventIDs)
	}
	r.By = a.sortedCounts()
	if hist != nil {
		r.History = hist.report(&tl.hist)
	}
	failed, lastErr := a.failed, tl.lastErr
	tl.mu.Unlock()
	if hist != nil {
		r.Requests += hist.sim.requests
		admitted = mergeAdmitted(admitted, hist.sim.admitted)
	}
	for k, n := range admitted {
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
	if d.runErr == nil && failed > 0 {
		d.runErr = fmt.Errorf("loadgen: %d messages not written: %w", failed, lastErr)
	}
	return r, d.runErr
}

// mergeAdmitted returns a with b's counts added (a may be changed).
func mergeAdmitted(a, b map[[2]string]int64) map[[2]string]int64 {
	for k, n := range b {
		a[k] += n
	}
	return a
}
