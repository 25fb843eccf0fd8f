package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A history (Config.History) is the scenario's baseline published at full
// speed before the scenario plays, so that what the alerter compares with
// its 1-hour baseline has an hour behind it on the first evaluation.
//
// What the history plays is Scenario.baseline: the scenario as it stands at
// its time 0 with every incident taken out. Its observed_at run from
// History before Run's start up to the moment the scenario starts, without a
// gap and without overlapping it; see playHistory for the clocks.

// openEnded is the length of a history that ends when it catches up with
// the wall clock rather than at a set time.
const openEnded = time.Duration(1 << 62)

// historyStep is the scenario time one step of the history plays.
const historyStep = time.Second

// historyMaxBehind is how much further behind the wall clock the history
// may fall while it catches up (real clock) before the run gives up: it
// only falls further behind when Kafka takes the baseline more slowly than
// the scenario produces it.
const historyMaxBehind = 10 * time.Second

// checkHistory refuses a history the run cannot place in time.
func checkHistory(cfg *Config) error {
	switch {
	case cfg.History < 0:
		return fmt.Errorf("loadgen: history %v: must not be negative", cfg.History)
	case cfg.History > 0 && cfg.Clock == "real" && cfg.Speed <= 0:
		return errors.New("loadgen: a history needs a paced run (speed > 0) or the scenario clock: " +
			"unpaced, the real clock stamps each event with the time it is sent, so the history has no rate to keep")
	}
	return nil
}

// baseline returns the scenario as a history plays it, lasting total:
//
//   - callers at their rate of the first phase (rate_per_min × its
//     rate_factor; scale still applies);
//   - runaway callers at their own rate: the runaway never starts;
//   - retry policies as they are: a caller that ignores Retry-After or
//     rotates its ids always did (the retry-storm verdicts have no
//     baseline, so they are already set when the scenario starts);
//   - agents with their own limits and shapes (a bare500 agent still answers
//     bare 500s: that is the agent, not an incident);
//   - no overload, limit or bare500 fault, whatever their windows;
//   - a gateway fault active at time 0 becomes the same gateway passing
//     every reply on unchanged, so each error is still seen twice (counts
//     per caller, which include both views, keep their level) but no pair
//     is mangled; a gateway fault that starts later is absent;
//   - no bursts and no poison (dead letters are counted by ingestion time,
//     where an hour of them would read as one burst).
func (sc *Scenario) baseline(total time.Duration) *Scenario {
	b := *sc
	b.Duration = total
	factor := 1.0
	if len(sc.Phases) > 0 {
		factor = sc.Phases[0].RateFactor
	}
	b.Phases, b.Bursts = nil, nil
	b.Poison = Poison{Kinds: sc.Poison.Kinds, TooLargeBytes: sc.Poison.TooLargeBytes}
	b.Callers = make([]Caller, len(sc.Callers))
	for i, c := range sc.Callers {
		c.RatePerMin *= factor
		c.Runaway = Runaway{}
		b.Callers[i] = c
	}
	b.Faults = nil
	for _, f := range sc.Faults {
		if f.Kind == FaultGateway && f.active(0) {
			f.From, f.To, f.passThrough = 0, 0, true
			b.Faults = append(b.Faults, f)
		}
	}
	return &b
}

// historyRun is a played history.
type historyRun struct {
	sim           *sim          // the scenario continues its id streams
	from, to      time.Time     // its observed_at are in [from, to)
	scenarioStart time.Time     // wall time at which the scenario starts
	simulated     time.Duration // scenario time it covered
	elapsed       time.Duration // wall time it took, until the scenario's start
}

