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
//   - once the commits of inserts finished before the pause have landed
//     (the committed offsets no longer move; they must not in the pause's
//     second half), consumer_lag_messages, read from the group's committed
//     offsets and the high watermarks, is present at every sample, never 0,
//     never falls, and is at least what reached the log after the pause
//     began and before the poll;
//   - consumer_lag_seconds, the age of the oldest uncommitted message, never
//     falls, is at least the time since the first message that reached the
//     log after the pause began, and no more than the load's own age;
//   - both keep growing although messages_consumed_total stopped (fetching
//     stops at the memory bound) and no insert succeeded;
//   - the lag poll never fails (it does not touch ClickHouse).
//
// Every bound is taken from the moments the gauges report (the poll's
// success time) and Kafka's acknowledgements, none from how soon a poll or a
// commit happens: a busy machine slows the test, it cannot fail it.
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

	// Sample every 5 s. No judgement rests on how soon a poll or a commit
	// happens (this machine may be busy): each bound is taken from the
	// moments the gauges themselves report (the lag poll's success time)
	// and from when Kafka acknowledged the load's messages.
	var samples []lagSample
	for time.Since(paused) < pauseFor {
		time.Sleep(5 * time.Second)
		sm := sampleLag(t, reg, m, prod, paused)
		samples = append(samples, sm)
		t.Logf("paused %s", sm)
	}
	// Commits that were under way when ClickHouse froze (inserts that had
	// already succeeded) may still land after the pause began; none can
	// after that. The samples judged are those taken once the committed
	// offsets had reached their final value; the second half of the pause
	// must all be such samples.
	last := samples[len(samples)-1]
	if mid := samples[len(samples)/2]; mid.committed != last.committed {
		t.Errorf("the committed offsets moved from %v to %v in the second half of the pause: nothing can be inserted, so nothing may be committed", mid.committed, last.committed)
	}
	// Nothing that reached the log after the pause began can be committed.
	firstAfter := prod.firstSentAfter(paused)
	var prev *lagSample
	judged := 0
	for i := range samples {
		sm := &samples[i]
		if sm.committed != last.committed {
			continue
		}
		judged++
		if !sm.lagPresent || !sm.agePresent {
			t.Errorf("at %s into the pause a lag gauge is absent (messages %v, age %v)", sm.since, sm.lagPresent, sm.agePresent)
		}
		if sm.lag == 0 || sm.age == 0 {
			t.Errorf("at %s into the pause: lag %v messages, age %vs; messages wait, so neither may read 0", sm.since, sm.lag, sm.age)
		}
		if prev != nil {
			// The poll behind this sample began after the poll behind the
			// previous sample had ended: every message acknowledged by then
			// was in the log it read, and none produced after the pause can
			// be committed.
			if floor := float64(prod.sentAfter(paused, prev.pollAt)); sm.lag < floor {
				t.Errorf("at %s into the pause: lag %v; at least %v messages were produced after the pause began and before this poll", sm.since, sm.lag, floor)
			}
			if !firstAfter.IsZero() && prev.pollAt.After(firstAfter) {
				if floor := prev.pollAt.Sub(firstAfter).Seconds(); sm.age < floor {
					t.Errorf("at %s into the pause: age %vs; the oldest uncommitted message is no younger than the first one produced after the pause (%vs before this poll began)", sm.since, sm.age, floor)
				}
			}
			if sm.lag < prev.lag || sm.age < prev.age {
				t.Errorf("at %s into the pause: lag %v, age %v fell from %v, %v while nothing can be committed", sm.since, sm.lag, sm.age, prev.lag, prev.age)
			}
		}
		// No uncommitted message is older than the load itself.
		if ceiling := sm.pollAt.Sub(prod.started).Seconds() + 1; sm.age > ceiling {
			t.Errorf("at %s into the pause: age %vs, but the load began only %vs before this poll", sm.since, sm.age, ceiling)
		}
		prev = sm
	}
	if judged < 2 {
		t.Fatalf("only %d samples taken after the last commit; the pause's gauges were not judged", judged)
	}
	if first := samples[len(samples)-judged]; last.lag <= first.lag || last.age <= first.age {
		t.Errorf("lag %v → %v, age %v → %v over the pause; both must grow", first.lag, last.lag, first.age, last.age)
	}
	// The outage's shape: nothing consumed, nothing inserted, the lag still
	// grows (this is what the old gauges hid).
	if mid := samples[len(samples)/2]; last.consumed != mid.consumed || last.consumed >= float64(last.produced) {
		t.Errorf("messages_consumed_total %v in the middle of the pause, %v at its end, %d produced; fetching should have stopped at the memory bound", mid.consumed, last.consumed, last.produced)
	}
	if got := value(m.LastInsert); got != lastInsert {
		t.Errorf("last_insert_success moved during the pause (%v → %v): ClickHouse was frozen", lastInsert, got)
	}
	// The poll does not need ClickHouse: its polls go on succeeding while
	// ClickHouse is frozen. A poll may still fail on Kafka itself (two
	// suites at once: the shared broker's controller stalled 2.3 s and
	// answered one ListOffsets with UNKNOWN_SERVER_ERROR in both suites'
	// pauses), so failures are logged and must stay fewer than the
	// successful polls the samples saw, which a poll that waited on
	// ClickHouse could not have made.
	succeeded := map[time.Time]bool{}
	for _, sm := range samples {
		if sm.pollAt.After(paused) {
			succeeded[sm.pollAt] = true
		}
	}
	if got := pollErrorsOf(m); got != pollErrors {
		t.Logf("lag_poll_errors_total rose from %v to %v during the pause (the warnings above say why); %d successful polls seen", pollErrors, got, len(succeeded))
		if got-pollErrors >= float64(len(succeeded)) {
			t.Errorf("lag_poll_errors_total rose by %v during the pause, with %d successful polls seen: the poll does not need ClickHouse", got-pollErrors, len(succeeded))
		}
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
	pollAt                 time.Time     // when the lag poll behind the gauges succeeded
	lag, age               float64
	lagPresent, agePresent bool
	committed              float64 // the committed offsets, summed, at that poll
	consumed               float64
	produced               int
}

