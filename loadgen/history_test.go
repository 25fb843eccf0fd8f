package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/city"
)

// historyScenario has an incident of every kind switched on from time 0, a
// burst at 0, a runaway from 0, poison, a faster second phase and a gateway
// that only starts later: none of it may reach the history. Its limits
// (one token per 1000 minutes) reject every call but each stream's first,
// and its steady callers do not retry, so their error replies count their
// calls: the history's counts per minute are the callers' rates.
const historyScenario = `
name: history
seed: 5
phases:
  - {name: baseline, duration: 2s, rate_factor: 2}
  - {name: busy, duration: 1s, rate_factor: 5}
agents:
  - {name: tight, shape: a2a-http, limit: {rate_per_min: 0.001, burst: 1}}
  - {name: grpc-tight, shape: a2a-grpc, limit: {rate_per_min: 0.001, burst: 1}}
  - {name: legacy, shape: bare500, limit: {rate_per_min: 0.001, burst: 1}}
callers:
  - {name: steady, count: 2, rate_per_min: 30, behaviour: no-retry}
  - {name: loop, rate_per_min: 10, behaviour: runaway, runaway: {factor: 50}, retry: {policy: none}}
  - {name: impatient, rate_per_min: 5, behaviour: ignores-retry-after, agents: [tight]}
bursts: [{at: 0s, caller: steady-1, agent: tight, count: 500}]
faults:
  - {kind: overload, agent: tight}
  - {kind: bare500, agent: tight, share: 1}
  - {kind: gateway, agent: tight, gateway: gw-1, rewrite_to: 502, strip_body: true}
  - {kind: limit, agent: grpc-tight, limit: {rate_per_min: 100000, burst: 1000, policy: fault-policy}}
  - {kind: gateway, agent: legacy, gateway: gw-late, from: 1s}
poison: {share: 0.5}
`

// Baseline rates per minute in the history (first phase: rate_factor 2).
const (
	steadyPerMin = 30 * 2 // per steady caller and agent
	loopPerMin   = 10 * 2 // the runaway's own rate, per agent
)

// histEvent is what the tests read back of a published event.
type histEvent struct {
	EventID    string `json:"event_id"`
	ObservedAt int64  `json:"observed_at"`
	Source     struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	} `json:"source"`
	Agent   string `json:"agent"`
	Caller  string `json:"caller"`
	Attempt int    `json:"attempt"`
	Request struct {
		HTTPRequestID string `json:"http_request_id"`
		JSONRPCID     string `json:"jsonrpc_id"`
		MessageID     string `json:"message_id"`
	} `json:"request"`
	Reply struct {
		HTTPStatus int               `json:"http_status"`
		Headers    map[string]string `json:"headers"`
		GRPC       *struct {
			Status int `json:"status"`
		} `json:"grpc"`
	} `json:"reply"`
}

// splitHistory decodes the messages of a run and sorts them into the
// history's (observed before to) and the scenario's; poison counts apart.
func splitHistory(t *testing.T, msgs [][]byte, to int64) (hist, scen []histEvent, poison int) {
	t.Helper()
	for _, m := range msgs {
		var e histEvent
		if json.Unmarshal(m, &e) != nil || e.EventID == "" || strings.Contains(e.EventID, ":poison-") {
			poison++
			continue
		}
		if e.ObservedAt < to {
			hist = append(hist, e)
		} else {
			scen = append(scen, e)
		}
	}
	return hist, scen, poison
}