// playHistory publishes cfg.History of sc's baseline, unpaced, and returns
// it with the time at which the scenario starts; the error is ctx's, or
// says that the history could not catch up with the wall clock.
//
// Real clock: the history's scenario time 0 is History before Run's start,
// and its scenario time runs Speed× faster than observed_at, as the
// scenario's does (at Speed 12 an hour of history is 12 hours of baseline
// behaviour, 12× the messages a minute). It plays until it reaches the wall
// clock, which moves while it publishes, waits until Kafka has acknowledged
// it (so that the scenario's first messages do not queue behind it), catches
// up again, and the scenario's time 0 is then: no gap, no overlap.
//
// Scenario clock: the history covers [Start − History, Start) of scenario
// time, which is observed_at time at every speed; the calls stop
// gatewayLagMax before Start so that no gateway view lands after it.
func (d *driver) playHistory(ctx context.Context, sc *Scenario, runID string, anchor time.Time,
	after func(ctx context.Context, runID string, acknowledged int64) error) (*historyRun, error) {
	cfg := d.cfg
	h := &historyRun{}
	var reach func(now time.Time) time.Duration // scenario time the history may play up to at now
	if cfg.Clock == "scenario" {
		h.from, h.to = anchor.Add(-cfg.History), anchor
		span := cfg.History - gatewayLagMax
		h.sim = newSimStream(sc.baseline(max(span, 0)), runID, cfg.Scale, historyStream)
		h.sim.clock = func(t time.Duration) time.Time { return h.from.Add(t) }
		reach = func(time.Time) time.Duration { return span }
	} else {
		speed := cfg.Speed
		h.from = d.started.Add(-cfg.History)
		h.sim = newSimStream(sc.baseline(openEnded), runID, cfg.Scale, historyStream)
		h.sim.clock = func(t time.Duration) time.Time { return h.from.Add(time.Duration(float64(t) / speed)) }
		reach = func(now time.Time) time.Duration { return time.Duration(float64(now.Sub(h.from)) * speed) }
	}
	hs := h.sim
	emit := d.emitter(hs, true)
	var at time.Time // observed_at the history has reached
	where := func() string { return fmt.Sprintf("history %9s before now", time.Since(at).Round(time.Second)) }
	behind0 := time.Duration(-1)
	catchUp := func() error {
		for !d.stopped {
			if err := ctx.Err(); err != nil {
				return err
			}
			now := time.Now()
			next, lim := hs.nextAt(), reach(now)
			if next < 0 || next >= lim {
				return nil
			}
			at = hs.clock(next)
			if cfg.Clock == "real" && !at.Before(d.started) {
				// Past the hour asked for: only the time spent publishing is left.
				behind := now.Sub(at)
				if behind0 < 0 {
					behind0 = behind
				}
				if behind > behind0+historyMaxBehind {
					return fmt.Errorf("loadgen: the history fell %v behind the wall clock: Kafka takes its baseline more slowly than the scenario produces it",
						behind.Round(time.Second))
				}
			}
			hs.advance(min(next+historyStep, lim-1), emit)
			if len(d.pending) >= cfg.BatchSize {
				d.flush(ctx)
			}
			d.progress(now, where)
		}
		return nil
	}
	// settle publishes up to the wall clock and waits for Kafka's
	// acknowledgements, until what a wait leaves behind is a few messages.
	settle := func() (err error) {
		for round := 0; err == nil; round++ {
			if err = catchUp(); err != nil {
				break
			}
			d.flush(ctx)
			waited := time.Now()
			for d.tl.inflight.Load() > 0 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			if time.Since(waited) < 50*time.Millisecond || round == 9 {
				// What the wait left behind is a few messages: publish them and go.
				err = catchUp()
				d.flush(ctx)
				break
			}
		}
		return err
	}
	err := settle()
	if err == nil && after != nil && !d.stopped {
		for d.tl.inflight.Load() > 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		d.tl.mu.Lock()
		acked := d.tl.hist.produced
		d.tl.mu.Unlock()
		if err = after(ctx, runID, acked); err == nil {
			// The hook took its time; the history now publishes it. That
			// gap is the hook's, not Kafka falling behind: measured afresh.
			behind0 = -1
			err = settle()
		}
	}
	h.scenarioStart = time.Now()
	if cfg.Clock == "real" {
		// A gateway view lands up to gatewayLagMax after its agent's reply:
		// the scenario starts after the history's last millisecond.
		if last := time.UnixMilli(d.lastMS + 1); h.scenarioStart.Before(last) {
			time.Sleep(time.Until(last))
			h.scenarioStart = time.Now()
		}
		h.to = h.scenarioStart
		h.simulated = time.Duration(float64(h.to.Sub(h.from)) * cfg.Speed)
	} else {
		h.simulated = max(cfg.History-gatewayLagMax, 0)
	}
	h.elapsed = h.scenarioStart.Sub(d.started)
	return h, err
}

// HistoryReport is what the history (Config.History) produced. Report's
// totals (Produced, Valid, By, EventIDHash, Requests, Admitted...) include
// these messages; the history has no poison, so Produced == Valid.
type HistoryReport struct {
	// Every history event's observed_at is in [From, To) (Unix ms); the
	// scenario's are at To or later.
	FromMS int64 `json:"from"`
	ToMS   int64 `json:"to"`
	// Wall-clock range of the observed_at values written (Unix ms).
	FirstObservedMS int64 `json:"first_observed_at"`
	LastObservedMS  int64 `json:"last_observed_at"`

	ScenarioSec float64 `json:"scenario_s"` // baseline time simulated: (To − From) × Speed with the real clock
	ElapsedSec  float64 `json:"elapsed_s"`  // from Run's start to the scenario's start

	Produced      int64   `json:"produced"` // acknowledged messages
	Valid         int64   `json:"valid"`
	Failed        int64   `json:"failed"`
	Bytes         int64   `json:"bytes"`
	Requests      int64   `json:"requests"`
	AdmittedTotal int64   `json:"admitted"`
	By            []Count `json:"by"`
	EventIDHash   uint64  `json:"event_id_cityhash64_sum"`
	EventsPerSec  float64 `json:"events_per_s"` // Produced / ElapsedSec
}

func (h *historyRun) report(c *counts) *HistoryReport {
	r := &HistoryReport{FromMS: h.from.UnixMilli(), ToMS: h.to.UnixMilli(),
		FirstObservedMS: c.first, LastObservedMS: c.last,
		ScenarioSec: h.simulated.Seconds(), ElapsedSec: h.elapsed.Seconds(),
		Produced: c.produced, Valid: c.valid, Failed: c.failed, Bytes: c.bytes,
		Requests: h.sim.requests, By: c.sortedCounts(), EventIDHash: c.hash}
	for _, n := range h.sim.admitted {
		r.AdmittedTotal += n
	}
	if r.ElapsedSec > 0 {
		r.EventsPerSec = float64(r.Produced) / r.ElapsedSec
	}
	return r
}
