package alerter

import (
	"math"
	"sort"
	"time"
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
}

// AgentVerdict holds the per-agent rates and verdicts.
type AgentVerdict struct {
	Agent string

	ErrorsPerSec  float64 // all error replies in the window
	ActiveCallers int     // callers with replies in the window or the baseline

	OverloadPerSec         float64
	OverloadBaselinePerSec float64 // median over the baseline buckets
	OverloadCallers        int     // callers that got overload replies in the window
	Overloaded             bool

	QuotaPerSec        float64
	QuotaByLimit       []LimitRate
	QuotaCallers       int // callers with quota rejections in the window
	QuotaRisingCallers int // callers whose quota rate rose (LimitTooLow.RiseFactor)
	LimitTooLow        bool

	// UntypedRatio is the share of replies with no typed reason (typed = 0);
	// UnknownRatio the share that cannot tell quota from crash (untyped and
	// of kind unknown or internal: a bare 500 or 502, see Bucket.Unknown).
	// Both are NaN when the agent had no replies in the window.
	UntypedRatio float64
	UnknownRatio float64
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
	BaselinePerMin float64 // its baseline median, per minute
	Score          float64 // PerMin / max(BaselinePerMin, Runaway.MinBaseline)
	OthersRising   float64 // share of the agent's other callers that rose too
	Runaway        bool
}