func loadHistoryScenario(t *testing.T) *Scenario {
	t.Helper()
	sc, err := ParseScenario([]byte(historyScenario), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// checkHistoryReport asserts that the report counts exactly the messages
// produced: in all, and the history's apart.
func checkHistoryReport(t *testing.T, r *Report, msgs [][]byte, hist []histEvent, poison int) {
	t.Helper()
	h := r.History
	if h == nil {
		t.Fatal("report has no history")
	}
	if r.Produced != int64(len(msgs)) || r.Poison != int64(poison) || r.Failed != 0 {
		t.Errorf("report: produced %d, poison %d, failed %d; the writer got %d messages, %d poison",
			r.Produced, r.Poison, r.Failed, len(msgs), poison)
	}
	if h.Produced != int64(len(hist)) || h.Valid != h.Produced || h.Failed != 0 {
		t.Errorf("history report: produced %d, valid %d, failed %d; the writer got %d history messages",
			h.Produced, h.Valid, h.Failed, len(hist))
	}
	var hash uint64
	by := map[Count]int64{}
	for _, e := range hist {
		hash += city.CH64([]byte(e.EventID))
		by[Count{Agent: e.Agent, Caller: e.Caller, Source: e.Source.Kind}]++
	}
	if hash != h.EventIDHash {
		t.Errorf("history event_id hash %d; report %d", hash, h.EventIDHash)
	}
	var sum int64
	for _, c := range h.By {
		sum += c.N
		by[Count{Agent: c.Agent, Caller: c.Caller, Source: c.Source}] -= c.N
	}
	for k, n := range by {
		if n != 0 {
			t.Errorf("history %s/%s/%s: %d more messages than the report counts", k.Agent, k.Caller, k.Source, n)
		}
	}
	var all int64
	for _, c := range r.By {
		all += c.N
	}
	if sum != h.Valid || all != r.Valid || r.Valid+r.Poison != r.Produced {
		t.Errorf("counts by key: history %d of %d, all %d of %d", sum, h.Valid, all, r.Valid)
	}
	if r.Requests <= h.Requests || r.AdmittedTotal < h.AdmittedTotal || h.Requests == 0 {
		t.Errorf("calls: run %d (admitted %d), history %d (admitted %d); the totals include the history",
			r.Requests, r.AdmittedTotal, h.Requests, h.AdmittedTotal)
	}
}

// checkUniqueIDs asserts that no event_id repeats and that no request id
// of the history is reused by the scenario (a gateway's view shares its
// agent view's request ids, so those repeat within a part, never across).
func checkUniqueIDs(t *testing.T, hist, scen []histEvent) {
	t.Helper()
	ids := map[string]bool{}
	for _, part := range [][]histEvent{hist, scen} {
		for _, e := range part {
			if ids[e.EventID] {
				t.Fatalf("event_id %s twice", e.EventID)
			}
			ids[e.EventID] = true
		}
	}
	seen := map[string]bool{}
	for _, e := range hist {
		seen["m"+e.Request.MessageID], seen["h"+e.Request.HTTPRequestID], seen["j"+e.Request.JSONRPCID] = true, true, true
	}
	for _, e := range scen {
		for _, k := range []string{"m" + e.Request.MessageID, "h" + e.Request.HTTPRequestID, "j" + e.Request.JSONRPCID} {
			if seen[k] {
				t.Fatalf("scenario event %s reuses the history's request id %s", e.EventID, k[1:])
			}
		}
	}
}

// checkBaseline asserts what the history of historyScenario holds and what
// it must not: speed is how many times faster than observed_at its
// scenario time ran (the real clock's Speed; 1 for the scenario clock).
func checkBaseline(t *testing.T, r *Report, hist []histEvent, speed float64) {
	t.Helper()
	h := r.History
	span := time.Duration(h.ToMS-h.FromMS) * time.Millisecond
	for _, e := range hist {
		if e.ObservedAt < h.FromMS || e.ObservedAt >= h.ToMS {
			t.Fatalf("history event observed at %d, outside [%d, %d)", e.ObservedAt, h.FromMS, h.ToMS)
		}
	}
	if h.FirstObservedMS-h.FromMS > 5000 || h.ToMS-h.LastObservedMS > 5000 {
		t.Errorf("history observed from %d to %d; want it to fill [%d, %d) (no gap at either end)",
			h.FirstObservedMS, h.LastObservedMS, h.FromMS, h.ToMS)
	}
	if want := span.Seconds() * speed; math.Abs(h.ScenarioSec-want) > 0.05*want+0.1 {
		t.Errorf("history simulated %.1f s; want %.1f (%v of observed_at at speed %v)", h.ScenarioSec, want, span, speed)
	}
	for _, c := range h.By {
		if c.Kind == KindOverload {
			t.Errorf("history has %d overload replies for %s/%s: overload is a fault", c.N, c.Agent, c.Caller)
		}
		if c.Agent == "tight" && c.Kind != KindQuota {
			t.Errorf("history has %d %s replies of tight: its overload and bare500 faults must be off", c.N, c.Kind)
		}
	}

	// Counts: per caller and agent, the first phase's rate × speed per minute.
	n := map[[2]string]int{} // caller, agent; agents' views only
	perMin := map[int64]int{}
	agentView := map[string]histEvent{} // by http_request_id
	gatewayViews := 0
	for _, e := range hist {
		if e.Source.Kind == "gateway" {
			gatewayViews++
			continue
		}
		agentView[e.Request.HTTPRequestID] = e
		n[[2]string{e.Caller, e.Agent}]++
		if strings.HasPrefix(e.Caller, "steady-") {
			perMin[(e.ObservedAt-h.FromMS)/60000]++
		}
	}
	minutes := span.Minutes()
	near := func(what string, got int, perMinute float64) {
		t.Helper()
		// Poisson arrivals: allow 4 standard deviations (at least 5 %).
		want := perMinute * speed * minutes
		if tol := max(0.05*want, 4*math.Sqrt(want)); math.Abs(float64(got)-want) > tol {
			t.Errorf("%s: %d replies in the history; want %.0f ± %.0f (%.0f/min × speed %v × %.1f min)",
				what, got, want, tol, perMinute, speed, minutes)
		}
	}
	for _, a := range []string{"tight", "grpc-tight", "legacy"} {
		near("steady-1 → "+a+" (no burst)", n[[2]string{"steady-1", a}], steadyPerMin)
		near("steady-2 → "+a, n[[2]string{"steady-2", a}], steadyPerMin)
		near("loop → "+a+" (runaway off)", n[[2]string{"loop", a}], loopPerMin)
	}
	want := float64(2*3*steadyPerMin) * speed
	for m := int64(0); m < int64(minutes); m++ {
		if got := float64(perMin[m]); got < 0.75*want || got > 1.25*want {
			t.Errorf("minute %d of the history: %.0f replies of the steady callers; want %.0f ± 25%%", m, got, want)
		}
	}

	// The gateway in front of tight from time 0 is there and passes every
	// reply on unchanged; the one that starts later is not there.
	if gatewayViews == 0 {
		t.Error("history has no gateway views; gw-1 is in front of tight from time 0")
	}
	for _, e := range hist {
		if e.Source.Kind != "gateway" {
			if e.Agent == "tight" && e.Reply.HTTPStatus != 429 {
				t.Fatalf("tight answered %d in the history; want only 429 (no overload, no bare 500)", e.Reply.HTTPStatus)
			}
			if e.Agent == "legacy" && e.Reply.HTTPStatus != 500 {
				t.Fatalf("legacy (shape bare500) answered %d in the history; want 500", e.Reply.HTTPStatus)
			}
			if e.Agent == "grpc-tight" && (e.Reply.GRPC == nil || e.Reply.GRPC.Status != 8) {
				t.Fatalf("grpc-tight answered %+v in the history; want RESOURCE_EXHAUSTED under its own limit", e.Reply.GRPC)
			}
			continue
		}
		a, ok := agentView[e.Request.HTTPRequestID]
		switch {
		case e.Source.ID != "gw-1":
			t.Fatalf("history has a view of gateway %s; only gw-1 is there at time 0", e.Source.ID)
		case !ok || a.Agent != "tight":
			t.Fatalf("gateway view %s has no agent view of tight", e.EventID)
		case e.Reply.HTTPStatus != a.Reply.HTTPStatus || e.Reply.Headers["Content-Type"] != a.Reply.Headers["Content-Type"]:
			t.Fatalf("gw-1 passed %d %q on as %d %q in the history; want the reply unchanged",
				a.Reply.HTTPStatus, a.Reply.Headers["Content-Type"], e.Reply.HTTPStatus, e.Reply.Headers["Content-Type"])
		case e.Reply.Headers["Via"] != "1.1 gw-1":
			t.Fatalf("gateway view without its Via header: %v", e.Reply.Headers)
		}
	}

	// impatient-caller keeps ignoring Retry-After: that is the caller.
	byMsg := map[string][]histEvent{}
	for _, e := range hist {
		if e.Caller == "impatient" && e.Source.Kind == "agent" {
			byMsg[e.Request.MessageID] = append(byMsg[e.Request.MessageID], e)
		}
	}
	early := 0
	for _, es := range byMsg {
		for i := 1; i < len(es); i++ {
			if es[i].Attempt == es[i-1].Attempt+1 && es[i].ObservedAt-es[i-1].ObservedAt < 1000 {
				early++
			}
		}
	}
	if early < 20 {
		t.Errorf("impatient caller retried early %d times in the history; it ignores Retry-After, so want many", early)
	}
}

// TestHistoryFakeProducerRealClock plays a 20-minute history and the
// scenario into the Output writer standing in for Kafka (no broker).
func TestHistoryFakeProducerRealClock(t *testing.T) {
	sc := loadHistoryScenario(t)
	before := time.Now()
	var onStart []time.Time
	r, msgs := runToBuffer(t, sc, Config{Speed: 1, History: 20 * time.Minute,
		OnStart: func(at time.Time) { onStart = append(onStart, at) }})
	h := r.History
	if h == nil {
		t.Fatal("no history in the report")
	}
	if len(onStart) != 1 || !onStart[0].Equal(r.ScenarioStarted) {
		t.Errorf("OnStart called with %v; want once, with the scenario's start %v", onStart, r.ScenarioStarted)
	}
	hist, scen, poison := splitHistory(t, msgs, h.ToMS)
	checkHistoryReport(t, r, msgs, hist, poison)
	checkUniqueIDs(t, hist, scen)
	checkBaseline(t, r, hist, 1)

	// The history ends where the real-time scenario starts, which is when
	// the history was published, and begins 20 minutes before Run began.
	if from := before.Add(-20 * time.Minute).UnixMilli(); h.FromMS < from || h.FromMS > from+1000 {
		t.Errorf("history from %d; want Run's start − 20 min ≈ %d", h.FromMS, from)
	}
	if r.ScenarioStarted.UnixMilli() != h.ToMS || r.ScenarioStarted.Before(r.Started) {
		t.Errorf("scenario started %v (history to %d, run started %v)", r.ScenarioStarted, h.ToMS, r.Started)
	}
	// Published at full speed, not paced: it took less than the 20 minutes
	// of time it spans (paced, it could not take less; the report's figure
	// is the same interval).
	if got := r.ScenarioStarted.Sub(r.Started).Seconds(); math.Abs(got-h.ElapsedSec) > 0.01 || got >= (20*time.Minute).Seconds() {
		t.Errorf("history took %.2f s (report %.2f s); want it published at full speed", got, h.ElapsedSec)
	}
	// The scenario itself still plays in real time, with its incidents: its
	// events are stamped on the scenario's schedule from its start, and the
	// run cannot end before the last of them was due. (A busy machine can
	// only delay the end, so no upper bound on the wall clock.)
	checkScenarioPace(t, r, scen, 3*time.Second)
	var overload int
	for _, e := range scen {
		if e.Agent == "tight" && e.Source.Kind == "agent" && e.Reply.HTTPStatus == 503 {
			overload++
		}
	}
	if overload < 500 || poison == 0 {
		t.Errorf("scenario: %d overload replies of tight (burst of 500 at 0), %d poison; its faults must still play", overload, poison)
	}
}

// TestHistoryFakeProducerSpeed: at speed 4 an hour of observed_at holds four
// hours of baseline, as the scenario's windows shrink by four.
func TestHistoryFakeProducerSpeed(t *testing.T) {
	sc := loadHistoryScenario(t)
	r, msgs := runToBuffer(t, sc, Config{Speed: 4, History: 5 * time.Minute})
	hist, scen, poison := splitHistory(t, msgs, r.History.ToMS)
	checkHistoryReport(t, r, msgs, hist, poison)
	checkUniqueIDs(t, hist, scen)
	checkBaseline(t, r, hist, 4)
	checkScenarioPace(t, r, scen, 750*time.Millisecond) // 3 s of scenario at speed 4
}

// checkScenarioPace: the scenario's events are stamped within played (its
// length over the speed) from its start, the last of them near its end, and
// the run did not finish before that end was due. Order and stamps, not the
// wall clock's durations: those only grow on a loaded machine.
func checkScenarioPace(t *testing.T, r *Report, scen []histEvent, played time.Duration) {
	t.Helper()
	start := r.ScenarioStarted.UnixMilli()
	// A gateway's copy of a reply is stamped a few milliseconds after the
	// agent's: the slack for the last replies.
	const slack = 50
	var last int64
	for _, e := range scen {
		if e.ObservedAt < start || e.ObservedAt > start+played.Milliseconds()+slack {
			t.Fatalf("scenario event observed at +%d ms; want within [0, %d] ms of the scenario's start", e.ObservedAt-start, played.Milliseconds()+slack)
		}
		last = max(last, e.ObservedAt)
	}
	if len(scen) == 0 || last-start < played.Milliseconds()*8/10 {
		t.Errorf("%d scenario events, the last at +%d ms; want events until near +%d ms", len(scen), last-start, played.Milliseconds())
	}
	if el := r.Finished.Sub(r.ScenarioStarted); el < played-50*time.Millisecond {
		t.Errorf("the run ended %v after the scenario started, before its %v were due: not paced", el, played)
	}
}

// TestHistoryFakeProducerScenarioClock: with the scenario clock the history
// is the 10 minutes of scenario time before Start, whatever the speed, and
// the scenario's events are at Start or later.
func TestHistoryFakeProducerScenarioClock(t *testing.T) {
	sc := loadHistoryScenario(t)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r, msgs := runToBuffer(t, sc, Config{Clock: "scenario", Start: start, History: 10 * time.Minute})
	h := r.History
	if h.FromMS != start.Add(-10*time.Minute).UnixMilli() || h.ToMS != start.UnixMilli() {
		t.Fatalf("history [%d, %d); want [Start − 10 min, Start) = [%d, %d)", h.FromMS, h.ToMS,
			start.Add(-10*time.Minute).UnixMilli(), start.UnixMilli())
	}
	hist, scen, poison := splitHistory(t, msgs, h.ToMS)
	checkHistoryReport(t, r, msgs, hist, poison)
	checkUniqueIDs(t, hist, scen)
	checkBaseline(t, r, hist, 1)
	if len(scen) == 0 || r.FirstObservedMS != h.FirstObservedMS {
		t.Errorf("scenario events %d; run first observed %d, history's %d", len(scen), r.FirstObservedMS, h.FirstObservedMS)
	}
	for _, e := range scen {
		if e.ObservedAt < start.UnixMilli() || e.ObservedAt >= start.Add(sc.Total()+time.Second).UnixMilli() {
			t.Fatalf("scenario event observed at %d; want within the scenario's time after Start", e.ObservedAt)
		}
	}
}

// TestHistoryRefused: a history the run cannot place is an error before
// anything is written.
func TestHistoryRefused(t *testing.T) {
	sc := loadHistoryScenario(t)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Speed: 0, History: time.Hour}, "paced run"},
		{Config{Speed: 0, Clock: "real", Loop: true, MaxEvents: 10, History: time.Hour}, "paced run"},
		{Config{Speed: 1, History: -time.Hour}, "negative"},
	} {
		var w strings.Builder
		tc.cfg.Scenario, tc.cfg.Output = sc, &w
		r, err := Run(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || r != nil || w.Len() != 0 {
			t.Errorf("Run(speed %v, clock %q, history %v): report %v, %d bytes written, error %v; want an error saying %q",
				tc.cfg.Speed, tc.cfg.Clock, tc.cfg.History, r, w.Len(), err, tc.want)
		}
	}
}

