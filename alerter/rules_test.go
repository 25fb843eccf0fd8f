package alerter

import (
	"fmt"
	"math"
	"testing"
)

// The rules of rules.go one by one, at the default thresholds (overload:
// >= 0.2/s, 5x the baseline, 2 callers, clear at half the floor over 15 s;
// runaway: 10x and >= 30/min, rising at 3x and >= 5/min, at most half the
// others rising; limit too low: 3 rising callers and half of them; untyped:
// 20 replies and half; retries: 10 and half). Pure: no ClickHouse.

func TestUnitOverloaded(t *testing.T) {
	o := DefaultConfig().Overload
	busy := AgentVerdict{OverloadPerSec: 1, OverloadBaselinePerSec: 0.1, OverloadCallers: 3, ActiveCallers: 5}
	clearing := int64(2) // 2 in 15 s >= 0.1/s: still active
	for _, tc := range []struct {
		name  string
		av    AgentVerdict
		clear int64
		was   bool
		want  bool
	}{
		{"fires", busy, clearing, false, true},
		{"below the floor", with(busy, func(a *AgentVerdict) { a.OverloadPerSec = 0.19 }), clearing, false, false},
		{"not 5x its baseline", with(busy, func(a *AgentVerdict) { a.OverloadBaselinePerSec = 0.21 }), clearing, false, false},
		{"one caller of several", with(busy, func(a *AgentVerdict) { a.OverloadCallers = 1 }), clearing, false, false},
		{"one caller of one", with(busy, func(a *AgentVerdict) { a.OverloadCallers, a.ActiveCallers = 1, 1 }), clearing, false, true},
		{"stopped: clear window empty", busy, 1, false, false},
		{"holds while clearing", with(busy, func(a *AgentVerdict) { a.OverloadPerSec = 0.01 }), clearing, true, true},
		{"clears once the clear window empties", busy, 1, true, false},
	} {
		if got := overloaded(o, &tc.av, tc.clear, tc.was); got != tc.want {
			t.Errorf("%s: overloaded %v, want %v", tc.name, got, tc.want)
		}
	}
}

func with(a AgentVerdict, f func(*AgentVerdict)) AgentVerdict { f(&a); return a }

func TestUnitLimitTooLow(t *testing.T) {
	l := DefaultConfig().LimitTooLow
	for _, tc := range []struct {
		name                  string
		rising, active, quota int
		established           bool
		tooLow, undecided     bool
	}{
		{"most callers rose", 3, 5, 4, true, true, false},
		{"three of ten: not most", 3, 10, 4, true, false, false},
		{"two rose", 2, 2, 2, true, false, false},
		{"no history: undecided, never too low", 0, 5, 4, false, false, true},
		{"no history, no quota: neither", 0, 5, 0, false, false, false},
	} {
		av := AgentVerdict{QuotaRisingCallers: tc.rising, ActiveCallers: tc.active, QuotaCallers: tc.quota}
		tooLow, undecided := limitTooLow(l, &av, tc.established)
		if tooLow != tc.tooLow || undecided != tc.undecided {
			t.Errorf("%s: too low %v undecided %v; want %v %v", tc.name, tooLow, undecided, tc.tooLow, tc.undecided)
		}
	}
}

func TestUnitQuotaRising(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		rate, base  float64
		established bool
		want        bool
	}{
		{6, 2, true, true},    // 3x
		{5.9, 2, true, false}, // under 3x
		{4, 0, true, false},   // under 5/min
		{6, 0, true, true},    // from nothing: against MinBaseline 1
		{60, 2, false, false}, // no history: never
	} {
		if got := quotaRising(cfg.LimitTooLow, cfg.Runaway.MinBaseline, tc.rate, tc.base, tc.established); got != tc.want {
			t.Errorf("quota %v/min against %v/min, history %v: rising %v, want %v", tc.rate, tc.base, tc.established, got, tc.want)
		}
	}
}

