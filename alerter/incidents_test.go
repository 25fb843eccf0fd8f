package alerter

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// stepper drives episodeStep as one recorder would, with the table
// simulated by a map of the latest write per episode (a pure unit test).
type stepper struct {
	writer  string
	keep    map[incidents.Kind]time.Duration                   // IncidentKeep's stand-in; none by default
	table   map[incidents.Key]map[time.Time]incidents.Incident // key -> start -> latest write
	mine    map[incidents.Key]incidents.Incident
	pending map[incidents.Key]time.Time
}

func newTable() map[incidents.Key]map[time.Time]incidents.Incident {
	return map[incidents.Key]map[time.Time]incidents.Incident{}
}

func (s *stepper) step(t *testing.T, at time.Time, obs map[incidents.Key]observation) []incidents.Incident {
	t.Helper()
	if s.mine == nil {
		s.mine, s.pending = map[incidents.Key]incidents.Incident{}, map[incidents.Key]time.Time{}
	}
	stored := map[incidents.Key]incidents.Incident{}
	for k, byStart := range s.table {
		for _, i := range byStart {
			if i.Open() {
				if have, ok := stored[k]; !ok || i.Start.Before(have.Start) {
					stored[k] = i
				}
			}
		}
	}
	out := episodeStep(at, 15*time.Second, s.writer, IncidentHold, s.keep, obs, stored, s.mine, s.pending)
	for _, i := range out {
		if s.table[i.Key()] == nil {
			s.table[i.Key()] = map[time.Time]incidents.Incident{}
		}
		if have, ok := s.table[i.Key()][i.Start]; !ok || i.Version >= have.Version {
			s.table[i.Key()][i.Start] = i
		}
	}
	return out
}

func episodes(table map[incidents.Key]map[time.Time]incidents.Incident) []incidents.Incident {
	var out []incidents.Incident
	for _, byStart := range table {
		for _, i := range byStart {
			out = append(out, i)
		}
	}
	return out
}

var (
	t0       = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	ovKey    = incidents.Key{Kind: incidents.Overload, Agent: "billing"}
	overload = map[incidents.Key]observation{ovKey: {rate: 2, callers: 4, count: 60}}
)

