package alerter

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// now is a fixed evaluation time 30 s into a minute. The default current
// window is the 60 s before it; the baseline is the 60 whole minutes that end
// where the previous minute begins (minutes -61..-2).
var now = time.Unix(1764489630, 0)

// minute returns the start of the bucket offset minutes from now's bucket
// (0 = the current, partial minute; -1 = the previous one).
func minute(offset int) int64 { return now.Unix() - now.Unix()%60 + int64(offset)*60 }

type counts struct{ total, quota, overload, unknown, untyped int64 } // unknown: untyped errors (Bucket.Untyped); untyped: typed = 0, not read by the alerter

func q(n int64) counts  { return counts{total: n, quota: n} }
func ov(n int64) counts { return counts{total: n, overload: n} }
func bare500(n int64) counts {
	return counts{total: n, unknown: n, untyped: n}
}

// history gives caller a flat baseline of c per minute over the whole
// baseline hour (minutes -61..-2).
func history(in *Input, agent, caller string, c counts) {
	for m := -61; m <= -2; m++ {
		put(in, agent, caller, m, c)
	}
}

// current puts c in the current window (60 s), spread evenly: the short
// overload windows (30 s, 20 s) hold their share of its overload replies.
func current(in *Input, agent, caller string, c counts) {
	in.Window = append(in.Window, WindowCount{Agent: agent, Caller: caller,
		Total: c.total, Quota: c.quota, Overload: c.overload, Untyped: c.unknown,
		OverloadRecent: c.overload / 2, OverloadClear: c.overload / 3})
}

// since gives caller c per minute in each baseline minute from -from to -2:
// a deployment (or caller) that started from minutes ago.
func since(in *Input, agent, caller string, from int, c counts) {
	for m := -from; m <= -2; m++ {
		put(in, agent, caller, m, c)
	}
}

func put(in *Input, agent, caller string, m int, c counts) {
	in.Buckets = append(in.Buckets, Bucket{Agent: agent, Caller: caller, Start: minute(m),
		Total: c.total, Quota: c.quota, Overload: c.overload, Untyped: c.unknown})
}

func eval(t *testing.T, in *Input) *Verdicts {
	t.Helper()
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	in.Now = now
	return Evaluate(&cfg, in, nil)
}

func agent(t *testing.T, v *Verdicts, name string) AgentVerdict {
	t.Helper()
	for _, a := range v.Agents {
		if a.Agent == name {
			return a
		}
	}
	t.Fatalf("no verdict for agent %q in %+v", name, v.Agents)
	return AgentVerdict{}
}

func callers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("caller-%d", i+1)
	}
	return out
}

func TestSpan(t *testing.T) {
	cfg := DefaultConfig()
	s := cfg.SpanAt(now)
	if got, want := s.WindowStart, now.Unix()-60; got != want {
		t.Errorf("WindowStart = %d; want %d", got, want)
	}
	if got := s.WindowSeconds(); got != 60 {
		t.Errorf("WindowSeconds = %v; want 60 (exactly the window, not to a bucket boundary)", got)
	}
	if got := s.BaselineBuckets(); got != 60 || s.BaselineEnd != minute(-1) {
		t.Errorf("BaselineBuckets = %d, BaselineEnd %d; want 60 ending at %d", got, s.BaselineEnd, minute(-1))
	}
	cfg.Bucket, cfg.Window, cfg.Baseline = 5*time.Second, 20*time.Second, 2*time.Minute
	s = cfg.SpanAt(time.Unix(1002, 0))
	if s.WindowStart != 982 || s.BaselineEnd != 980 || s.BaselineStart != 860 || s.BaselineBuckets() != 24 {
		t.Errorf("5s span = %+v; want WindowStart 982, BaselineEnd 980, BaselineStart 860, 24 buckets", s)
	}
}