func TestUnitUntypedErrors(t *testing.T) {
	u := DefaultConfig().Untyped
	for _, tc := range []struct {
		untyped, total int64
		want           bool
	}{{20, 40, true}, {19, 19, false}, {20, 41, false}, {0, 0, false}} {
		if got := untypedErrors(u, tc.untyped, tc.total); got != tc.want {
			t.Errorf("%d untyped of %d: %v, want %v", tc.untyped, tc.total, got, tc.want)
		}
	}
}

func TestUnitScoreCaller(t *testing.T) {
	cfg := DefaultConfig()
	peers := peerRates(cfg.Runaway, []float64{300, 6, 8, 2}) // 2/min is no yardstick
	if fmt.Sprint(peers) != "[6 8 300]" {
		t.Fatalf("peer rates %v, want [6 8 300]", peers)
	}
	for _, tc := range []struct {
		name              string
		rate, base        float64
		established, seen bool
		by                string
		score             float64
		rising, undecided bool
	}{
		{"own past", 300, 10, true, true, ByOwnBaseline, 30, true, false},
		{"own past, quiet", 20, 10, true, true, ByOwnBaseline, 2, false, false},
		{"new caller: its peers", 300, 0, true, false, ByPeers, 300 / 7.0, true, false},
		{"no history: its peers, even when its own score is lower", 300, 100, false, true, ByPeers, 300 / 7.0, false, false},
		{"under MinPerMin: never against peers", 20, 0, false, false, ByOwnBaseline, 20, false, false},
	} {
		s, undecided := scoreCaller(&cfg, "c", tc.rate, tc.base, tc.established, tc.seen, peers)
		if s.by != tc.by || math.Abs(s.score-tc.score) > 1e-9 || s.rising != tc.rising || undecided != tc.undecided {
			t.Errorf("%s: by %s score %v rising %v undecided %v; want %s %v %v %v", tc.name, s.by, s.score, s.rising, undecided,
				tc.by, tc.score, tc.rising, tc.undecided)
		}
	}
	// Neither a past nor peers: undecided, score 0.
	s, undecided := scoreCaller(&cfg, "c", 300, 0, false, false, []float64{300})
	if !undecided || s.score != 0 {
		t.Errorf("no history, no peers: score %v undecided %v; want 0 and undecided", s.score, undecided)
	}
}

func TestUnitRunaways(t *testing.T) {
	r := DefaultConfig().Runaway
	hot := callerScore{caller: "hot", perMin: 300, base: 10, score: 30, by: ByOwnBaseline, rising: true}
	calm := callerScore{caller: "calm", perMin: 2, base: 2, score: 1, by: ByOwnBaseline}
	riser := callerScore{caller: "riser", perMin: 30, base: 5, score: 6, by: ByOwnBaseline, rising: true}
	got, undecided := runaways(r, "a", []callerScore{hot, calm, calm}, 0, false)
	if len(got) != 1 || got[0].Caller != "hot" || got[0].Agent != "a" || !got[0].Runaway || got[0].OthersRising != 0 || undecided != 0 {
		t.Errorf("one hot caller among calm ones: %+v, %d undecided", got, undecided)
	}
	if got, _ := runaways(r, "a", []callerScore{hot, riser, calm}, 0, false); len(got) != 0 {
		t.Errorf("half the others rose too: %+v; want no runaway", got)
	}
	if got, _ := runaways(r, "a", []callerScore{hot, riser, calm}, 2, false); len(got) != 1 {
		t.Errorf("idle callers count among the others (1 of 4 rose): %+v; want the hot caller", got)
	}
	peer := hot
	peer.by = ByPeers
	if got, undecided := runaways(r, "a", []callerScore{peer, calm}, 0, true); len(got) != 0 || undecided != 1 {
		t.Errorf("judged by its peers under an overload: %+v, %d undecided; want undecided", got, undecided)
	}
	slow := hot
	slow.perMin = 29
	if got, _ := runaways(r, "a", []callerScore{slow, calm}, 0, false); len(got) != 0 {
		t.Errorf("under MinPerMin: %+v", got)
	}
}

