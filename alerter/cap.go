package alerter

import (
	"math"
	"sort"
)

// flagged reports whether any verdict of a is true: such an agent is always
// exported, whatever the cap.
func (a *AgentVerdict) flagged() bool {
	return a.Overloaded || a.LimitTooLow || a.Untyped || a.RunawayCallers > 0 ||
		a.RetryStormCallers > 0 || (a.Gateway != nil && a.Gateway.Mangling)
}

// capAgents bounds the agent label. Agent names come from producers, so
// their number is not errtrail's to choose: past cfg.TopAgents, the agents
// with a verdict are kept, then the busiest (error rate in the window, then
// active callers); the rest are summed into one OtherAgent row whose
// verdicts are all false. v.AgentsSeen and v.AgentsCapped say how many.
func capAgents(cfg *Config, v *Verdicts) {
	v.AgentsSeen = len(v.Agents)
	if len(v.Agents) <= cfg.TopAgents {
		return
	}
	order := make([]int, len(v.Agents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := &v.Agents[order[i]], &v.Agents[order[j]]
		if fa, fb := a.flagged(), b.flagged(); fa != fb {
			return fa
		}
		if a.ErrorsPerSec != b.ErrorsPerSec {
			return a.ErrorsPerSec > b.ErrorsPerSec
		}
		if a.ActiveCallers != b.ActiveCallers {
			return a.ActiveCallers > b.ActiveCallers
		}
		return a.Agent < b.Agent
	})
	// One slot goes to the OtherAgent row.
	keep := cfg.TopAgents - 1
	for keep < len(order) && v.Agents[order[keep]].flagged() {
		keep++
	}
	other := AgentVerdict{Agent: OtherAgent, UntypedRatio: math.NaN()}
	kept := make([]AgentVerdict, 0, keep+1)
	for i, idx := range order {
		a := v.Agents[idx]
		if i < keep {
			kept = append(kept, a)
			continue
		}
		v.AgentsCapped++
		other.ErrorsPerSec += a.ErrorsPerSec
		other.ActiveCallers += a.ActiveCallers
		other.OverloadPerSec += a.OverloadPerSec
		other.OverloadBaselinePerSec += a.OverloadBaselinePerSec
		other.OverloadCallers += a.OverloadCallers
		other.QuotaPerSec += a.QuotaPerSec
		other.QuotaCallers += a.QuotaCallers
		other.QuotaRisingCallers += a.QuotaRisingCallers
		other.UndecidedCallers += a.UndecidedCallers
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Agent < kept[j].Agent })
	v.Agents = append(kept, other)
}