func TestOverloaded(t *testing.T) {
	oc := DefaultConfig().Overload
	// Each case names the one agent it fills and, in why, what makes its
	// verdict: a case that wants no page checks that the rule it is about is
	// the one that holds the page back, with the agent's numbers present.
	for _, tc := range []struct {
		name  string
		agent string
		fill  func(in *Input)
		want  bool
		why   func(t *testing.T, a AgentVerdict)
	}{
		{"503s across callers page", "research", func(in *Input) {
			for _, c := range callers(5) {
				history(in, "research", c, q(1))
				current(in, "research", c, ov(20))
			}
		}, true, func(t *testing.T, a AgentVerdict) {
			if a.OverloadCallers != 5 || a.OverloadPerSec < oc.MinPerSec {
				t.Errorf("callers %d, rate %.3f/s; want 5 callers at >= %.1f/s", a.OverloadCallers, a.OverloadPerSec, oc.MinPerSec)
			}
		}},
		{"quota alone never pages", "research", func(in *Input) {
			for _, c := range callers(5) {
				history(in, "research", c, q(1))
				current(in, "research", c, q(500))
			}
		}, false, func(t *testing.T, a AgentVerdict) {
			if a.OverloadPerSec != 0 || a.OverloadCallers != 0 {
				t.Errorf("overload rate %.3f/s from %d callers; want none from quota replies", a.OverloadPerSec, a.OverloadCallers)
			}
			if a.QuotaPerSec <= 0 {
				t.Errorf("QuotaPerSec = %v; want the quota replies counted", a.QuotaPerSec)
			}
		}},
		{"one caller's 503s are not the agent failing for all", "research", func(in *Input) {
			for _, c := range callers(5) {
				history(in, "research", c, q(1))
			}
			current(in, "research", "caller-1", ov(100))
		}, false, func(t *testing.T, a AgentVerdict) {
			// The rate passes the floor and the baseline: only the spread is short.
			if a.OverloadCallers != 1 || a.OverloadPerSec < oc.MinPerSec || a.OverloadPerSec < oc.Factor*a.OverloadBaselinePerSec {
				t.Errorf("callers %d, rate %.3f/s, baseline %.3f/s; want 1 caller at a rate that would page if spread",
					a.OverloadCallers, a.OverloadPerSec, a.OverloadBaselinePerSec)
			}
		}},
		{"503s at the agent's usual level", "research", func(in *Input) {
			for _, c := range callers(5) {
				history(in, "research", c, ov(10))
				current(in, "research", c, ov(12))
			}
		}, false, func(t *testing.T, a AgentVerdict) {
			// Above the floor and from every caller: only the baseline holds it.
			if a.OverloadBaselinePerSec <= 0 || a.OverloadPerSec >= oc.Factor*a.OverloadBaselinePerSec ||
				a.OverloadPerSec < oc.MinPerSec || a.OverloadCallers != 5 {
				t.Errorf("rate %.3f/s, baseline %.3f/s, callers %d; want 5 callers above the floor, under %vx a known baseline",
					a.OverloadPerSec, a.OverloadBaselinePerSec, a.OverloadCallers, oc.Factor)
			}
		}},
		{"503s below the absolute floor", "research", func(in *Input) {
			for _, c := range callers(3) {
				current(in, "research", c, ov(2)) // 3 in the 30 s overload window = 0.1/s
			}
		}, false, func(t *testing.T, a AgentVerdict) {
			if a.OverloadPerSec <= 0 || a.OverloadPerSec >= oc.MinPerSec || a.OverloadCallers != 3 {
				t.Errorf("rate %.3f/s, callers %d; want 3 callers at a rate above 0 and below the floor %.1f/s",
					a.OverloadPerSec, a.OverloadCallers, oc.MinPerSec)
			}
		}},
		{"an agent with one caller, all 503", "solo", func(in *Input) {
			current(in, "solo", "only", ov(30))
		}, true, func(t *testing.T, a AgentVerdict) {
			if a.OverloadCallers != 1 || a.ActiveCallers != 1 || a.OverloadPerSec < oc.MinPerSec {
				t.Errorf("callers %d of %d active, rate %.3f/s; want its one caller at >= %.1f/s",
					a.OverloadCallers, a.ActiveCallers, a.OverloadPerSec, oc.MinPerSec)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{}
			tc.fill(in)
			v := eval(t, in)
			for _, a := range v.Agents {
				if a.Overloaded != tc.want {
					t.Errorf("%s: Overloaded = %v; want %v (rate %.3f/s, baseline %.3f/s, callers %d)",
						a.Agent, a.Overloaded, tc.want, a.OverloadPerSec, a.OverloadBaselinePerSec, a.OverloadCallers)
				}
			}
			// The loop above passes on no verdicts at all: the agent must
			// be there, and no other.
			a := agent(t, v, tc.agent)
			if len(v.Agents) != 1 {
				t.Errorf("%d agent verdicts %+v; want only %s", len(v.Agents), v.Agents, tc.agent)
			}
			tc.why(t, a)
		})
	}
}

func TestRunaway(t *testing.T) {
	t.Run("one caller at 50x its baseline", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(4) {
			history(in, "research", c, q(2))
			current(in, "research", c, q(2))
		}
		current(in, "research", "caller-3", q(100)) // adds to its 2: 102 per bucket
		v := eval(t, in)
		if len(v.Callers) != 1 || v.Callers[0].Caller != "caller-3" || !v.Callers[0].Runaway {
			t.Fatalf("Callers = %+v; want caller-3 only", v.Callers)
		}
		if s := v.Callers[0].Score; s < 50 {
			t.Errorf("score = %.1f; want >= 50", s)
		}
		a := agent(t, v, "research")
		if a.RunawayCallers != 1 || a.LimitTooLow || a.Overloaded {
			t.Errorf("agent = %+v; want 1 runaway, not limit-too-low, not overloaded", a)
		}
	})
	t.Run("rise across callers is not a runaway", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(4) {
			history(in, "research", c, q(2))
			current(in, "research", c, q(100))
		}
		v := eval(t, in)
		if len(v.Callers) != 0 {
			t.Errorf("Callers = %+v; want none", v.Callers)
		}
	})
	t.Run("a rise below the absolute floor", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(4) {
			history(in, "research", c, q(0))
		}
		current(in, "research", "caller-1", q(13)) // 13/min, 13x the floor baseline
		v := eval(t, in)
		if len(v.Callers) != 0 {
			t.Errorf("Callers = %+v; want none", v.Callers)
		}
	})
	t.Run("a caller that is always this busy", func(t *testing.T) {
		in := &Input{}
		history(in, "research", "batch", q(60))
		current(in, "research", "batch", q(60))
		if v := eval(t, in); len(v.Callers) != 0 {
			t.Errorf("Callers = %+v; want none", v.Callers)
		}
	})
	t.Run("top-k bounds the per-caller series", func(t *testing.T) {
		in := &Input{}
		for i := 0; i < 40; i++ { // 40 agents, each with one runaway and 3 quiet callers
			a := fmt.Sprintf("agent-%02d", i)
			for _, c := range callers(4) {
				history(in, a, c, q(1))
			}
			current(in, a, "caller-1", q(int64(100+i)))
		}
		v := eval(t, in)
		if len(v.Callers) != DefaultConfig().TopK {
			t.Fatalf("len(Callers) = %d; want %d", len(v.Callers), DefaultConfig().TopK)
		}
		if v.Callers[0].Agent != "agent-39" {
			t.Errorf("highest score = %+v; want agent-39 first", v.Callers[0])
		}
		flagged := 0
		for _, a := range v.Agents {
			flagged += a.RunawayCallers
		}
		if flagged != 40 {
			t.Errorf("sum of RunawayCallers = %d; want 40 (the cut is only on series)", flagged)
		}
	})
}

