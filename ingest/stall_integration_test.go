package ingest_test

// The lag gauges during a ClickHouse outage, on the REAL stack: they must
// show the messages that wait, and how long the oldest has waited, while
// nothing is inserted or committed and nothing is fetched. This test pauses
// a ClickHouse of its own (testenv.Own; Kafka is the shared one), so it runs
// in parallel with the other tests; it is skipped by -short.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
)

// TestStallLagOnRealStack: ingest runs under a steady load of 200 events/s;
// ClickHouse is frozen (SIGSTOP) for 150 s while the load goes on. During
// the pause:
//   - consumer_lag_messages, read from the group's committed offsets and the
//     high watermarks, is present at every sample, never 0, never falls,
//     and is at least what was produced since the pause began;
//   - consumer_lag_seconds, the age of the oldest uncommitted message, never
//     falls and ends within 15 s of the pause's length;
//   - both keep growing although messages_consumed_total stopped (fetching
//     stops at the memory bound) and no insert succeeded;
//   - the lag poll never fails (it does not touch ClickHouse).
//
// After the resume every event is stored once, and lag and age return to 0.
func TestStallLagOnRealStack(t *testing.T) {
	skipShort(t)
	const (
		rate     = 200 // events per second
		pauseFor = 150 * time.Second
		poll     = 2 * time.Second
	)
	own := ownStack(t, "clickhouse")
	s := newStackOn(t, 4, own)
	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.LagInterval = poll
	cfg.InsertTimeout = 5 * time.Second // a frozen server fails each attempt at this
	run := s.start(t, cfg)

	prod := startLoad(t, s, rate)
	s.waitFor(t, 2*time.Minute, "rows under load", func(c counts) bool { return c.errors >= 2000 })
	waitUntil(t, time.Minute, "the lag gauges to be exported", func() bool {
		_, okLag := metricOf(t, reg, "errtrail_ingest_consumer_lag_messages")
		_, okAge := metricOf(t, reg, "errtrail_ingest_consumer_lag_seconds")
		return okLag && okAge
	})
	steady := sampleLag(t, reg, m, prod, time.Now())
	t.Logf("before the pause: %s", steady)

	own.Stack(t, "pause-clickhouse")
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			own.Stack(t, "resume-clickhouse")
		}
	}()
	producedAtPause := prod.produced()
	lastInsert := value(m.LastInsert)
	pollErrors := pollErrorsOf(m)
	pollOK := value(m.LagPollSuccess)

	// Sample every 5 s. The first poll after the pause may still see the
	// commits of the inserts that finished just before it: judge from 10 s.
	var samples []lagSample
	var consumedAt60 float64
	for time.Since(paused) < pauseFor {
		time.Sleep(5 * time.Second)
		sm := sampleLag(t, reg, m, prod, paused)
		samples = append(samples, sm)
		t.Logf("paused %s", sm)
		if consumedAt60 == 0 && sm.since >= 60*time.Second {
			consumedAt60 = sm.consumed
		}
	}
	last := samples[len(samples)-1]
	var prev *lagSample
	for i := range samples {
		sm := &samples[i]
		if sm.since < 10*time.Second {
			continue
		}
		if !sm.lagPresent || !sm.agePresent {
			t.Errorf("at %s into the pause a lag gauge is absent (messages %v, age %v)", sm.since, sm.lagPresent, sm.agePresent)
		}
		if sm.lag == 0 || sm.age == 0 {
			t.Errorf("at %s into the pause: lag %v messages, age %vs; messages wait, so neither may read 0", sm.since, sm.lag, sm.age)
		}
		// The poll before the sample (within poll + its own duration)
		// saw everything acknowledged 5 s before it.
		if floor := float64(sm.producedBefore5s - producedAtPause); sm.lag < floor {
			t.Errorf("at %s into the pause: lag %v; at least %v messages were produced since the pause began and cannot be committed", sm.since, sm.lag, floor)
		}
		if prev != nil && (sm.lag < prev.lag || sm.age < prev.age) {
			t.Errorf("at %s into the pause: lag %v, age %v fell from %v, %v while nothing can be committed", sm.since, sm.lag, sm.age, prev.lag, prev.age)
		}
		prev = sm
	}
	if first := samples[min(2, len(samples)-1)]; last.lag <= first.lag || last.age <= first.age {
		t.Errorf("lag %v → %v, age %v → %v over the pause; both must grow", first.lag, last.lag, first.age, last.age)
	}
	if want := (last.since - 15*time.Second).Seconds(); last.age < want {
		t.Errorf("age of the oldest uncommitted message %vs at %s into the pause; want at least %vs (it was produced before the pause)", last.age, last.since, want)
	}
	if last.age > last.since.Seconds()+30 {
		t.Errorf("age %vs at %s into the pause: the oldest uncommitted message cannot be that old (the load was caught up before the pause: age %vs)", last.age, last.since, steady.age)
	}
	// The outage's shape: nothing consumed, nothing inserted, the lag still
	// grows (this is what the old gauges hid).
	if consumedAt60 == 0 || last.consumed != consumedAt60 {
		t.Errorf("messages_consumed_total %v at 60 s into the pause, %v at its end; fetching should have stopped at the memory bound", consumedAt60, last.consumed)
	}
	if got := value(m.LastInsert); got != lastInsert {
		t.Errorf("last_insert_success moved during the pause (%v → %v): ClickHouse was frozen", lastInsert, got)
	}
	if got := pollErrorsOf(m); got != pollErrors {
		t.Errorf("lag_poll_errors_total rose from %v to %v during the pause: the poll does not need ClickHouse", pollErrors, got)
	}
	if got := value(m.LagPollSuccess); got <= pollOK {
		t.Errorf("no successful lag poll during the pause (success timestamp %v, was %v)", got, pollOK)
	}

	own.Stack(t, "resume-clickhouse")
	resumed = true
	back := time.Now()
	time.Sleep(5 * time.Second) // the load goes on a little after the outage
	total := prod.stop()
	t.Logf("produced %d events (%d before the pause)", total, producedAtPause)
	s.waitFor(t, 3*time.Minute, "every event stored", func(c counts) bool { return c.errorIDs >= uint64(total) })
	stored := time.Since(back)
	waitUntil(t, 2*time.Minute, "lag and age back to 0", func() bool {
		lag, ok1 := metricOf(t, reg, "errtrail_ingest_consumer_lag_messages")
		age, ok2 := metricOf(t, reg, "errtrail_ingest_consumer_lag_seconds")
		return ok1 && ok2 && lag == 0 && age == 0
	})
	t.Logf("after the resume: every event stored %s later, lag and age 0 %s later",
		stored.Round(100*time.Millisecond), time.Since(back).Round(100*time.Millisecond))
	if err := run.stop(t); err != nil {
		t.Fatal(err)
	}
	s.checkOnce(t, uint64(total), 0)
	checkCommittedToEnd(t, s, 4)
}

