package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestBuiltinScenariosParse(t *testing.T) {
	names := BuiltinNames()
	want := []string{"bare-500", "cold-start", "demo", "gateway-rewrite", "ignores-retry-after", "limit-too-low", "long-retry-after",
		"overload", "poison", "runaway", "steady", "worked-example"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("shipped scenarios %v; want %v", names, want)
	}
	for _, n := range names {
		sc, err := Builtin(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if sc.Total() <= 0 || sc.Name != n {
			t.Errorf("%s: name %q, total %v", n, sc.Name, sc.Total())
		}
	}
	if d, _ := Builtin("demo"); d.Total() < 60*time.Second || d.Total() > 90*time.Second {
		t.Errorf("demo lasts %v; want 60-90 s", d.Total())
	}
}

func TestParseScenarioDefaultsAndExpansion(t *testing.T) {
	sc, err := ParseScenario([]byte(`
name: t
phases: [{duration: 1m}, {duration: 30s, rate_factor: 3}]
agents:
  - {name: a, limit: {rate_per_min: 60}}
  - {name: b, shape: a2a-grpc}
callers:
  - {name: c, count: 3, rate_per_min: 10, agents: [a]}
  - {name: loop, behaviour: runaway, runaway: {from: 10s}}
  - {name: imp, behaviour: ignores-retry-after}
`), ".")
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Total(); got != 90*time.Second {
		t.Errorf("total %v; want 1m30s (sum of phases)", got)
	}
	a := sc.Agents[0]
	if a.Shape != "a2a-jsonrpc" || a.Limit.Burst != 1 || a.Limit.Policy != "per-caller" || a.Endpoint == "" || a.Instance != "a-0" {
		t.Errorf("agent defaults: %+v", a)
	}
	var names []string
	for _, c := range sc.Callers {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "c-1,c-2,c-3,loop,imp" {
		t.Errorf("callers %s; want c-1,c-2,c-3,loop,imp", got)
	}
	if c := sc.Callers[3]; c.Runaway.Factor != 50 || len(c.Agents) != 2 || c.Retry.Policy != "honour" {
		t.Errorf("runaway caller defaults: %+v", c)
	}
	if c := sc.Callers[4]; c.Retry.Policy != "ignore" || c.Retry.MaxAttempts != 6 {
		t.Errorf("ignores-retry-after caller: %+v", c.Retry)
	}
	if sc.Phases[0].RateFactor != 1 || len(sc.Poison.Kinds) != len(PoisonKinds) {
		t.Errorf("phase or poison defaults: %+v %+v", sc.Phases, sc.Poison)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\nagents: [{name: a}]\n", "duration"},
		{"name: x\nduration: 1m\nagents: [{name: a, shape: soap}]\n", `unknown shape "soap"`},
		{"name: x\nduration: 1m\nagents: [{name: a}]\ncallers: [{name: c, agents: [z]}]\n", `unknown agent "z"`},
		{"name: x\nduration: 1m\nagents: [{name: a}]\nfaults: [{kind: flood, agent: a}]\n", `unknown kind "flood"`},
		{"name: x\nduration: 1m\nagents: [{name: a}]\nfaults: [{kind: overload, agent: a, from: 2m, to: 1m}]\n", "to must be after from"},
		{"name: x\nduration: 1m\nagents: [{name: a}]\npoison: {kinds: [bad]}\n", `unknown kind "bad"`},
		{"name: x\nduration: 1m\nagents: [{name: a}]\nagnets: []\n", "agnets"},
		{"name: x\nduration: 1m\nagents: [{name: a, shape: 'corpus:does/not/exist.http'}]\n", "corpus template"},
	} {
		_, err := ParseScenario([]byte(tc.yaml), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScenario(%q) error %v; want one containing %q", tc.yaml, err, tc.want)
		}
	}
}