func TestLimitTooLow(t *testing.T) {
	t.Run("all callers 429 alike", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(6) {
			history(in, "research", c, q(0))
			current(in, "research", c, q(30))
		}
		v := eval(t, in)
		a := agent(t, v, "research")
		if !a.LimitTooLow || a.QuotaRisingCallers != 6 {
			t.Errorf("LimitTooLow = %v, rising %d; want true, 6", a.LimitTooLow, a.QuotaRisingCallers)
		}
		if a.Overloaded || len(v.Callers) != 0 {
			t.Errorf("Overloaded = %v, runaways %+v; want neither", a.Overloaded, v.Callers)
		}
	})
	t.Run("worked example: 20 rejections for one caller", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(3) {
			history(in, "research", c, q(0))
		}
		current(in, "research", "orchestrator-7", q(20))
		v := eval(t, in)
		a := agent(t, v, "research")
		if a.LimitTooLow || a.Overloaded || len(v.Callers) != 0 || a.Untyped {
			t.Errorf("agent %+v, runaways %+v; want quota only, no verdict", a, v.Callers)
		}
		if a.QuotaPerSec <= 0 {
			t.Errorf("QuotaPerSec = %v; want > 0", a.QuotaPerSec)
		}
	})
	t.Run("two of ten callers rose", func(t *testing.T) {
		in := &Input{}
		for _, c := range callers(10) {
			history(in, "research", c, q(1))
			current(in, "research", c, q(1))
		}
		current(in, "research", "caller-1", q(30))
		current(in, "research", "caller-2", q(30))
		if a := agent(t, eval(t, in), "research"); a.LimitTooLow {
			t.Errorf("LimitTooLow with 2 of 10 callers rising")
		}
	})
}