// lagSample is what the gauges said at one moment of the test.
type lagSample struct {
	since                  time.Duration // since the pause (or any reference)
	lag, age               float64
	lagPresent, agePresent bool
	consumed               float64
	produced               int
	producedBefore5s       int // acknowledged by Kafka 5 s before the sample
}

func (s lagSample) String() string {
	return fmt.Sprintf("%5.1fs: lag %6.0f messages, oldest uncommitted %5.1fs, consumed %6.0f, produced %6d",
		s.since.Seconds(), s.lag, s.age, s.consumed, s.produced)
}

func sampleLag(t *testing.T, reg *prometheus.Registry, m *ingest.Metrics, prod *load, since time.Time) lagSample {
	t.Helper()
	sm := lagSample{since: time.Since(since), consumed: value(m.Consumed), produced: prod.produced(),
		producedBefore5s: prod.producedAt(time.Now().Add(-5 * time.Second))}
	sm.lag, sm.lagPresent = metricOf(t, reg, "errtrail_ingest_consumer_lag_messages")
	sm.age, sm.agePresent = metricOf(t, reg, "errtrail_ingest_consumer_lag_seconds")
	return sm
}

func pollErrorsOf(m *ingest.Metrics) float64 {
	var n float64
	for _, st := range []string{"metadata", "committed", "end_offsets", "timestamp"} {
		n += value(m.LagPollErrors.WithLabelValues(st))
	}
	return n
}

// metricOf returns the value of the unlabelled gauge or counter name in reg,
// and whether it is exported.
func metricOf(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) > 0 {
			if g := mf.Metric[0].Gauge; g != nil {
				return g.GetValue(), true
			}
			return mf.Metric[0].Counter.GetValue(), true
		}
	}
	return 0, false
}

// load publishes events with distinct ids at a steady rate until stopped,
// and remembers when Kafka acknowledged how many.
type load struct {
	done chan struct{}
	wg   sync.WaitGroup
	n    atomic.Int64

	mu   sync.Mutex
	acks []loadAck
}

type loadAck struct {
	at time.Time
	n  int
}

func startLoad(t *testing.T, s *stack, perSecond int) *load {
	l := &load{done: make(chan struct{})}
	w := &kafka.Writer{
		Addr: kafka.TCP(s.brokers...), Topic: s.topic, Balancer: &kafka.Hash{},
		BatchSize: perSecond, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafka.RequireAll,
	}
	const tick = 250 * time.Millisecond
	chunk := max(perSecond*int(tick)/int(time.Second), 1)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer w.Close()
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-tk.C:
			}
			from := int(l.n.Load())
			msgs := goodEvents("stall", from, chunk)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := w.WriteMessages(ctx, msgs...)
			cancel()
			if err != nil {
				t.Logf("load: %v (the chunk is sent again)", err)
				continue
			}
			l.n.Add(int64(chunk))
			l.mu.Lock()
			l.acks = append(l.acks, loadAck{time.Now(), from + chunk})
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *load) produced() int { return int(l.n.Load()) }

// producedAt returns how many events Kafka had acknowledged at time at.
func (l *load) producedAt(at time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.acks {
		if a.at.After(at) {
			break
		}
		n = a.n
	}
	return n
}

// stop ends the load and returns how many events were acknowledged.
func (l *load) stop() int {
	close(l.done)
	l.wg.Wait()
	return l.produced()
}
