package report

import (
	"time"
)

// Over is a report's rules over time: the range cut into steps (hours for a
// range of up to OverHourly, else days, aligned to UTC), and per step the
// replies counted and, for each rule broken in the range, the replies that
// broke it. It counts what the report counts (the same observer per agent),
// so each rule's steps add up to its Rule.Replies and the steps' replies to
// Report.Replies.
type Over struct {
	Step    string      `json:"step"`    // "hour" or "day"
	Starts  []time.Time `json:"starts"`  // each step's start, UTC; the first holds the range's from
	Replies []int64     `json:"replies"` // error replies counted, per step
	Rules   []RuleOver  `json:"rules"`   // the broken rules, in Report.Rules' order
}

// RuleOver is one broken rule's replies per step of Over.
type RuleOver struct {
	Code    string  `json:"code"`
	Replies []int64 `json:"replies"`
}

// OverHourly is the longest range Over cuts into hours.
const OverHourly = 72 * time.Hour

// overSteps is the step of a range and the start of its first step.
func overSteps(from, to time.Time) (step time.Duration, origin time.Time, n int) {
	step = time.Hour
	if to.Sub(from) > OverHourly {
		step = 24 * time.Hour
	}
	origin = from.UTC().Truncate(step) // Truncate works on absolute time: whole UTC hours and days
	n = int((to.Sub(origin) + step - 1) / step)
	return step, origin, max(n, 1)
}

// buildOver spreads the rows over the steps, keeping the rows of each
// agent's counted observer only (rep.Source, or each AgentSummary.Source).
// parts are the rows before merge: each carries its step.
func buildOver(rep *Report, parts []partRow) *Over {
	step, origin, n := overSteps(rep.From, rep.To)
	o := &Over{Step: "hour", Replies: make([]int64, n), Rules: make([]RuleOver, len(rep.Rules))}
	if step > time.Hour {
		o.Step = "day"
	}
	for i := 0; i < n; i++ {
		o.Starts = append(o.Starts, origin.Add(time.Duration(i)*step))
	}
	idx := make(map[string]int, len(rep.Rules))
	for i, r := range rep.Rules {
		idx[r.Code] = i
		o.Rules[i] = RuleOver{Code: r.Code, Replies: make([]int64, n)}
	}
	chosen := map[string]string{}
	if rep.Agent != "" {
		chosen[rep.Agent] = rep.Source
	}
	for _, a := range rep.Agents {
		chosen[a.Agent] = a.Source
	}
	for _, p := range parts {
		if src, ok := chosen[p.agent]; !ok || src != p.source || p.step < 0 || p.step >= int64(n) {
			continue
		}
		if p.code == "" {
			o.Replies[p.step] += int64(p.replies)
		} else if i, ok := idx[p.code]; ok {
			o.Rules[i].Replies[p.step] += int64(p.replies)
		}
	}
	return o
}
