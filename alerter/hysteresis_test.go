package alerter

import (
	"fmt"
	"testing"
)

// TestOverloadHysteresis: the overload verdict fires on the short window,
// holds while overload replies keep coming (a fault that comes and goes),
// and clears once the clear window is quiet.
func TestOverloadHysteresis(t *testing.T) {
	cfg := DefaultConfig()
	overloaded := func(prev *Verdicts, recent, clear int64) *Verdicts {
		in := &Input{Now: now}
		for _, c := range callers(4) {
			history(in, "research", c, q(1))
			in.Window = append(in.Window, WindowCount{Agent: "research", Caller: c,
				Total: recent + 5, Overload: recent, OverloadRecent: recent, OverloadClear: clear})
		}
		return Evaluate(&cfg, in, prev)
	}
	state := func(v *Verdicts) bool { return agent(t, v, "research").Overloaded }

	fired := overloaded(nil, 10, 8) // 40 in 30 s across 4 callers
	if !state(fired) {
		t.Fatal("not overloaded at 40 overload replies in 30 s across 4 callers")
	}
	// Below the firing floor (0.2/s over 30 s = 6) but still 0.1/s or more
	// over the 15 s clear window: a firing verdict holds, a new one does not
	// start.
	if v := overloaded(fired, 1, 1); !state(v) {
		t.Error("a firing overload cleared while 4 overload replies in 15 s kept coming (want it to hold)")
	}
	if v := overloaded(nil, 1, 1); state(v) {
		t.Error("overloaded from 4 replies in 30 s without a previous verdict (want the firing floor to apply)")
	}
	// Quiet clear window: it clears at once, whatever came before, even
	// while the longer firing window still holds the fault's last replies
	// (and it does not fire again from them).
	if v := overloaded(fired, 1, 0); state(v) {
		t.Error("still overloaded with no overload reply in the clear window")
	}
	if v := overloaded(fired, 10, 0); state(v) {
		t.Error("still overloaded: 40 overload replies in the last 30 s but none in the last 15 s (the fault ended)")
	}
	if v := overloaded(nil, 10, 0); state(v) {
		t.Error("fired from replies that all lie before the clear window")
	}
	// The hold is per agent: another agent's page does not hold this one.
	other := &Verdicts{Agents: []AgentVerdict{{Agent: "billing", Overloaded: true}}}
	if v := overloaded(other, 1, 1); state(v) {
		t.Error("held by another agent's verdict")
	}
}

// TestAgentCap: past TopAgents, agents with a verdict stay, then the
// busiest; the rest are summed into OtherAgent, whose verdicts are all false.
func TestAgentCap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TopAgents = 5
	in := &Input{Now: now}
	for i := 0; i < 20; i++ {
		a := fmt.Sprintf("agent-%02d", i)
		history(in, a, "c1", q(1))
		current(in, a, "c1", q(int64(i+1)))
	}
	// Two quiet agents with a verdict: untyped replies.
	for _, a := range []string{"quiet-bare-1", "quiet-bare-2"} {
		current(in, a, "c1", bare500(25))
	}
	v := Evaluate(&cfg, in, nil)
	if v.AgentsSeen != 22 || len(v.Agents) != 5 || v.AgentsCapped != 18 {
		t.Fatalf("seen %d, exported %d, capped %d; want 22, 5, 18", v.AgentsSeen, len(v.Agents), v.AgentsCapped)
	}
	names := map[string]AgentVerdict{}
	for _, a := range v.Agents {
		names[a.Agent] = a
	}
	for _, want := range []string{"quiet-bare-1", "quiet-bare-2", "agent-19", "agent-18", OtherAgent} {
		if _, ok := names[want]; !ok {
			t.Errorf("agent %s not exported; got %v", want, v.Agents)
		}
	}
	o := names[OtherAgent]
	if o.flagged() {
		t.Errorf("%s carries a verdict: %+v", OtherAgent, o)
	}
	// Sum of the 18 capped agents' rates: (1+...+18) per 60 s.
	if want := float64(18*19/2) / 60; o.ErrorsPerSec < want-1e-9 || o.ErrorsPerSec > want+1e-9 {
		t.Errorf("%s ErrorsPerSec = %v; want %v", OtherAgent, o.ErrorsPerSec, want)
	}
	// No cap needed: nothing is summed.
	cfg.TopAgents = 200
	if v := Evaluate(&cfg, in, nil); v.AgentsCapped != 0 || len(v.Agents) != 22 {
		t.Errorf("under the cap: capped %d, exported %d; want 0, 22", v.AgentsCapped, len(v.Agents))
	}
}

