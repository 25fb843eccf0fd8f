package alerter

import (
	"math"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// IncidentHold is how long each verdict must hold before it is an episode:
// the "for" of its alert in alerts/verdicts.yml (TestUnitIncidentHoldMatchesAlerts
// keeps them equal), so that an episode is an alert that fired and a blip
// the alerts ignore is no incident either. Undecided has no alert; it gets
// the tickets' minute.
var IncidentHold = map[incidents.Kind]time.Duration{
	incidents.Overload:        15 * time.Second,
	incidents.Runaway:         time.Minute,
	incidents.LimitTooLow:     time.Minute,
	incidents.RetryStorm:      time.Minute,
	incidents.GatewayMangling: time.Minute,
	incidents.UntypedErrors:   2 * time.Minute,
	incidents.Undecided:       time.Minute,
}

// IncidentKeep is how long an open episode whose verdict no longer holds
// stays open: the keep_firing_for of its alert in alerts/verdicts.yml
// (TestUnitIncidentHoldMatchesAlerts), so that a verdict that clears for a
// moment and comes back is one episode, as it is one page. A kind without
// one ends at the first evaluation that does not find it.
var IncidentKeep = map[incidents.Kind]time.Duration{
	incidents.Overload: 10 * time.Second,
}

// IncidentGap is how long an open episode may go unwritten and still be
// continued: the 3 h for which the alerts hold a verdict while no alerter
// can see (alerts/verdicts.yml, last_over_time(...[3h])).
const IncidentGap = 3 * time.Hour

// Reasons of an undecided episode: the verdict errtrail could not decide.
const (
	UndecidedLimit   = "limit_too_low"
	UndecidedRunaway = "runaway"
)

// observation is what one evaluation says about one episode key.
type observation struct {
	detail                string
	rate, baseline, score float64
	callers               uint32
	count                 uint64
}

// observe lists the verdicts of v that are true, by episode key. Quota
// rejections alone give none: only limit_too_low, a verdict on the agent's
// limit, and undecided (errtrail could not yet tell) come from quota.
func observe(cfg *Config, v *Verdicts) map[incidents.Key]observation {
	out := map[incidents.Key]observation{}
	key := func(k incidents.Kind, agent, caller, reason string) incidents.Key {
		return incidents.Key{Kind: k, Agent: agent, Caller: caller, Reason: reason}
	}
	n := func(perSec, secs float64) uint64 {
		if perSec <= 0 || math.IsNaN(perSec) {
			return 0
		}
		return uint64(math.Round(perSec * secs))
	}
	for _, a := range v.Agents {
		if a.Agent == OtherAgent {
			continue // a sum of agents, never a verdict (capAgents)
		}
		if a.Overloaded {
			out[key(incidents.Overload, a.Agent, "", "")] = observation{
				rate: a.OverloadPerSec, baseline: a.OverloadBaselinePerSec,
				callers: uint32(a.OverloadCallers), count: n(a.OverloadPerSec, cfg.Overload.Window.Seconds())}
		}
		if a.LimitTooLow {
			out[key(incidents.LimitTooLow, a.Agent, "", "")] = observation{
				rate: a.QuotaPerSec, callers: uint32(a.QuotaRisingCallers), count: n(a.QuotaPerSec, v.WindowSeconds)}
		}
		if a.Untyped {
			out[key(incidents.UntypedErrors, a.Agent, "", "")] = observation{
				rate: a.ErrorsPerSec, score: a.UntypedRatio, count: n(a.ErrorsPerSec*a.UntypedRatio, v.WindowSeconds)}
		}
		if g := a.Gateway; g != nil && g.Mangling {
			out[key(incidents.GatewayMangling, a.Agent, "", "")] = observation{
				score: g.Share, count: uint64(max(g.Mangled, 0))}
		}
		if a.LimitUndecided {
			out[key(incidents.Undecided, a.Agent, "", UndecidedLimit)] = observation{
				rate: a.QuotaPerSec, callers: uint32(a.QuotaCallers), count: n(a.QuotaPerSec, v.WindowSeconds)}
		}
		if a.UndecidedCallers > 0 {
			out[key(incidents.Undecided, a.Agent, "", UndecidedRunaway)] = observation{
				callers: uint32(a.UndecidedCallers)}
		}
	}
	for _, c := range v.Callers {
		if !c.Runaway {
			continue
		}
		out[key(incidents.Runaway, c.Agent, c.Caller, "")] = observation{
			detail: c.By, rate: c.PerMin / 60, baseline: c.BaselinePerMin / 60, score: c.Score,
			count: n(c.PerMin/60, v.WindowSeconds)}
	}
	for _, s := range v.RetryStorms {
		out[key(incidents.RetryStorm, s.Agent, s.Caller, s.Reason)] = observation{
			score: s.Share, count: uint64(max(s.Count, 0))}
	}
	return out
}

// episodeStep is the pure part of Recorder.Record: from what the evaluation
// at now observed, the open episodes stored (by key, the earliest start when
// a race left two), the episodes this recorder continues (mine) and the
// verdicts not yet held long enough (pending, the first evaluation that
// found each), with hold and keep by kind (IncidentHold, IncidentKeep), it
// returns the rows to write and updates mine and pending.
//
//   - A verdict that holds continues its stored open episode (an alerter
//     restarted mid-episode, or another alerter's), else the one this
//     recorder continues (reopened if another alerter closed it while this
//     one still found the verdict), else it opens one once it has held for
//     hold[kind], dated from its first evaluation.
//   - A stored open episode whose verdict does not hold ends at now, once
//     it has not held for keep[kind] (IncidentKeep: its alert keeps firing
//     that long); found again before that, it goes on.
//   - This recorder's own memory of an episode counts only across
//     consecutive evaluations (at most `continuity` apart): after a gap in
//     its own view (an outage, a restart), only the stored open episodes
//     carry an episode on, and one another alerter ended meanwhile stays
//     ended.
//   - A stored open episode nobody wrote for IncidentGap (every alerter down
//     or blind longer than the alerts hold a verdict) ends at its last
//     evaluation: what came after is unknown, and a verdict found now opens
//     a new episode.
func episodeStep(now time.Time, continuity time.Duration, writer string, hold, keep map[incidents.Kind]time.Duration,
	obs map[incidents.Key]observation, stored map[incidents.Key]incidents.Incident,
	mine map[incidents.Key]incidents.Incident, pending map[incidents.Key]time.Time) []incidents.Incident {
	now = now.UTC().Truncate(time.Second)
	version := uint64(now.UnixMilli())
	var out []incidents.Incident
	for k, m := range mine {
		if now.Sub(m.LastSeen) > continuity {
			delete(mine, k)
		}
	}
	for k, cur := range stored {
		if cur.Open() && now.Sub(cur.LastSeen) > IncidentGap {
			cur.End, cur.Writer, cur.Version = cur.LastSeen, writer, version
			out = append(out, cur)
			delete(stored, k)
			delete(mine, k)
		}
	}
	for k, o := range obs {
		cur, ok := stored[k]
		if m, have := mine[k]; have && (!ok || m.Start.Equal(cur.Start)) {
			if ok {
				cur = mergePeaks(cur, m)
			} else {
				cur, ok = m, true
			}
		}
		if !ok {
			first, seen := pending[k]
			if !seen {
				first = now
				pending[k] = now
			}
			if now.Sub(first) < hold[k.Kind] {
				continue
			}
			cur = incidents.Incident{Kind: k.Kind, Agent: k.Agent, Caller: k.Caller, Reason: k.Reason,
				Start: first, Fired: now}
		}
		delete(pending, k)
		cur.LastSeen, cur.End = now, time.Time{}
		cur.Evaluations++
		if o.detail != "" {
			cur.Detail = o.detail
		}
		if o.rate >= cur.PeakRate {
			cur.PeakRate, cur.BaselineRate = o.rate, o.baseline
		}
		cur.PeakScore = math.Max(cur.PeakScore, o.score)
		cur.PeakCallers = max(cur.PeakCallers, o.callers)
		cur.PeakCount = max(cur.PeakCount, o.count)
		cur.Writer, cur.Version = writer, version
		mine[k] = cur
		out = append(out, cur)
	}
	for k := range pending {
		if _, ok := obs[k]; !ok {
			delete(pending, k) // a blip: no alert, no incident
		}
	}
	for k, cur := range stored {
		if _, ok := obs[k]; ok || !cur.Open() || now.Sub(cur.LastSeen) < keep[k.Kind] {
			continue
		}
		cur.End, cur.Writer, cur.Version = now, writer, version
		out = append(out, cur)
	}
	for k := range mine {
		if _, ok := obs[k]; !ok {
			delete(mine, k)
		}
	}
	return out
}

// mergePeaks returns stored with the peaks of m where they are higher (two
// alerters writing one episode each keep their own peaks).
func mergePeaks(stored, m incidents.Incident) incidents.Incident {
	if m.PeakRate > stored.PeakRate {
		stored.PeakRate, stored.BaselineRate = m.PeakRate, m.BaselineRate
	}
	stored.PeakScore = math.Max(stored.PeakScore, m.PeakScore)
	stored.PeakCallers = max(stored.PeakCallers, m.PeakCallers)
	stored.PeakCount = max(stored.PeakCount, m.PeakCount)
	stored.Evaluations = max(stored.Evaluations, m.Evaluations)
	return stored
}
