package alerter

import (
	"math"
	"sort"
)

// The verdict rules, one function per verdict (docs/alerting.md defines
// each). They are pure: counts and rates in, a verdict out. Evaluate
// (verdict.go) gathers their inputs from an Input and puts their answers
// together into Verdicts.

// callerScore is how far one caller's errors in the window rose: against
// its own baseline, or, without a past of its own, against its peers.
type callerScore struct {
	caller       string
	perMin, base float64 // the caller's rate and what it was compared with, per minute
	score        float64 // perMin / max(base, Runaway.MinBaseline); 0 when undecided
	by           string  // ByOwnBaseline or ByPeers
	rising       bool    // rose against its own baseline (Runaway.RiseFactor)
}

// peerRates are the window rates of an agent's callers busy enough to be
// compared with (at least Runaway.RiseMinPerMin errors a minute), sorted:
// at the onset of an incident that hits every caller, the others' first
// few errors are no yardstick yet.
func peerRates(r RunawayConfig, perMin []float64) []float64 {
	var out []float64
	for _, x := range perMin {
		if x >= r.RiseMinPerMin && x > 0 {
			out = append(out, x)
		}
	}
	sort.Float64s(out)
	return out
}

// scoreCaller scores one caller whose window rate is perMin and whose
// baseline median is base (per minute). established: errtrail has enough
// history (Verdicts.HistorySufficient); seen: the caller has baseline
// buckets in it. peers are the agent's peerRates, the caller's own rate
// among them. undecided: the caller would be a candidate but has neither
// a past nor enough peers to be compared with (its score is then 0).
func scoreCaller(cfg *Config, caller string, perMin, base float64, established, seen bool, peers []float64) (s callerScore, undecided bool) {
	r := cfg.Runaway
	own := perMin / math.Max(base, r.MinBaseline)
	s = callerScore{caller: caller, perMin: perMin, base: base, score: own, by: ByOwnBaseline,
		rising: established && own >= r.RiseFactor && perMin >= r.RiseMinPerMin}
	// Without history, or without a past of its own in it (a new caller,
	// or one that had no errors at all), a rise from nothing must also
	// stand out from the agent's other callers now.
	if (established && seen) || perMin < r.MinPerMin {
		return s, false
	}
	n := len(peers)
	if perMin >= r.RiseMinPerMin && perMin > 0 {
		n-- // the caller itself
	}
	switch {
	case n >= cfg.History.MinPeers:
		// No past of its own to rise from: it must stand out from the
		// callers of the same agent right now.
		pm := medianWithout(peers, perMin)
		peer := perMin / math.Max(pm, r.MinBaseline)
		s.base, s.by = pm, ByPeers
		if peer < s.score || !established {
			s.score = peer
		}
	case !established:
		// Neither a past nor peers: nothing can be claimed.
		s.score = 0
		return s, true
	}
	return s, false
}

// quotaRising reports whether one caller's quota rejections rose: a rate
// of qPerMin against a baseline median of qBase per minute, judged only
// with enough history.
func quotaRising(l LimitTooLowConfig, minBaseline, qPerMin, qBase float64, established bool) bool {
	return established && qPerMin >= l.MinPerMin && qPerMin >= l.RiseFactor*math.Max(qBase, minBaseline)
}

// overloaded is the overload verdict of one agent: overload replies well
// above the agent's own baseline, above an absolute floor, and spread over
// callers, in the short overload window. Once overloaded (was), it holds
// until the rate over the clear window (clearCount replies in
// Overload.ClearAfter) falls below half the floor. It reads av's
// OverloadPerSec, OverloadBaselinePerSec, OverloadCallers and
// ActiveCallers.
func overloaded(o OverloadConfig, av *AgentVerdict, clearCount int64, was bool) bool {
	minCallers := overloadSpread(o, av.ActiveCallers)
	// Both need overload replies in the clear window: once they stop, the
	// verdict clears ClearAfter later, not when the longer firing window
	// has emptied.
	active := float64(clearCount)/o.ClearAfter.Seconds() >= o.MinPerSec/2
	fire := av.OverloadPerSec >= o.MinPerSec &&
		av.OverloadPerSec >= o.Factor*av.OverloadBaselinePerSec &&
		av.OverloadCallers >= minCallers && active
	return fire || (was && active)
}