// TestHistoryFakeProducerBounds: MaxEvents counts the history's messages,
// and a run cut inside its history plays no scenario (and never calls
// OnStart).
func TestHistoryFakeProducerBounds(t *testing.T) {
	sc := loadHistoryScenario(t)
	called := false
	r, msgs := runToBuffer(t, sc, Config{Speed: 1, History: time.Hour, MaxEvents: 1000,
		OnStart: func(time.Time) { called = true }})
	if called {
		t.Error("OnStart called, though the run ended inside its history")
	}
	if r.Produced != 1000 || len(msgs) != 1000 || r.History.Produced != 1000 {
		t.Fatalf("max-events 1000 inside the history: produced %d (%d messages), history %d",
			r.Produced, len(msgs), r.History.Produced)
	}
	if r.ScenarioSec != 0 {
		t.Errorf("the scenario played %.1f s after a history cut by MaxEvents", r.ScenarioSec)
	}
}

// TestHistoryFakeProducerAfterHistory: the hook is called once, between the
// history and the scenario, with the run's id and the history messages
// acknowledged so far; afterwards the history catches up with the wall
// clock, publishing the time the hook took, so it still ends where the
// scenario starts, after the hook returned. An error from the hook ends the
// run before the scenario.
func TestHistoryFakeProducerAfterHistory(t *testing.T) {
	sc := loadHistoryScenario(t)
	var buf bytes.Buffer
	var (
		calls                  int
		runID                  string
		acked                  int64
		called, returned, strt time.Time
	)
	// A writer that takes its time (as Kafka does under load) makes the
	// history reach the run's start behind the wall clock, as in a real run.
	cfg := Config{Scenario: sc, Output: slowWriter{&buf, 300 * time.Millisecond}, Speed: 1, History: 10 * time.Minute,
		AfterHistory: func(ctx context.Context, id string, n int64) error {
			calls++
			runID, acked, called = id, n, time.Now()
			// A consumer storing what was published, for longer than the
			// history may fall behind the wall clock while it publishes.
			time.Sleep(historyMaxBehind + 3*time.Second)
			returned = time.Now()
			return nil
		},
		OnStart: func(at time.Time) { strt = at }}
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || runID != r.RunID {
		t.Fatalf("AfterHistory called %d times with run %q; want once with %q", calls, runID, r.RunID)
	}
	h := r.History
	if h == nil || acked == 0 || acked > h.Produced {
		t.Fatalf("AfterHistory told %d acknowledged; history report %+v", acked, h)
	}
	if strt.Before(returned) || !strt.Equal(r.ScenarioStarted) || h.ToMS != r.ScenarioStarted.UnixMilli() {
		t.Errorf("scenario started %v, hook returned %v, history to %d: the scenario must start after the hook, where the history ends",
			strt, returned, h.ToMS)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	hist, _, poison := splitHistory(t, lines, h.ToMS)
	checkHistoryReport(t, r, lines, hist, poison)
	// The history covers the hook's wait (its callers' baseline, about six
	// replies a second here), published after it, and the wait is not
	// taken for Kafka falling behind.
	during := 0
	for _, e := range hist {
		if at := time.UnixMilli(e.ObservedAt); !at.Before(called) && at.Before(returned) {
			during++
		}
	}
	if during == 0 || int64(len(hist)) != h.Produced || h.Produced == acked {
		t.Errorf("%d history events observed during the hook's wait; %d acknowledged before it, %d in all (report %d): the history must catch up after it",
			during, acked, len(hist), h.Produced)
	}

	// A hook that fails ends the run: no scenario, its error returned.
	buf.Reset()
	strt = time.Time{}
	cfg.AfterHistory = func(context.Context, string, int64) error { return errors.New("not stored") }
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "not stored") {
		t.Errorf("Run with a failing AfterHistory = %v; want its error", err)
	}
	if !strt.IsZero() {
		t.Errorf("the scenario started at %v after AfterHistory failed", strt)
	}
}

// slowWriter is a writer that waits before each write.
type slowWriter struct {
	w     io.Writer
	delay time.Duration
}

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.w.Write(p)
}