func TestUntyped(t *testing.T) {
	in := &Input{}
	current(in, "bare", "c1", bare500(30))
	current(in, "typed", "c1", counts{total: 30}) // typed internal errors
	current(in, "bare429", "c1", counts{total: 30, quota: 30, untyped: 30})
	v := eval(t, in)
	if a := agent(t, v, "bare"); !a.Untyped || a.Overloaded || a.LimitTooLow || a.UntypedRatio != 1 {
		t.Errorf("bare: %+v; want untyped only", a)
	}
	if a := agent(t, v, "typed"); a.Untyped || a.UntypedRatio != 0 {
		t.Errorf("typed: %+v; want not untyped", a)
	}
	if a := agent(t, v, "bare429"); a.Untyped || a.UntypedRatio != 0 {
		t.Errorf("bare429: %+v; want a 429 without body to be quota, not an untyped error (untyped ratio 0)", a)
	}
	in = &Input{}
	history(in, "quiet", "c1", bare500(5))
	if a := agent(t, eval(t, in), "quiet"); !math.IsNaN(a.UntypedRatio) {
		t.Errorf("no replies in the window: UntypedRatio = %v; want NaN (unknown, not 0)", a.UntypedRatio)
	}
}

func TestRetryStorm(t *testing.T) {
	in := &Input{Retries: []RetryStats{
		{Agent: "a", Caller: "ignorer", Retries: 50, Paired: 40, Early: 38, WithMessageID: 50},
		{Agent: "a", Caller: "rotator", Retries: 30, Paired: 0, WithMessageID: 30, FreshMessage: 30, WithIdemKey: 30, FreshIdemKey: 30},
		{Agent: "a", Caller: "polite", Retries: 40, Paired: 40, Early: 1, WithMessageID: 40, FreshMessage: 2},
		{Agent: "a", Caller: "few", Retries: 5, Paired: 5, Early: 5, WithMessageID: 5},
	}}
	v := eval(t, in)
	got := map[string]bool{}
	for _, s := range v.RetryStorms {
		got[s.Caller+"/"+s.Reason] = true
	}
	want := map[string]bool{"ignorer/" + ReasonIgnoredRetryAfter: true,
		"rotator/" + ReasonRotatedMessageID: true, "rotator/" + ReasonRotatedIdemKey: true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("storms = %v; want %v", got, want)
	}
	if a := agent(t, v, "a"); a.RetryStormCallers != 2 || a.Overloaded {
		t.Errorf("agent a: RetryStormCallers = %d; want 2", a.RetryStormCallers)
	}
}

func TestGatewayMangling(t *testing.T) {
	in := &Input{Gateways: []GatewayStats{
		{Agent: "rewritten", Pairs: 40, StatusDiffers: 40, BodyStripped: 40, Mangled: 40,
			Rewrites: []Rewrite{{429, 502, 40}}},
		{Agent: "faithful", Pairs: 40},
		{Agent: "once", Pairs: 100, StatusDiffers: 1, Mangled: 1},
	}}
	v := eval(t, in)
	if g := agent(t, v, "rewritten").Gateway; g == nil || !g.Mangling || g.Rewrites[0].GatewayStatus != 502 {
		t.Errorf("rewritten: %+v; want mangling 429->502", g)
	}
	if g := agent(t, v, "faithful").Gateway; g == nil || g.Mangling {
		t.Errorf("faithful: %+v; want not mangling", g)
	}
	if g := agent(t, v, "once").Gateway; g == nil || g.Mangling {
		t.Errorf("once: %+v; want not mangling", g)
	}
}

func TestQuotaByLimit(t *testing.T) {
	in := &Input{}
	for i := 0; i < 8; i++ {
		in.Limits = append(in.Limits, LimitCount{Agent: "a", Limit: fmt.Sprintf("l%d", i), N: int64(90 - i)})
	}
	a := agent(t, eval(t, in), "a")
	if len(a.QuotaByLimit) != DefaultConfig().TopLimits {
		t.Fatalf("QuotaByLimit = %+v; want %d entries", a.QuotaByLimit, DefaultConfig().TopLimits)
	}
	if last := a.QuotaByLimit[len(a.QuotaByLimit)-1]; last.Limit != "other" {
		t.Errorf("last = %+v; want other", last)
	}
	if a.QuotaByLimit[0].Limit != "l0" || a.QuotaByLimit[0].PerSec != 1.5 {
		t.Errorf("first = %+v; want l0 at 1.5/s (90 in 60 s)", a.QuotaByLimit[0])
	}
}
