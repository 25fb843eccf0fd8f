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
// pure: the same Config, Input and prev give the same Verdicts. Each
// verdict is one rule of rules.go; Evaluate feeds them and puts their
// answers together.
func Evaluate(cfg *Config, in *Input, prev *Verdicts) *Verdicts {
	span := cfg.SpanAt(in.Now)
	// The same rates as Config.NeedsOwnBaseline, which decides whose
	// buckets Gather reads.
	secs := windowSeconds(span)
	agents, historyStart := aggregate(span, in)
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
	j := judge{cfg: cfg, span: span, secs: secs, known: known, established: v.HistorySufficient}
	var runaways []CallerVerdict
	for name, a := range agents {
		av, rs := j.agent(name, a, wasOverloaded[name])
		v.Agents = append(v.Agents, av)
		runaways = append(runaways, rs...)
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

	limits := map[string][]LimitCount{}
	for _, l := range in.Limits {
		limits[l.Agent] = append(limits[l.Agent], l)
	}
	for agent, ls := range limits {
		agentFor(agent).QuotaByLimit = quotaByLimit(cfg.TopLimits, ls, secs)
	}
	v.Callers = topRunaways(runaways, cfg.TopK)

	var storms []RetryVerdict
	for _, r := range in.Retries {
		if rs := retryStorms(cfg.Retry, r); len(rs) > 0 {
			storms = append(storms, rs...)
			agentFor(r.Agent).RetryStormCallers++
		}
	}
	v.RetryStorms = topStorms(storms, cfg.TopK)

	for _, g := range in.Gateways {
		if gv := gatewayMangling(cfg.Gateway, g); gv != nil {
			agentFor(g.Agent).Gateway = gv
		}
	}

	v.DeadLetters = deadLetterRates(in.DeadLetters, secs)
	v.AcceptedPerSec = float64(in.Accepted) / secs
	sort.Slice(v.Agents, func(i, j int) bool { return v.Agents[i].Agent < v.Agents[j].Agent })
	capAgents(cfg, v)
	return v
}

// aggregate sums in's baseline and window per agent and caller, and finds
// the start of the history errtrail has: the first baseline bucket with
// data (span.BaselineEnd when there is none).
func aggregate(span Span, in *Input) (map[string]*agentAgg, int64) {
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
	return agents, historyStart
}

// judge is what every agent of one evaluation is judged against.
type judge struct {
	cfg         *Config
	span        Span
	secs        float64 // the window's length
	known       int     // baseline buckets since the history start
	established bool    // Verdicts.HistorySufficient
}

// perMin is n replies in the window as a rate per minute.
func (j *judge) perMin(n int64) float64 { return perMinute(n, j.secs) }

// agent gives one agent's rates and verdicts, and its runaway callers
// (before the TopK cut). was: it was overloaded at the previous
// evaluation.
func (j *judge) agent(name string, a *agentAgg, was bool) (AgentVerdict, []CallerVerdict) {
	cfg := j.cfg
	bucketToMin := 60 / float64(j.span.Bucket)
	av := AgentVerdict{Agent: name, ActiveCallers: len(a.callers) + a.idle, UntypedRatio: math.NaN()}
	rates := make([]float64, 0, len(a.callers))
	for _, c := range a.callers {
		rates = append(rates, j.perMin(c.w.Total))
	}
	peers := peerRates(cfg.Runaway, rates)
	var sum WindowCount  // the agent's window, over its callers
	overloadCallers := 0 // callers with overload replies in the window
	scores := make([]callerScore, 0, len(a.callers))
	// Idle callers (no reply in the window, summarized) count among the
	// active callers; they can neither rise nor run away.
	for _, c := range a.callers {
		sum.Total += c.w.Total
		sum.Quota += c.w.Quota
		sum.Untyped += c.w.Untyped
		sum.OverloadRecent += c.w.OverloadRecent
		sum.OverloadClear += c.w.OverloadClear
		sum.Overload += c.w.Overload
		if c.w.Overload > 0 {
			overloadCallers++
		}
		if c.w.OverloadRecent > 0 {
			av.OverloadCallers++
		}
		if c.w.Quota > 0 {
			av.QuotaCallers++
		}
		// Enough history: the caller is judged against its own past, its
		// empty buckets in that history being zeros.
		if quotaRising(cfg.LimitTooLow, cfg.Runaway.MinBaseline, j.perMin(c.w.Quota),
			c.quota.median(j.known)*bucketToMin, j.established) {
			av.QuotaRisingCallers++
		}
		s, undecided := scoreCaller(cfg, c.caller, j.perMin(c.w.Total), c.total.median(j.known)*bucketToMin,
			j.established, c.seen, peers)
		if undecided {
			av.UndecidedCallers++
		}
		scores = append(scores, s)
	}
	av.ErrorsPerSec = float64(sum.Total) / j.secs
	av.QuotaPerSec = float64(sum.Quota) / j.secs
	av.OverloadPerSec = float64(sum.OverloadRecent) / cfg.Overload.Window.Seconds()
	av.OverloadBaselinePerSec = a.overload.median(j.known) / float64(j.span.Bucket)
	if sum.Total > 0 {
		av.UntypedRatio = float64(sum.Untyped) / float64(sum.Total)
	}
	av.Overloaded = overloaded(cfg.Overload, &av, sum.OverloadClear, was)
	av.LimitTooLow, av.LimitUndecided = limitTooLow(cfg.LimitTooLow, &av, j.established)
	av.Untyped = untypedErrors(cfg.Untyped, sum.Untyped, sum.Total)
	// Overloaded now or at the previous evaluation, or failing for several
	// callers in the window: a verdict that clears while ingest is behind
	// (its clear window empty; the page's keep_firing_for covers it)
	// leaves the callers' errors the agent's failing all the same.
	failing := failingForMany(cfg.Overload, sum.Overload, overloadCallers, av.ActiveCallers, j.secs)
	rs, undecided := runaways(cfg.Runaway, name, scores, a.idle, av.Overloaded || was || failing)
	av.UndecidedCallers += undecided
	av.RunawayCallers = len(rs)
	return av, rs
}
