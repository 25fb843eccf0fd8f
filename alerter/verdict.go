package alerter

import (
	"math"
	"sort"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// Verdicts is the outcome of one evaluation.
type Verdicts struct {
	At             time.Time
	WindowSeconds  float64
	Agents         []AgentVerdict  // every agent with replies in the window or the baseline, by name
	Callers        []CallerVerdict // flagged runaway callers, highest score first, at most TopK
	RetryStorms    []RetryVerdict  // flagged retry storms, at most TopK
	DeadLetters    []DeadLetterRate
	AcceptedPerSec float64

	// HistorySeconds is the baseline errtrail has data for (from the first
	// baseline bucket with any reply); HistorySufficient says whether it
	// reaches History.Min, so that callers may be judged against their own
	// past.
	HistorySeconds    float64
	HistorySufficient bool

	// AgentsSeen counts every agent evaluated; AgentsCapped those summed
	// into OtherAgent because of TopAgents.
	AgentsSeen, AgentsCapped int
}

// AgentVerdict holds the per-agent rates and verdicts.
type AgentVerdict struct {
	Agent string

	ErrorsPerSec  float64 // all error replies in the window
	ActiveCallers int     // callers with replies in the window or the baseline

	OverloadPerSec         float64 // over the short overload window (Overload.Window)
	OverloadBaselinePerSec float64 // median over the known baseline buckets
	OverloadCallers        int     // callers that got overload replies in the overload window
	Overloaded             bool

	QuotaPerSec        float64
	QuotaByLimit       []LimitRate
	QuotaCallers       int // callers with quota rejections in the window
	QuotaRisingCallers int // callers whose quota rate rose (LimitTooLow.RiseFactor); 0 without enough history
	LimitTooLow        bool
	// LimitUndecided: the agent has quota rejections but errtrail has too
	// little history to say whether they rose (LimitTooLow is then false).
	LimitUndecided bool
	// UndecidedCallers would be runaway candidates but have neither
	// history nor enough peers to be compared with.
	UndecidedCallers int

	// UntypedRatio is the share of the agent's replies in the window that
	// are untyped errors (Bucket.Untyped), NaN when it had no replies;
	// Untyped is the verdict on it.
	UntypedRatio float64
	Untyped      bool

	RunawayCallers    int // flagged runaway callers, before the TopK cut
	RetryStormCallers int // callers with a retry storm verdict, before the TopK cut

	Gateway *GatewayVerdict // nil when no request was seen by both an agent and a gateway
}

// LimitRate is the quota rejection rate under one limit/policy name.
type LimitRate struct {
	Limit  string
	PerSec float64
}

// CallerVerdict is a runaway caller.
type CallerVerdict struct {
	Agent, Caller  string
	PerMin         float64 // the caller's error replies per minute in the window
	BaselinePerMin float64 // its baseline median (By = own) or its peers' median rate (By = peers), per minute
	Score          float64 // PerMin / max(BaselinePerMin, Runaway.MinBaseline)
	By             string  // ByOwnBaseline or ByPeers
	OthersRising   float64 // share of the agent's other callers that rose too
	Runaway        bool
}

// What a runaway caller was compared with (values of CallerVerdict.By).
const (
	ByOwnBaseline = "own_baseline"
	ByPeers       = "peers"
)

// Retry storm reasons (values of the reason label).
const (
	ReasonIgnoredRetryAfter = incidents.ReasonIgnoredRetryAfter
	ReasonRotatedMessageID  = incidents.ReasonRotatedMessageID
	ReasonRotatedIdemKey    = incidents.ReasonRotatedIdemKey
)

// RetryVerdict is one caller retrying badly against one agent.
type RetryVerdict struct {
	Agent, Caller string
	Reason        string
	Count         int64   // early or rotated retries
	Share         float64 // of the retries that could show it
}

// GatewayVerdict compares agent- and gateway-side observations of an agent.
type GatewayVerdict struct {
	Pairs, Mangled, StatusDiffers, BodyStripped int64
	Share                                       float64
	Mangling                                    bool
	Rewrites                                    []Rewrite
}

// DeadLetterRate is the dead-letter rate for one reason.
type DeadLetterRate struct {
	Reason string
	PerSec float64
}

// series holds one count per baseline bucket (bucket start -> count).
type series map[int64]int64

func (s *series) add(start, n int64) {
	if n == 0 {
		return
	}
	if *s == nil {
		*s = make(series)
	}
	(*s)[start] += n
}

// median returns the median of the last `buckets` baseline buckets, missing
// buckets being 0. The caller passes the number of known buckets (those at
// or after the history start), so buckets before errtrail had any data are
// not counted as zeros.
func (s series) median(buckets int) float64 {
	if buckets <= 0 {
		return 0
	}
	vals := make([]float64, 0, buckets)
	for _, v := range s {
		vals = append(vals, float64(v))
	}
	for len(vals) < buckets {
		vals = append(vals, 0)
	}
	sort.Float64s(vals)
	return medianSorted(vals)
}

func medianSorted(vals []float64) float64 {
	n := len(vals)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return vals[n/2]
	}
	return (vals[n/2-1] + vals[n/2]) / 2
}