func sec(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

// TestUnitEpisodeHysteresis: a verdict becomes an episode only once it has
// held as long as its alert's "for" (15 s for overload), dated from its first
// evaluation; it ends at the first evaluation that no longer finds it. A
// shorter blip leaves nothing.
func TestUnitEpisodeHysteresis(t *testing.T) {
	s := &stepper{writer: "a", table: newTable()}
	// A blip: true at 0 and 10 s, false at 20 s (the alert never fires).
	s.step(t, sec(0), overload)
	s.step(t, sec(10), overload)
	s.step(t, sec(20), nil)
	if got := episodes(s.table); len(got) != 0 {
		t.Fatalf("a 10 s blip left episodes %+v (want none: shorter than the alert's for)", got)
	}
	// A real one: true from 30 s to 60 s, false at 70 s.
	for at := 30; at <= 60; at += 10 {
		out := s.step(t, sec(at), overload)
		if at < 50 && len(out) != 0 {
			t.Fatalf("written at %d s, before the verdict held 15 s: %+v", at, out)
		}
	}
	s.step(t, sec(70), nil)
	got := episodes(s.table)
	if len(got) != 1 {
		t.Fatalf("episodes %+v, want exactly one", got)
	}
	e := got[0]
	if !e.Start.Equal(sec(30)) || !e.Fired.Equal(sec(50)) || !e.LastSeen.Equal(sec(60)) || !e.End.Equal(sec(70)) {
		t.Errorf("episode start %v fired %v last seen %v end %v; want 30 s, 50 s, 60 s, 70 s after t0",
			e.Start, e.Fired, e.LastSeen, e.End)
	}
	if e.Evaluations != 2 || e.PeakCallers != 4 || e.PeakCount != 60 {
		t.Errorf("evaluations %d, peak callers %d, peak count %d; want 2, 4, 60", e.Evaluations, e.PeakCallers, e.PeakCount)
	}
}

// TestUnitEpisodeTwoWritersOneEpisode: two recorders out of phase (ticks 4 s
// apart) write one episode: the second continues the one the first opened,
// and the one that still sees the verdict after the other closed it reopens
// the same episode instead of starting another. It ends at the first
// evaluation, by either, that no longer finds it after the last that did.
func TestUnitEpisodeTwoWritersOneEpisode(t *testing.T) {
	table := newTable()
	a := &stepper{writer: "a", table: table}
	b := &stepper{writer: "b", table: table}
	for at := 0; at <= 60; at += 10 {
		a.step(t, sec(at), overload)
		b.step(t, sec(at+4), overload)
	}
	a.step(t, sec(70), nil) // a no longer finds it; b still does at 74 s
	b.step(t, sec(74), overload)
	a.step(t, sec(80), nil)
	b.step(t, sec(84), nil)
	got := episodes(table)
	if len(got) != 1 {
		t.Fatalf("two alerters wrote %d episodes %+v, want one", len(got), got)
	}
	if e := got[0]; !e.Start.Equal(sec(0)) || !e.End.Equal(sec(80)) || !e.LastSeen.Equal(sec(74)) {
		t.Errorf("episode %v .. %v (last seen %v); want 0 s .. 80 s, last seen 74 s", e.Start, e.End, e.LastSeen)
	}
}

// TestUnitEpisodeRestartContinues: a recorder started afresh (no memory)
// while an episode is open continues it; one that finds an open episode
// nobody wrote for longer than IncidentGap ends it at its last evaluation
// and opens a new one after the hold. A recorder back from an outage does
// not reopen the episode that ended meanwhile.
func TestUnitEpisodeRestartContinues(t *testing.T) {
	table := newTable()
	first := &stepper{writer: "a", table: table}
	for at := 0; at <= 30; at += 10 {
		first.step(t, sec(at), overload)
	}
	restarted := &stepper{writer: "a", table: table}
	if out := restarted.step(t, sec(40), overload); len(out) != 1 || !out[0].Start.Equal(sec(0)) {
		t.Fatalf("the restarted recorder wrote %+v, want the open episode from 0 s continued", out)
	}
	restarted.step(t, sec(50), nil)
	if got := episodes(table); len(got) != 1 || got[0].Open() {
		t.Fatalf("episodes %+v, want one, ended", got)
	}

	// Left open, then nobody writes for more than the gap.
	for at := 100; at <= 130; at += 10 {
		first.step(t, sec(at), overload)
	}
	late := &stepper{writer: "a", table: table}
	back := sec(130).Add(IncidentGap + time.Minute)
	late.step(t, back, overload)
	late.step(t, back.Add(20*time.Second), overload)
	got := episodes(table)
	if len(got) != 3 {
		t.Fatalf("episodes %+v, want 3 (the first, the abandoned one, the new one)", got)
	}
	for _, e := range got {
		switch {
		case e.Start.Equal(sec(100)):
			if !e.End.Equal(sec(130)) {
				t.Errorf("abandoned episode ended at %v, want its last evaluation %v", e.End, sec(130))
			}
		case e.Start.Equal(back):
			if !e.Open() {
				t.Errorf("new episode closed at %v, want open", e.End)
			}
		case !e.Start.Equal(sec(0)):
			t.Errorf("unexpected episode %+v", e)
		}
	}
}

// TestUnitEpisodeKeep: with a keep (the alert's keep_firing_for), a verdict
// that clears for less than the keep and comes back is one episode; one
// that stays clear ends at the first evaluation the keep has passed, and a
// later verdict is a new episode after the hold.
func TestUnitEpisodeKeep(t *testing.T) {
	s := &stepper{writer: "a", table: newTable(), keep: map[incidents.Kind]time.Duration{incidents.Overload: 30 * time.Second}}
	for at := 0; at <= 40; at += 10 {
		s.step(t, sec(at), overload)
	}
	// Cleared at 50 and 60 s (20 s), found again at 70 s.
	for _, at := range []int{50, 60} {
		if out := s.step(t, sec(at), nil); len(out) != 0 {
			t.Fatalf("at %d s, within the keep, wrote %+v; want nothing (the episode stays open)", at, out)
		}
	}
	for at := 70; at <= 90; at += 10 {
		s.step(t, sec(at), overload)
	}
	if got := episodes(s.table); len(got) != 1 || !got[0].Open() || !got[0].LastSeen.Equal(sec(90)) {
		t.Fatalf("episodes %+v; want one, open, last seen at 90 s", got)
	}
	// Clear from 100 s: still open at 110 s, ended at 120 s (30 s after 90 s).
	s.step(t, sec(100), nil)
	s.step(t, sec(110), nil)
	if got := episodes(s.table); len(got) != 1 || !got[0].Open() {
		t.Fatalf("episodes %+v at 110 s; want one, still open", got)
	}
	s.step(t, sec(120), nil)
	got := episodes(s.table)
	if len(got) != 1 || !got[0].Start.Equal(sec(0)) || !got[0].End.Equal(sec(120)) || got[0].Evaluations != 6 {
		t.Fatalf("episodes %+v; want one from 0 s to 120 s, written by 6 evaluations (20-40 s and 70-90 s)", got)
	}
	// A verdict after the end is a new episode, opened after the hold.
	s.step(t, sec(130), overload)
	if out := s.step(t, sec(140), overload); len(out) != 0 {
		t.Fatalf("a new verdict continued the ended episode: %+v", out)
	}
	s.step(t, sec(150), overload)
	if got := episodes(s.table); len(got) != 2 {
		t.Fatalf("episodes %+v; want the ended one and a new one", got)
	}
}

// TestUnitObserveQuotaIsNoIncident: an agent with quota rejections, every
// history known and no other verdict, gives no episode; limit_too_low,
// undecided, runaway and retry storms each give theirs under their key.
func TestUnitObserveQuotaIsNoIncident(t *testing.T) {
	cfg := DefaultConfig()
	v := &Verdicts{WindowSeconds: 60, HistorySufficient: true, Agents: []AgentVerdict{
		{Agent: "quota-only", QuotaPerSec: 5, QuotaCallers: 1},
		{Agent: "limits", QuotaPerSec: 5, LimitTooLow: true, QuotaRisingCallers: 3},
		{Agent: "fresh", QuotaPerSec: 1, QuotaCallers: 1, LimitUndecided: true, UndecidedCallers: 2},
		{Agent: OtherAgent, Overloaded: true},
	}, Callers: []CallerVerdict{{Agent: "a", Caller: "c", PerMin: 120, Score: 30, By: ByPeers, Runaway: true}},
		RetryStorms: []RetryVerdict{{Agent: "a", Caller: "c", Reason: ReasonIgnoredRetryAfter, Count: 9, Share: .9}}}
	got := observe(&cfg, v)
	want := []incidents.Key{
		{Kind: incidents.LimitTooLow, Agent: "limits"},
		{Kind: incidents.Undecided, Agent: "fresh", Reason: UndecidedLimit},
		{Kind: incidents.Undecided, Agent: "fresh", Reason: UndecidedRunaway},
		{Kind: incidents.Runaway, Agent: "a", Caller: "c"},
		{Kind: incidents.RetryStorm, Agent: "a", Caller: "c", Reason: ReasonIgnoredRetryAfter},
	}
	if len(got) != len(want) {
		t.Errorf("observed %v, want exactly %v", got, want)
	}
	for _, k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("no observation for %+v", k)
		}
	}
	for k := range got {
		if k.Agent == "quota-only" || k.Agent == OtherAgent {
			t.Errorf("observed %+v: quota alone and the summed agents are never an incident", k)
		}
	}
	if o := got[incidents.Key{Kind: incidents.Runaway, Agent: "a", Caller: "c"}]; o.rate != 2 || o.detail != ByPeers || o.score != 30 {
		t.Errorf("runaway observation %+v, want rate 2/s, detail peers, score 30", o)
	}
}

