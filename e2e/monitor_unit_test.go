package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestUnitSamplesBetween: the failure message's list keeps the observations
// inside the range, the alerter's series of the agent asked for only, and
// ingest's lag whatever its labels; nothing else.
func TestUnitSamplesBetween(t *testing.T) {
	at := time.Date(2026, 12, 5, 17, 8, 0, 0, time.UTC)
	obs := func(sec int, ss ...sample) verdictObs {
		return verdictObs{At: at.Add(time.Duration(sec) * time.Second), Samples: ss}
	}
	verdict := func(agent string, v float64) sample {
		return sample{Name: ns + "agent_overloaded", Labels: map[string]string{"agent": agent}, Value: v}
	}
	lag := func(v float64) sample { return sample{Name: ingestLag, Labels: map[string]string{}, Value: v} }
	m := &monitor{verdicts: []verdictObs{
		obs(0, verdict("a", 1), lag(2)),
		obs(10, verdict("a", 0), verdict("b", 1), lag(14), sample{Name: ns + "stale", Labels: map[string]string{}}),
		obs(20, verdict("a", 1), lag(3)),
		obs(30, verdict("a", 1), lag(1)),
	}}
	got := m.samplesBetween(at.Add(5*time.Second), at.Add(20*time.Second), map[string]string{"agent": "a"}, ns+"agent_overloaded", ingestLag)
	text := strings.Join(got, "; ")
	for _, want := range []string{"17:08:10 " + verdict("a", 0).String(), "17:08:10 " + lag(14).String(), "17:08:20 " + verdict("a", 1).String(), "17:08:20 " + lag(3).String()} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in %q", want, text)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d samples %q; want exactly 4", len(got), text)
	}
	for _, not := range []string{"17:08:00", "17:08:30", `agent="b"`, "stale"} {
		if strings.Contains(text, not) {
			t.Errorf("%q listed in %q; must not be (outside the range, another agent, a series not asked for)", not, text)
		}
	}
}