// medianWithout is the median of sorted without one element equal to x
// (the caller's own rate, when comparing it with its peers).
func medianWithout(sorted []float64, x float64) float64 {
	i := sort.SearchFloat64s(sorted, x)
	if i >= len(sorted) || sorted[i] != x {
		return medianSorted(sorted)
	}
	rest := make([]float64, 0, len(sorted)-1)
	rest = append(append(rest, sorted[:i]...), sorted[i+1:]...)
	return medianSorted(rest)
}

type callerAgg struct {
	caller       string
	seen         bool // has a baseline bucket
	total, quota series
	w            WindowCount
}

type agentAgg struct {
	callers  map[string]*callerAgg
	overload series
	idle     int // callers with baseline buckets left out of callers (Input.Baseline)
}

// OtherAgent is the agent label under which the agents beyond
// Config.TopAgents are summed.
const OtherAgent = "(other)"

// Evaluate computes the verdicts for in. prev is the previous evaluation's
// verdicts (nil at start): an agent that was overloaded stays overloaded
// until its clear condition holds (hysteresis, docs/alerting.md). It is
// pure: the same Config, Input and prev give the same Verdicts.
func Evaluate(cfg *Config, in *Input, prev *Verdicts) *Verdicts {
	span := cfg.SpanAt(in.Now)
	// The same rates as Config.NeedsOwnBaseline, which decides whose
	// buckets Gather reads.
	secs := windowSeconds(span)
	perMin := func(n int64) float64 { return perMinute(n, secs) }
	bucketToMin := 60 / float64(span.Bucket)

	agents := map[string]*agentAgg{}
	agent := func(name string) *agentAgg {
		a := agents[name]
		if a == nil {
			a = &agentAgg{callers: map[string]*callerAgg{}}
			agents[name] = a
		}
		return a
	}
	caller := func(agentName, name string) *callerAgg {
		a := agent(agentName)
		c := a.callers[name]
		if c == nil {
			c = &callerAgg{caller: name}
			a.callers[name] = c
		}
		return c
	}
	// The history errtrail has: from the first baseline bucket with data.
	historyStart := span.BaselineEnd
	for _, b := range in.Buckets {
		if b.Start < span.BaselineStart || b.Start >= span.BaselineEnd {
			continue
		}
		historyStart = min(historyStart, b.Start)
		c := caller(b.Agent, b.Caller)
		c.seen = true
		c.total.add(b.Start, b.Total)
		c.quota.add(b.Start, b.Quota)
		if in.Baseline == nil {
			agents[b.Agent].overload.add(b.Start, b.Overload)
		}
	}
	// The rest of the baseline, summarized in ClickHouse: the callers left
	// out of Buckets, and the agents' overload.
	if sum := in.Baseline; sum != nil {
		if sum.HistoryStart >= span.BaselineStart && sum.HistoryStart < span.BaselineEnd {
			historyStart = min(historyStart, sum.HistoryStart)
		}
		for _, ab := range sum.Agents {
			a := agent(ab.Agent)
			a.idle += ab.IdleCallers
			for _, o := range ab.Overload {
				if o.Start >= span.BaselineStart && o.Start < span.BaselineEnd {
					a.overload.add(o.Start, o.N)
				}
			}
		}
	}
	for _, w := range in.Window {
		c := caller(w.Agent, w.Caller)
		c.w.Total += w.Total
		c.w.Quota += w.Quota
		c.w.Overload += w.Overload
		c.w.Untyped += w.Untyped
		c.w.OverloadRecent += w.OverloadRecent
		c.w.OverloadClear += w.OverloadClear
	}
	known := int((span.BaselineEnd - historyStart) / span.Bucket)
	v := &Verdicts{At: in.Now, WindowSeconds: secs, HistorySeconds: float64(int64(known) * span.Bucket)}
	v.HistorySufficient = v.HistorySeconds >= cfg.History.Min.Seconds()

	wasOverloaded := map[string]bool{}
	if prev != nil {
		for _, a := range prev.Agents {
			if a.Overloaded {
				wasOverloaded[a.Agent] = true
			}
		}
	}
	ovSecs := cfg.Overload.Window.Seconds()
	clearSecs := cfg.Overload.ClearAfter.Seconds()

	var runaways []CallerVerdict
	for name, a := range agents {
		av := AgentVerdict{Agent: name, ActiveCallers: len(a.callers) + a.idle,
			UntypedRatio: math.NaN()}
		var total, quota, untyped, ovRecent, ovClear int64
		// The window rates of the callers busy enough to be compared with
		// (at least Runaway.RiseMinPerMin errors a minute), for the peer
		// comparisons: at the onset of an incident that hits every caller,
		// the others' first few errors are no yardstick yet.
		var peerRates []float64
		for _, c := range a.callers {
			if r := perMin(c.w.Total); r >= cfg.Runaway.RiseMinPerMin && r > 0 {
				peerRates = append(peerRates, r)
			}
		}
		sort.Float64s(peerRates)

		type callerScore struct {
			c            *callerAgg
			perMin, base float64
			score        float64
			by           string
			rising       bool
		}
		scores := make([]callerScore, 0, len(a.callers))
		// Idle callers (no reply in the window, summarized) count among the
		// active callers; they can neither rise nor run away.
		for _, c := range a.callers {
			total += c.w.Total
			quota += c.w.Quota
			untyped += c.w.Untyped
			ovRecent += c.w.OverloadRecent
			ovClear += c.w.OverloadClear
			if c.w.OverloadRecent > 0 {
				av.OverloadCallers++
			}
			if c.w.Quota > 0 {
				av.QuotaCallers++
			}
			// Enough history: the caller is judged against its own past,
			// its empty buckets in that history being zeros.
			established := v.HistorySufficient
			// Limit too low: this caller's quota rejections rose.
			qRate := perMin(c.w.Quota)
			qBase := math.Max(c.quota.median(known)*bucketToMin, cfg.Runaway.MinBaseline)
			if established && qRate >= cfg.LimitTooLow.MinPerMin && qRate >= cfg.LimitTooLow.RiseFactor*qBase {
				av.QuotaRisingCallers++
			}
			// Runaway: this caller's errors rose.
			r := perMin(c.w.Total)
			base := c.total.median(known) * bucketToMin
			own := r / math.Max(base, cfg.Runaway.MinBaseline)
			s := callerScore{c: c, perMin: r, base: base, score: own, by: ByOwnBaseline,
				rising: established && own >= cfg.Runaway.RiseFactor && r >= cfg.Runaway.RiseMinPerMin}
			// Without history, or without a past of its own in it (a new
			// caller, or one that had no errors at all), a rise from nothing
			// must also stand out from the agent's other callers now.
			if (!established || !c.seen) && r >= cfg.Runaway.MinPerMin {
				peers := len(peerRates)
				if r >= cfg.Runaway.RiseMinPerMin && r > 0 {
					peers-- // c itself
				}
				switch {
				case peers >= cfg.History.MinPeers:
					// No past of its own to rise from: it must stand out
					// from the callers of the same agent right now.
					pm := medianWithout(peerRates, r)
					peer := r / math.Max(pm, cfg.Runaway.MinBaseline)
					s.base, s.by = pm, ByPeers
					if peer < s.score || !v.HistorySufficient {
						s.score = peer
					}
				case !v.HistorySufficient:
					// Neither a past nor peers: nothing can be claimed.
					av.UndecidedCallers++
					s.score = 0
				}
			}
			scores = append(scores, s)
		}
		av.ErrorsPerSec = float64(total) / secs
		av.QuotaPerSec = float64(quota) / secs
		av.OverloadPerSec = float64(ovRecent) / ovSecs
		av.OverloadBaselinePerSec = a.overload.median(known) / float64(span.Bucket)
		if total > 0 {
			av.UntypedRatio = float64(untyped) / float64(total)
		}

		// Agent overloaded: overload replies well above the agent's own
		// baseline, above an absolute floor, and spread over callers, in the
		// short overload window. Once overloaded, it holds until the rate
		// over the clear window falls below half the floor.
		minCallers := cfg.Overload.MinCallers
		if av.ActiveCallers < minCallers {
			minCallers = av.ActiveCallers
		}
		if minCallers < 1 {
			minCallers = 1
		}
		// Both need overload replies in the clear window: once they stop,
		// the verdict clears ClearAfter later, not when the longer firing
		// window has emptied.
		active := float64(ovClear)/clearSecs >= cfg.Overload.MinPerSec/2
		fire := av.OverloadPerSec >= cfg.Overload.MinPerSec &&
			av.OverloadPerSec >= cfg.Overload.Factor*av.OverloadBaselinePerSec &&
			av.OverloadCallers >= minCallers && active
		hold := wasOverloaded[name] && active
		av.Overloaded = fire || hold

		// Limit too low: quota rejections rose for most callers at once.
		// Without enough history no caller rises, so it is not claimed.
		av.LimitUndecided = !v.HistorySufficient && av.QuotaCallers > 0
		av.LimitTooLow = av.QuotaRisingCallers >= cfg.LimitTooLow.MinCallers &&
			float64(av.QuotaRisingCallers) >= cfg.LimitTooLow.MinShare*float64(av.ActiveCallers)

		// Untyped: most replies cannot tell quota from crash.
		av.Untyped = untyped >= cfg.Untyped.MinCount && total > 0 &&
			float64(untyped)/float64(total) >= cfg.Untyped.MinShare

		// Runaway: one caller far above its own baseline (or, without one,
		// its peers) while the others did not rise.
		rising := 0
		for _, s := range scores {
			if s.rising {
				rising++
			}
		}
		for _, s := range scores {
			if s.score < cfg.Runaway.Factor || s.perMin < cfg.Runaway.MinPerMin {
				continue
			}
			if s.by == ByPeers && av.Overloaded {
				// The agent fails for everyone: without a past of its own,
				// a caller's errors cannot be told from the others' (at the
				// onset the others' first errors are no yardstick yet).
				av.UndecidedCallers++
				continue
			}
			others := len(scores) + a.idle - 1
			othersRising := rising
			if s.rising {
				othersRising--
			}
			share := 0.0
			if others > 0 {
				share = float64(othersRising) / float64(others)
			}
			if share >= cfg.Runaway.MaxOthersRisingShare {
				continue
			}
			av.RunawayCallers++
			runaways = append(runaways, CallerVerdict{Agent: name, Caller: s.c.caller,
				PerMin: s.perMin, BaselinePerMin: s.base, Score: s.score, By: s.by,
				OthersRising: share, Runaway: true})
		}
		v.Agents = append(v.Agents, av)
	}
	sort.Slice(v.Agents, func(i, j int) bool { return v.Agents[i].Agent < v.Agents[j].Agent })
	byAgent := map[string]*AgentVerdict{}
	for i := range v.Agents {
		byAgent[v.Agents[i].Agent] = &v.Agents[i]
	}
	agentFor := func(name string) *AgentVerdict {
		if av := byAgent[name]; av != nil {
			return av
		}
		// Seen only by the raw-row statistics (e.g. its buckets fell just
		// outside the span): give it a row so its counts have a home.
		v.Agents = append(v.Agents, AgentVerdict{Agent: name, UntypedRatio: math.NaN()})
		for i := range v.Agents {
			byAgent[v.Agents[i].Agent] = &v.Agents[i]
		}
		return byAgent[name]
	}

	// Quota by limit, top TopLimits per agent, the rest as "other".
	limits := map[string][]LimitCount{}
	for _, l := range in.Limits {
		limits[l.Agent] = append(limits[l.Agent], l)
	}
	for agent, ls := range limits {
		sort.Slice(ls, func(i, j int) bool {
			if ls[i].N != ls[j].N {
				return ls[i].N > ls[j].N
			}
			return ls[i].Limit < ls[j].Limit
		})
		var out []LimitRate
		var other int64
		for i, l := range ls {
			if i < cfg.TopLimits-1 || len(ls) <= cfg.TopLimits {
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
		agentFor(agent).QuotaByLimit = out
	}

	sort.Slice(runaways, func(i, j int) bool {
		if runaways[i].Score != runaways[j].Score {
			return runaways[i].Score > runaways[j].Score
		}
		return runaways[i].Agent+"\x00"+runaways[i].Caller < runaways[j].Agent+"\x00"+runaways[j].Caller
	})
	if len(runaways) > cfg.TopK {
		runaways = runaways[:cfg.TopK]
	}
	v.Callers = runaways

	// Retry storms.
	var storms []RetryVerdict
	for _, r := range in.Retries {
		flagged := false
		if r.Early >= cfg.Retry.MinEarly && r.Paired > 0 {
			if sh := float64(r.Early) / float64(r.Paired); sh >= cfg.Retry.MinEarlyShare {
				storms = append(storms, RetryVerdict{r.Agent, r.Caller, ReasonIgnoredRetryAfter, r.Early, sh})
				flagged = true
			}
		}
		if r.FreshMessage >= cfg.Retry.MinRotated && r.WithMessageID > 0 {
			if sh := float64(r.FreshMessage) / float64(r.WithMessageID); sh >= cfg.Retry.MinRotatedShare {
				storms = append(storms, RetryVerdict{r.Agent, r.Caller, ReasonRotatedMessageID, r.FreshMessage, sh})
				flagged = true
			}
		}
		if r.FreshIdemKey >= cfg.Retry.MinRotated && r.WithIdemKey > 0 {
			if sh := float64(r.FreshIdemKey) / float64(r.WithIdemKey); sh >= cfg.Retry.MinRotatedShare {
				storms = append(storms, RetryVerdict{r.Agent, r.Caller, ReasonRotatedIdemKey, r.FreshIdemKey, sh})
				flagged = true
			}
		}
		if flagged {
			agentFor(r.Agent).RetryStormCallers++
		}
	}
	sort.Slice(storms, func(i, j int) bool {
		if storms[i].Count != storms[j].Count {
			return storms[i].Count > storms[j].Count
		}
		a, b := storms[i], storms[j]
		return a.Agent+"\x00"+a.Caller+"\x00"+a.Reason < b.Agent+"\x00"+b.Caller+"\x00"+b.Reason
	})
	if len(storms) > cfg.TopK {
		storms = storms[:cfg.TopK]
	}
	v.RetryStorms = storms

	// Gateway mangling.
	for _, g := range in.Gateways {
		if g.Pairs == 0 {
			continue
		}
		gv := &GatewayVerdict{Pairs: g.Pairs, Mangled: g.Mangled, StatusDiffers: g.StatusDiffers,
			BodyStripped: g.BodyStripped, Share: float64(g.Mangled) / float64(g.Pairs),
			Rewrites: append([]Rewrite(nil), g.Rewrites...)}
		gv.Mangling = g.Mangled >= cfg.Gateway.MinMangled && gv.Share >= cfg.Gateway.MinShare
		agentFor(g.Agent).Gateway = gv
	}

	for _, d := range in.DeadLetters {
		reason := d.Reason
		if reason == "" {
			reason = "unknown"
		}
		v.DeadLetters = append(v.DeadLetters, DeadLetterRate{Reason: reason, PerSec: float64(d.N) / secs})
	}
	sort.Slice(v.DeadLetters, func(i, j int) bool { return v.DeadLetters[i].Reason < v.DeadLetters[j].Reason })
	v.AcceptedPerSec = float64(in.Accepted) / secs
	sort.Slice(v.Agents, func(i, j int) bool { return v.Agents[i].Agent < v.Agents[j].Agent })
	capAgents(cfg, v)
	return v
}