// overloadSpread is how many of an agent's active callers must get
// overload replies for an overload to count as the agent's:
// Overload.MinCallers, or all of them when it has fewer, and at least one.
func overloadSpread(o OverloadConfig, active int) int {
	return max(1, min(o.MinCallers, active))
}

// failingForMany reports whether the scoring window holds the agent's
// failing for several callers: overload replies (overload of them, over
// secs) at the overload verdict's floor, from callers callers of active,
// its spread. It does not ask for the verdict itself, which clears while
// ingest runs more than its clear window behind (seen for three
// evaluations in a row, two suites at once) and after the fault while the
// window still holds it. A caller's runaway score counts those replies
// too, so a caller judged only by its peers cannot be told from the
// agent's failing while this holds.
func failingForMany(o OverloadConfig, overload int64, callers, active int, secs float64) bool {
	return secs > 0 && callers >= overloadSpread(o, active) && float64(overload)/secs >= o.MinPerSec
}

// limitTooLow is the limit-too-low verdict of one agent: quota rejections
// rose for most callers at once (av.QuotaRisingCallers of
// av.ActiveCallers). Without enough history no caller rises, so it is not
// claimed: undecided when the agent has quota rejections then.
func limitTooLow(l LimitTooLowConfig, av *AgentVerdict, established bool) (tooLow, undecided bool) {
	undecided = !established && av.QuotaCallers > 0
	tooLow = av.QuotaRisingCallers >= l.MinCallers &&
		float64(av.QuotaRisingCallers) >= l.MinShare*float64(av.ActiveCallers)
	return tooLow, undecided
}

// untypedErrors is the untyped-errors verdict of one agent: most of its
// total replies in the window (untyped of them) cannot tell quota from
// crash.
func untypedErrors(u UntypedConfig, untyped, total int64) bool {
	return untyped >= u.MinCount && total > 0 && float64(untyped)/float64(total) >= u.MinShare
}

// runaways are the runaway callers of agent among scores: one caller far
// above its own baseline (or, without one, its peers) while the others did
// not rise. idle callers (no reply in the window) count among the others
// and never rise. Under an overload (agentOverloaded: the verdict now or
// at the previous evaluation, or the window's overload replies,
// failingForMany) a caller judged by its peers is undecided instead: its
// errors cannot be told from the others'.
func runaways(r RunawayConfig, agent string, scores []callerScore, idle int, agentOverloaded bool) (out []CallerVerdict, undecided int) {
	rising := 0
	for _, s := range scores {
		if s.rising {
			rising++
		}
	}
	for _, s := range scores {
		if s.score < r.Factor || s.perMin < r.MinPerMin {
			continue
		}
		if s.by == ByPeers && agentOverloaded {
			// The agent fails for everyone: without a past of its own, a
			// caller's errors cannot be told from the others' (at the
			// onset the others' first errors are no yardstick yet).
			undecided++
			continue
		}
		others := len(scores) + idle - 1
		othersRising := rising
		if s.rising {
			othersRising--
		}
		share := 0.0
		if others > 0 {
			share = float64(othersRising) / float64(others)
		}
		if share >= r.MaxOthersRisingShare {
			continue
		}
		out = append(out, CallerVerdict{Agent: agent, Caller: s.caller, PerMin: s.perMin, BaselinePerMin: s.base,
			Score: s.score, By: s.by, OthersRising: share, Runaway: true})
	}
	return out, undecided
}

// topRunaways orders runaway callers by score (highest first, then by
// agent and caller) and keeps the first k.
func topRunaways(rs []CallerVerdict, k int) []CallerVerdict {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Score != rs[j].Score {
			return rs[i].Score > rs[j].Score
		}
		return rs[i].Agent+"\x00"+rs[i].Caller < rs[j].Agent+"\x00"+rs[j].Caller
	})
	if len(rs) > k {
		rs = rs[:k]
	}
	return rs
}

