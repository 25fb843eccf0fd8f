package groups

import (
	"testing"
	"time"
)

var now = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// TestUnitClassify: what is new, what is a regression, and what is
// neither, from a group's figures and its agent's history (pure: no
// ClickHouse).
func TestUnitClassify(t *testing.T) {
	h := History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"1.9": ago(5 * time.Hour)}}
	g := func(kind string, first, last time.Time, vs ...Version) Group {
		return Group{Key: Key{Agent: "a", Kind: kind}, FirstSeen: first, LastSeen: last, Versions: vs}
	}
	v := func(name string, first, last time.Time) Version {
		return Version{Version: name, FirstSeen: first, LastSeen: last}
	}
	for _, c := range []struct {
		name string
		g    Group
		h    History
		want State
	}{
		{"first seen 20 min ago on an agent with 5 h of history", g("internal", ago(20*time.Minute), ago(time.Minute)), h, New},
		{"first seen 70 min ago: no longer new", g("internal", ago(70*time.Minute), ago(time.Minute)), h, Seen},
		{"a quota group is never new", g("quota", ago(20*time.Minute), ago(time.Minute)), h, Seen},
		{"agent (or database) younger than an hour before the group: not new",
			g("internal", ago(20*time.Minute), ago(time.Minute)), History{AgentFirst: ago(50 * time.Minute)}, Seen},
		{"agent first seen exactly an hour before: new",
			g("internal", ago(20*time.Minute), ago(time.Minute)), History{AgentFirst: ago(80 * time.Minute)}, New},
		{"steady group", g("internal", ago(4*time.Hour), ago(time.Minute)),
			History{AgentFirst: h.AgentFirst, PrevHour: now.Add(-2 * time.Hour).Truncate(time.Hour), RecentHour: now.Add(-time.Hour).Truncate(time.Hour)}, Seen},
		{"back after 30 h of silence", g("internal", ago(60*time.Hour), ago(time.Minute)),
			History{AgentFirst: ago(60 * time.Hour), PrevHour: ago(32 * time.Hour), RecentHour: ago(time.Hour)}, Regression},
		{"back after 20 h: not a regression", g("internal", ago(60*time.Hour), ago(time.Minute)),
			History{AgentFirst: ago(60 * time.Hour), PrevHour: ago(22 * time.Hour), RecentHour: ago(time.Hour)}, Seen},
		{"quota back after 30 h: never a regression", g("quota", ago(60*time.Hour), ago(time.Minute)),
			History{AgentFirst: ago(60 * time.Hour), PrevHour: ago(32 * time.Hour), RecentHour: ago(time.Hour)}, Seen},
		{"gone in 1.10, back in 1.11 (1.10 > 1.9 as versions)",
			g("internal", ago(5*time.Hour), ago(time.Minute), v("1.9", ago(5*time.Hour), ago(4*time.Hour)), v("1.11", ago(10*time.Minute), ago(time.Minute))),
			History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"1.9": ago(5 * time.Hour), "1.10": ago(3 * time.Hour), "1.11": ago(15 * time.Minute)}},
			Regression},
		{"an old release still raising it is not a regression",
			g("internal", ago(5*time.Hour), ago(time.Minute), v("1.9", ago(5*time.Hour), ago(4*time.Hour)), v("1.8", ago(10*time.Minute), ago(time.Minute))),
			History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"1.8": ago(10 * time.Minute), "1.9": ago(5 * time.Hour), "1.10": ago(3 * time.Hour)}},
			Seen},
		{"a steady group carried into a new version at its deploy is not a regression",
			g("internal", ago(5*time.Hour), ago(time.Minute), v("1.9", ago(5*time.Hour), ago(20*time.Minute)), v("1.10", ago(19*time.Minute), ago(time.Minute))),
			History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"1.9": ago(5 * time.Hour), "1.10": ago(20 * time.Minute)}},
			Seen},
		{"pre-release then release: back in 2.0.0 after 2.0.0-rc.1 ran without it",
			g("internal", ago(5*time.Hour), ago(time.Minute), v("v1.9.0", ago(5*time.Hour), ago(4*time.Hour)), v("v2.0.0", ago(10*time.Minute), ago(time.Minute))),
			History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"v1.9.0": ago(5 * time.Hour), "v2.0.0-rc.1": ago(3 * time.Hour), "v2.0.0": ago(15 * time.Minute)}},
			Regression},
		{"versions that are not versions never make a regression",
			g("internal", ago(5*time.Hour), ago(time.Minute), v("blue", ago(5*time.Hour), ago(4*time.Hour)), v("green", ago(10*time.Minute), ago(time.Minute))),
			History{AgentFirst: ago(5 * time.Hour), AgentVersions: map[string]time.Time{"blue": ago(5 * time.Hour), "teal": ago(3 * time.Hour), "green": ago(15 * time.Minute)}},
			Seen},
	} {
		got, why := Classify(c.g, c.h, now)
		if got != c.want {
			t.Errorf("%s: %q (%s); want %q", c.name, got, why, c.want)
		}
		if (got == Seen) != (why == "") {
			t.Errorf("%s: state %q with reason %q", c.name, got, why)
		}
	}
}

// TestUnitKeyID: a group's id is a function of its whole fingerprint.
func TestUnitKeyID(t *testing.T) {
	k := Key{Agent: "a", Protocol: "a2a", Code: "X", Kind: "internal", Method: "m"}
	if k.ID() != k.ID() || len(k.ID()) != 16 {
		t.Fatalf("ID %q is not a stable 16-hex id", k.ID())
	}
	for _, o := range []Key{
		{Agent: "b", Protocol: "a2a", Code: "X", Kind: "internal", Method: "m"},
		{Agent: "a", Protocol: "mcp", Code: "X", Kind: "internal", Method: "m"},
		{Agent: "a", Protocol: "a2a", Code: "Y", Kind: "internal", Method: "m"},
		{Agent: "a", Protocol: "a2a", Code: "X", Kind: "quota", Method: "m"},
		{Agent: "a", Protocol: "a2a", Code: "X", Kind: "internal", Method: "n"},
		{Agent: "a", Protocol: "a2a", Code: "Xi", Kind: "nternal", Method: "m"}, // the separator counts
	} {
		if o.ID() == k.ID() {
			t.Errorf("%+v has the id of %+v", o, k)
		}
	}
}