// Retry storm reasons (values of the reason label).
const (
	ReasonIgnoredRetryAfter = "ignored_retry_after"
	ReasonRotatedMessageID  = "rotated_message_id"
	ReasonRotatedIdemKey    = "rotated_idempotency_key"
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

type series struct {
	window   int64           // sum over the window
	baseline map[int64]int64 // bucket start -> count, baseline buckets only
}

func (s *series) add(start, ws int64, n int64) {
	if n == 0 {
		return
	}
	if start >= ws {
		s.window += n
		return
	}
	if s.baseline == nil {
		s.baseline = make(map[int64]int64)
	}
	s.baseline[start] += n
}

// median returns the median of the baseline buckets, missing buckets being 0.
func (s *series) median(buckets int) float64 {
	if buckets <= 0 {
		return 0
	}
	vals := make([]float64, 0, buckets)
	for _, v := range s.baseline {
		vals = append(vals, float64(v))
	}
	for len(vals) < buckets {
		vals = append(vals, 0)
	}
	sort.Float64s(vals)
	m := len(vals) / 2
	if len(vals)%2 == 1 {
		return vals[m]
	}
	return (vals[m-1] + vals[m]) / 2
}

type callerAgg struct {
	caller                 string
	total, quota, overload series
	unknown, untyped       int64
}

type agentAgg struct {
	callers  map[string]*callerAgg
	overload series
}

// Evaluate computes the verdicts for in. It is pure: the same Config and
// Input give the same Verdicts.
func Evaluate(cfg *Config, in *Input) *Verdicts {
	span := cfg.SpanAt(in.Now)
	ws := span.WindowStart
	secs := span.WindowSeconds()
	if secs <= 0 {
		secs = 1
	}
	nb := span.BaselineBuckets()
	perMin := func(n int64) float64 { return float64(n) / secs * 60 }
	bucketToMin := 60 / float64(span.Bucket)

	agents := map[string]*agentAgg{}
	for _, b := range in.Buckets {
		if b.Start < span.BaselineStart || b.Start > span.End {
			continue
		}
		a := agents[b.Agent]
		if a == nil {
			a = &agentAgg{callers: map[string]*callerAgg{}}
			agents[b.Agent] = a
		}
		c := a.callers[b.Caller]
		if c == nil {
			c = &callerAgg{caller: b.Caller}
			a.callers[b.Caller] = c
		}
		c.total.add(b.Start, ws, b.Total)
		c.quota.add(b.Start, ws, b.Quota)
		c.overload.add(b.Start, ws, b.Overload)
		a.overload.add(b.Start, ws, b.Overload)
		if b.Start >= ws {
			c.unknown += b.Unknown
			c.untyped += b.Untyped
		}
	}

	v := &Verdicts{At: in.Now, WindowSeconds: secs}
	byAgent := map[string]*AgentVerdict{}
	var runaways []CallerVerdict
	for name, a := range agents {
		av := AgentVerdict{Agent: name, ActiveCallers: len(a.callers),
			UntypedRatio: math.NaN(), UnknownRatio: math.NaN()}
		var total, quota, unknown, untyped int64
		type callerScore struct {
			c            *callerAgg
			perMin, base float64
			score        float64
			rising       bool
		}
		scores := make([]callerScore, 0, len(a.callers))
		for _, c := range a.callers {
			total += c.total.window
			quota += c.quota.window
			unknown += c.unknown
			untyped += c.untyped
			if c.overload.window > 0 {
				av.OverloadCallers++
			}
			if c.quota.window > 0 {
				av.QuotaCallers++
			}
			// Limit too low: this caller's quota rejections rose.
			qRate := perMin(c.quota.window)
			qBase := math.Max(c.quota.median(nb)*bucketToMin, cfg.Runaway.MinBaseline)
			if qRate >= cfg.LimitTooLow.MinPerMin && qRate >= cfg.LimitTooLow.RiseFactor*qBase {
				av.QuotaRisingCallers++
			}
			// Runaway: this caller's errors rose.
			r := perMin(c.total.window)
			base := c.total.median(nb) * bucketToMin
			sc := r / math.Max(base, cfg.Runaway.MinBaseline)
			scores = append(scores, callerScore{c: c, perMin: r, base: base, score: sc,
				rising: sc >= cfg.Runaway.RiseFactor && r >= cfg.Runaway.RiseMinPerMin})
		}
		av.ErrorsPerSec = float64(total) / secs
		av.QuotaPerSec = float64(quota) / secs
		av.OverloadPerSec = float64(a.overload.window) / secs
		av.OverloadBaselinePerSec = a.overload.median(nb) / float64(span.Bucket)
		if total > 0 {
			av.UntypedRatio = float64(untyped) / float64(total)
			av.UnknownRatio = float64(unknown) / float64(total)
		}

		// Agent overloaded: overload replies well above the agent's own
		// baseline, above an absolute floor, and spread over callers.
		minCallers := cfg.Overload.MinCallers
		if av.ActiveCallers < minCallers {
			minCallers = av.ActiveCallers
		}
		if minCallers < 1 {
			minCallers = 1
		}
		av.Overloaded = av.OverloadPerSec >= cfg.Overload.MinPerSec &&
			av.OverloadPerSec >= cfg.Overload.Factor*av.OverloadBaselinePerSec &&
			av.OverloadCallers >= minCallers

		// Limit too low: quota rejections rose for most callers at once.
		av.LimitTooLow = av.QuotaRisingCallers >= cfg.LimitTooLow.MinCallers &&
			float64(av.QuotaRisingCallers) >= cfg.LimitTooLow.MinShare*float64(av.ActiveCallers)

		// Untyped: most replies cannot tell quota from crash.
		av.Untyped = unknown >= cfg.Untyped.MinCount && total > 0 &&
			float64(unknown)/float64(total) >= cfg.Untyped.MinShare

		// Runaway: one caller far above its own baseline while the others
		// did not rise.
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
			others := len(scores) - 1
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
				PerMin: s.perMin, BaselinePerMin: s.base, Score: s.score,
				OthersRising: share, Runaway: true})
		}
		v.Agents = append(v.Agents, av)
	}
	sort.Slice(v.Agents, func(i, j int) bool { return v.Agents[i].Agent < v.Agents[j].Agent })
	for i := range v.Agents {
		byAgent[v.Agents[i].Agent] = &v.Agents[i]
	}
	agentFor := func(name string) *AgentVerdict {
		if av := byAgent[name]; av != nil {
			return av
		}
		// Seen only by the raw-row statistics (e.g. its buckets fell just
		// outside the span): give it a row so its counts have a home.
		v.Agents = append(v.Agents, AgentVerdict{Agent: name, UntypedRatio: math.NaN(), UnknownRatio: math.NaN()})
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
	return v
}