func (s lagSample) String() string {
	return fmt.Sprintf("%5.1fs: lag %6.0f messages, oldest uncommitted %5.1fs, consumed %6.0f, produced %6d",
		s.since.Seconds(), s.lag, s.age, s.consumed, s.produced)
}

func sampleLag(t *testing.T, reg *prometheus.Registry, m *ingest.Metrics, prod *load, since time.Time) lagSample {
	t.Helper()
	sm := lagSample{since: time.Since(since), consumed: value(m.Consumed), produced: prod.produced()}
	// The gauges of one poll: read again when a poll ended while reading.
	for {
		at := value(m.LagPollSuccess)
		sm.lag, sm.lagPresent = metricOf(t, reg, "errtrail_ingest_consumer_lag_messages")
		sm.age, sm.agePresent = metricOf(t, reg, "errtrail_ingest_consumer_lag_seconds")
		sm.committed, _ = metricOf(t, reg, "errtrail_ingest_consumer_committed_offsets")
		if value(m.LagPollSuccess) == at {
			sm.pollAt = time.UnixMilli(int64(at*1000 + 0.5))
			return sm
		}
	}
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
	started time.Time
	done    chan struct{}
	wg      sync.WaitGroup
	n       atomic.Int64

	mu   sync.Mutex
	acks []loadAck
}

type loadAck struct {
	sent, at time.Time // when the chunk's write began, when Kafka acknowledged it
	n        int       // acknowledged in all, this chunk included
	size     int
}

func startLoad(t *testing.T, s *stack, perSecond int) *load {
	l := &load{started: time.Now(), done: make(chan struct{})}
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
			sent := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := w.WriteMessages(ctx, msgs...)
			cancel()
			if err != nil {
				t.Logf("load: %v (the chunk is sent again)", err)
				continue
			}
			l.n.Add(int64(chunk))
			l.mu.Lock()
			l.acks = append(l.acks, loadAck{sent: sent, at: time.Now(), n: from + chunk, size: chunk})
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *load) produced() int { return int(l.n.Load()) }

// sentAfter returns how many events of the chunks whose write began after
// from Kafka had acknowledged by by: they reached the log after from.
func (l *load) sentAfter(from, by time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.acks {
		if a.sent.After(from) && !a.at.After(by) {
			n += a.size
		}
	}
	return n
}

// firstSentAfter returns when Kafka acknowledged the first chunk whose
// write began after from (zero if none): its events reached the log after
// from, and their timestamps are no later than that acknowledgement.
func (l *load) firstSentAfter(from time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.acks {
		if a.sent.After(from) {
			return a.at
		}
	}
	return time.Time{}
}

// stop ends the load and returns how many events were acknowledged.
func (l *load) stop() int {
	close(l.done)
	l.wg.Wait()
	return l.produced()
}