// TestUnitIncidentHoldMatchesAlerts: each kind's hold is the "for" of its
// alert in alerts/verdicts.yml, and its keep the alert's keep_firing_for
// (none without one), so an episode is an alert that fired.
func TestUnitIncidentHoldMatchesAlerts(t *testing.T) {
	b, err := os.ReadFile("../alerts/verdicts.yml")
	if err != nil {
		t.Fatal(err)
	}
	alerts := map[string]incidents.Kind{
		"ErrtrailAgentOverloaded": incidents.Overload, "ErrtrailRunawayCaller": incidents.Runaway,
		"ErrtrailLimitTooLow": incidents.LimitTooLow, "ErrtrailRetryStorm": incidents.RetryStorm,
		"ErrtrailGatewayMangling": incidents.GatewayMangling, "ErrtrailUntypedErrors": incidents.UntypedErrors,
	}
	re := regexp.MustCompile(`(?m)^\s*- alert: (\w+)\n(?:\s+expr:[^\n]*\n(?:\s{10,}[^\n]*\n)*)?\s+for: (\S+)`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		k, ok := alerts[m[1]]
		if !ok {
			continue
		}
		found++
		d, err := time.ParseDuration(m[2])
		if err != nil {
			t.Fatalf("%s: for %q: %v", m[1], m[2], err)
		}
		if IncidentHold[k] != d {
			t.Errorf("%s has for %v, IncidentHold[%s] is %v", m[1], d, k, IncidentHold[k])
		}
	}
	if found != len(alerts) {
		t.Errorf("found the for of %d alerts in alerts/verdicts.yml, want %d", found, len(alerts))
	}
	keeps := map[incidents.Kind]time.Duration{}
	for _, rule := range regexp.MustCompile(`(?m)^\s*- alert: `).Split(string(b), -1)[1:] {
		name, _, _ := strings.Cut(rule, "\n")
		k, ok := alerts[strings.TrimSpace(name)]
		if !ok {
			continue
		}
		if m := regexp.MustCompile(`(?m)^\s+keep_firing_for: (\S+)`).FindStringSubmatch(rule); m != nil {
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatalf("%s: keep_firing_for %q: %v", name, m[1], err)
			}
			keeps[k] = d
		}
	}
	if len(keeps) == 0 {
		t.Error("no alert in alerts/verdicts.yml has a keep_firing_for; the overload page has")
	}
	for _, k := range alerts {
		if keeps[k] != IncidentKeep[k] {
			t.Errorf("%s: the alert keeps firing for %v, IncidentKeep is %v", k, keeps[k], IncidentKeep[k])
		}
	}
}