func TestUnitTopRunawaysAndStorms(t *testing.T) {
	rs := topRunaways([]CallerVerdict{{Agent: "b", Caller: "x", Score: 5}, {Agent: "a", Caller: "y", Score: 5},
		{Agent: "a", Caller: "z", Score: 9}}, 2)
	if len(rs) != 2 || rs[0].Caller != "z" || rs[1].Caller != "y" {
		t.Errorf("top runaways %+v; want z, then y (ties by agent)", rs)
	}
	ss := topStorms([]RetryVerdict{{Agent: "a", Caller: "c", Reason: "r2", Count: 3}, {Agent: "a", Caller: "c", Reason: "r1", Count: 3},
		{Agent: "b", Count: 1}}, 2)
	if len(ss) != 2 || ss[0].Reason != "r1" || ss[1].Reason != "r2" {
		t.Errorf("top storms %+v; want r1, r2", ss)
	}
}

func TestUnitRetryStorms(t *testing.T) {
	r := DefaultConfig().Retry
	got := retryStorms(r, RetryStats{Agent: "a", Caller: "c", Retries: 40, Paired: 20, Early: 10,
		WithMessageID: 20, FreshMessage: 10, WithIdemKey: 30, FreshIdemKey: 10})
	if fmt.Sprint(got) != "[{a c ignored_retry_after 10 0.5} {a c rotated_message_id 10 0.5}]" {
		t.Errorf("storms %v; want ignored Retry-After and rotated message ids (10 of 30 keys is no storm)", got)
	}
	if got := retryStorms(r, RetryStats{Agent: "a", Caller: "c", Early: 9, Paired: 9, FreshMessage: 9, WithMessageID: 9}); len(got) != 0 {
		t.Errorf("under 10 each: %v", got)
	}
	if got := retryStorms(r, RetryStats{Early: 10, FreshIdemKey: 10}); len(got) != 0 {
		t.Errorf("nothing to share against: %v", got)
	}
}

func TestUnitGatewayMangling(t *testing.T) {
	g := DefaultConfig().Gateway
	if gv := gatewayMangling(g, GatewayStats{Agent: "a"}); gv != nil {
		t.Errorf("no pair: %+v; want nil", gv)
	}
	rw := []Rewrite{{AgentStatus: 503, GatewayStatus: 500, N: 5}}
	gv := gatewayMangling(g, GatewayStats{Agent: "a", Pairs: 50, Mangled: 5, StatusDiffers: 5, Rewrites: rw})
	if gv == nil || !gv.Mangling || gv.Share != 0.1 || len(gv.Rewrites) != 1 {
		t.Fatalf("5 of 50 mangled: %+v; want mangling", gv)
	}
	rw[0].N = 99
	if gv.Rewrites[0].N != 5 {
		t.Error("the verdict shares the input's rewrites")
	}
	if gv := gatewayMangling(g, GatewayStats{Pairs: 51, Mangled: 5}); gv == nil || gv.Mangling {
		t.Errorf("5 of 51: %+v; want a verdict, not mangling", gv)
	}
}

func TestUnitQuotaByLimitAndDeadLetters(t *testing.T) {
	got := quotaByLimit(2, []LimitCount{{Limit: "a", N: 10}, {Limit: "", N: 30}, {Limit: "b", N: 20}}, 10)
	if fmt.Sprint(got) != "[{unnamed 3} {other 3}]" {
		t.Errorf("top 2 of 3 limits: %v; want unnamed, then the rest as other", got)
	}
	got = quotaByLimit(3, []LimitCount{{Limit: "a", N: 10}, {Limit: "b", N: 20}}, 10)
	if fmt.Sprint(got) != "[{b 2} {a 1}]" {
		t.Errorf("2 limits of 3: %v; want both, no other", got)
	}
	dl := deadLetterRates([]DeadLetterCount{{Reason: "poison", N: 20}, {Reason: "", N: 10}}, 10)
	if fmt.Sprint(dl) != "[{poison 2} {unknown 1}]" {
		t.Errorf("dead letters %v", dl)
	}
}