// quotaByLimit is one agent's quota rejection rate per limit name in a
// window of secs seconds: the top limits by count, the rest summed as
// "other", an empty name as "unnamed".
func quotaByLimit(top int, ls []LimitCount, secs float64) []LimitRate {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].N != ls[j].N {
			return ls[i].N > ls[j].N
		}
		return ls[i].Limit < ls[j].Limit
	})
	var out []LimitRate
	var other int64
	for i, l := range ls {
		if i < top-1 || len(ls) <= top {
			name := l.Limit
			if name == "" {
				name = "unnamed"
			}
			out = append(out, LimitRate{Limit: name, PerSec: float64(l.N) / secs})
		} else {
			other += l.N
		}
	}
	if other > 0 {
		out = append(out, LimitRate{Limit: "other", PerSec: float64(other) / secs})
	}
	return out
}

// retryStorms are the retry-storm verdicts of one caller of one agent, one
// per reason that holds: retries sooner than the delay the previous reply
// gave, or under a fresh message id or idempotency key.
func retryStorms(r RetryConfig, s RetryStats) []RetryVerdict {
	var out []RetryVerdict
	if s.Early >= r.MinEarly && s.Paired > 0 {
		if sh := float64(s.Early) / float64(s.Paired); sh >= r.MinEarlyShare {
			out = append(out, RetryVerdict{s.Agent, s.Caller, ReasonIgnoredRetryAfter, s.Early, sh})
		}
	}
	if s.FreshMessage >= r.MinRotated && s.WithMessageID > 0 {
		if sh := float64(s.FreshMessage) / float64(s.WithMessageID); sh >= r.MinRotatedShare {
			out = append(out, RetryVerdict{s.Agent, s.Caller, ReasonRotatedMessageID, s.FreshMessage, sh})
		}
	}
	if s.FreshIdemKey >= r.MinRotated && s.WithIdemKey > 0 {
		if sh := float64(s.FreshIdemKey) / float64(s.WithIdemKey); sh >= r.MinRotatedShare {
			out = append(out, RetryVerdict{s.Agent, s.Caller, ReasonRotatedIdemKey, s.FreshIdemKey, sh})
		}
	}
	return out
}

// topStorms orders retry storms by count (highest first, then by agent,
// caller and reason) and keeps the first k.
func topStorms(ss []RetryVerdict, k int) []RetryVerdict {
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].Count != ss[j].Count {
			return ss[i].Count > ss[j].Count
		}
		a, b := ss[i], ss[j]
		return a.Agent+"\x00"+a.Caller+"\x00"+a.Reason < b.Agent+"\x00"+b.Caller+"\x00"+b.Reason
	})
	if len(ss) > k {
		ss = ss[:k]
	}
	return ss
}

// gatewayMangling compares the agent- and gateway-side observations of one
// agent: nil when no request was seen by both, else the verdict, mangling
// when enough pairs, and a large enough share of them, differ.
func gatewayMangling(g GatewayConfig, s GatewayStats) *GatewayVerdict {
	if s.Pairs == 0 {
		return nil
	}
	gv := &GatewayVerdict{Pairs: s.Pairs, Mangled: s.Mangled, StatusDiffers: s.StatusDiffers,
		BodyStripped: s.BodyStripped, Share: float64(s.Mangled) / float64(s.Pairs),
		Rewrites: append([]Rewrite(nil), s.Rewrites...)}
	gv.Mangling = s.Mangled >= g.MinMangled && gv.Share >= g.MinShare
	return gv
}

// deadLetterRates are the pipeline's dead-letter rates by reason in a
// window of secs seconds, by reason name, an empty reason as "unknown".
func deadLetterRates(ds []DeadLetterCount, secs float64) []DeadLetterRate {
	var out []DeadLetterRate
	for _, d := range ds {
		reason := d.Reason
		if reason == "" {
			reason = "unknown"
		}
		out = append(out, DeadLetterRate{Reason: reason, PerSec: float64(d.N) / secs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}