// TestPeers: without history, a caller is compared with the agent's other
// callers that are busy enough to be a yardstick (>= 5 errors a minute);
// with fewer than two such peers nothing is claimed.
func TestPeers(t *testing.T) {
	cfg := DefaultConfig()
	run := func(rates map[string]int64) *Verdicts {
		in := &Input{Now: now}
		for c, n := range rates {
			current(in, "a", c, q(n))
		}
		return Evaluate(&cfg, in, nil)
	}
	// The onset of an incident that hits everyone: the others' first few
	// errors are no yardstick.
	v := run(map[string]int64{"importer": 40, "c1": 2, "c2": 3, "c3": 1})
	if len(v.Callers) != 0 {
		t.Errorf("runaway against peers with 1-3 errors a minute: %+v", v.Callers)
	}
	if a := agent(t, v, "a"); a.UndecidedCallers != 1 || v.HistorySufficient {
		t.Errorf("undecided = %d, history sufficient %v; want 1, false", a.UndecidedCallers, v.HistorySufficient)
	}
	// Peers at 8 and 15 a minute, one caller at 300: a runaway by peers.
	v = run(map[string]int64{"spiky": 300, "n1": 8, "n2": 15})
	if len(v.Callers) != 1 || v.Callers[0].Caller != "spiky" || v.Callers[0].By != ByPeers {
		t.Fatalf("Callers = %+v; want spiky, by peers", v.Callers)
	}
	if s := v.Callers[0].Score; s < 25 || s > 27 {
		t.Errorf("score = %v; want 300 / median(8, 15) = 26.1", s)
	}
	// A caller at its peers' level is no runaway.
	if v := run(map[string]int64{"greedy": 40, "n1": 8, "n2": 15}); len(v.Callers) != 0 {
		t.Errorf("runaway at 40 a minute beside peers at 8 and 15: %+v", v.Callers)
	}
}

// TestNoPeerRunawayUnderOverload: while the agent is overloaded, a caller
// without history is not called a runaway against its peers (their errors
// are the agent's failing, and at the onset they have barely begun).
func TestNoPeerRunawayUnderOverload(t *testing.T) {
	cfg := DefaultConfig()
	in := &Input{Now: now}
	current(in, "a", "importer", counts{total: 90, quota: 33, overload: 57})
	for _, c := range []string{"c1", "c2", "c3"} {
		current(in, "a", c, ov(8))
	}
	v := Evaluate(&cfg, in, nil)
	a := agent(t, v, "a")
	if !a.Overloaded {
		t.Fatalf("agent not overloaded: %+v", a)
	}
	if len(v.Callers) != 0 || a.UndecidedCallers != 1 {
		t.Errorf("runaways %+v, undecided %d; want none, 1", v.Callers, a.UndecidedCallers)
	}
}

// TestNoPeerRunawayRightAfterOverload: an overload verdict that clears in
// the middle of the fault (ingest behind leaves its clear window empty; the
// page's keep_firing_for covers it) does not make the agent's busiest
// caller a runaway against its peers, neither right after the verdict nor
// at later evaluations while the window holds the agent's overload replies
// to several callers (e2e, two suites at once: batch-importer flagged for
// one evaluation, then, with a longer clear, for three). The same caller is
// a runaway by peers when the window's overload replies are its own only,
// or below the overload floor, or when its errors are quota rejections.
func TestNoPeerRunawayRightAfterOverload(t *testing.T) {
	cfg := DefaultConfig()
	// in: the importer's 90 errors in the window and 8 for each of three
	// peers; peerOverload of each peer's 8 are overload replies, none in
	// the last 15 s.
	in := func(importerOverload, peerOverload int64) *Input {
		in := &Input{Now: now}
		in.Window = append(in.Window, WindowCount{Agent: "a", Caller: "importer",
			Total: 90, Quota: 90 - importerOverload, Overload: importerOverload, OverloadRecent: importerOverload / 2})
		for _, c := range []string{"c1", "c2", "c3"} {
			in.Window = append(in.Window, WindowCount{Agent: "a", Caller: c,
				Total: 8, Quota: 8 - peerOverload, Overload: peerOverload, OverloadRecent: peerOverload / 2})
		}
		return in
	}
	was := &Verdicts{Agents: []AgentVerdict{{Agent: "a", Overloaded: true}}}
	v := Evaluate(&cfg, in(57, 8), was)
	a := agent(t, v, "a")
	if a.Overloaded {
		t.Fatalf("still overloaded with no overload reply in the clear window: %+v", a)
	}
	if len(v.Callers) != 0 || a.UndecidedCallers != 1 {
		t.Errorf("right after the overload: runaways %+v, undecided %d; want none, 1", v.Callers, a.UndecidedCallers)
	}
	for name, prev := range map[string]*Verdicts{"no previous evaluation": nil, "one evaluation later": v} {
		v := Evaluate(&cfg, in(57, 8), prev)
		if a := agent(t, v, "a"); len(v.Callers) != 0 || a.UndecidedCallers != 1 || a.Overloaded {
			t.Errorf("%s, overload replies to every caller in the window: runaways %+v, undecided %d, overloaded %v; want none, 1, false",
				name, v.Callers, a.UndecidedCallers, a.Overloaded)
		}
	}
	for name, c := range map[string]struct{ importer, peers int64 }{
		"quota rejections only":               {0, 0},
		"overload replies to the caller only": {57, 0},
		"overload replies below the floor":    {4, 2}, // 4+3*2 = 10 in 60 s, floor 0.2/s
	} {
		v := Evaluate(&cfg, in(c.importer, c.peers), nil)
		if len(v.Callers) != 1 || v.Callers[0].Caller != "importer" || v.Callers[0].By != ByPeers {
			t.Errorf("%s: runaways %+v; want importer, by peers", name, v.Callers)
		}
	}
}
