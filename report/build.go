package report

import (
	"slices"
	"strings"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/parse"
)

// partRow is one result row of either statement: how many of an agent's
// replies, as one observer kind saw them, break one rule (code ""
// counts every reply, and breaking those with any finding), with the
// example reply and its time (Unix seconds).
type partRow struct {
	agent, source, code string
	replies, breaking   uint64
	eventID, errorID    string
	at                  int64
	step                int64 // the step of Over the row counts in
}

// better reports whether a is the better example: one with an error_id,
// then the later, then by event_id.
func better(a, b *partRow) bool {
	if (a.errorID != "") != (b.errorID != "") {
		return a.errorID != ""
	}
	if a.at != b.at {
		return a.at > b.at
	}
	return a.eventID > b.eventID
}

// merge adds up the rows of the rollup and of the raw edges, which cover
// disjoint time ranges.
func merge(parts []partRow) []partRow {
	type key struct{ agent, source, code string }
	idx := map[key]int{}
	out := parts[:0:0]
	for _, p := range parts {
		k := key{p.agent, p.source, p.code}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, p)
			continue
		}
		m := &out[i]
		m.replies += p.replies
		m.breaking += p.breaking
		if better(&p, m) {
			m.eventID, m.errorID, m.at = p.eventID, p.errorID, p.at
		}
	}
	return out
}

// observerRank orders the observer kinds (event contract, source.kind) by
// how directly they show what the agent sent: the agent's own report first;
// a gateway's copy may have been rewritten on the way (seed 002: "Gateways
// sometimes strip bodies or rewrite 429 to 502"), and a client sees what
// every hop did. Rows without a known kind come last.
func observerRank(kind string) int {
	switch kind {
	case "agent":
		return 0
	case "gateway":
		return 1
	case "client":
		return 2
	}
	return 3
}

// Observer picks, among the observer kinds that saw an agent's replies in
// the range (kind → replies), the one a report counts: the best-ranked kind
// with any replies ("agent", then "gateway", then "client", then the
// largest other kind, by name on a tie). A request seen by both the agent
// and a gateway is stored as two rows with different event_ids and no key
// that joins them, so counting one kind is how a reply is counted once; the
// rows of the other kinds are reported as OtherObservations. An agent that
// reports only part of its traffic itself (some instances without the
// emitter) is then under-counted: its gateway rows are not added.
func Observer(replies map[string]uint64) string {
	best, found := "", false
	for k, n := range replies {
		if n == 0 {
			continue
		}
		if !found {
			best, found = k, true
			continue
		}
		// Kinds of rank 0-2 are unique, so a tie in rank is between two
		// unknown kinds.
		rk, rb := observerRank(k), observerRank(best)
		if rk < rb || rk == rb && (n > replies[best] || n == replies[best] && k < best) {
			best = k
		}
	}
	return best
}

// findingOrder is the documentation order of the findings (parse.AllFindings),
// the tie-break between rules broken equally often.
var findingOrder = func() map[string]int {
	m := make(map[string]int, len(parse.AllFindings))
	for i, f := range parse.AllFindings {
		m[string(f)] = i
	}
	return m
}()

func ruleLess(a, b *Rule) int {
	if a.Replies != b.Replies {
		if a.Replies > b.Replies {
			return -1
		}
		return 1
	}
	ia, oka := findingOrder[a.Code]
	ib, okb := findingOrder[b.Code]
	switch {
	case oka && okb:
		return ia - ib
	case oka != okb: // known codes before codes this build does not know
		if oka {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Code, b.Code)
}

// build assembles the report from the merged rows. It is pure, so the
// counting rules are tested without a server (build_test.go).
func build(agent string, from, to time.Time, parts []partRow) *Report {
	rep := &Report{Agent: agent, From: from, To: to, Rules: []Rule{}, Clean: []string{}}
	var totals, rules []partRow
	for _, p := range parts {
		if p.code == "" {
			totals = append(totals, p)
		} else {
			rules = append(rules, p)
		}
	}

	// Which observer each agent is counted by.
	byAgent := map[string]map[string]uint64{}
	for _, t := range totals {
		if byAgent[t.agent] == nil {
			byAgent[t.agent] = map[string]uint64{}
		}
		byAgent[t.agent][t.source] += t.replies
	}
	chosen := make(map[string]string, len(byAgent))
	for a, kinds := range byAgent {
		chosen[a] = Observer(kinds)
	}

	summaries := map[string]*AgentSummary{}
	sources := map[string]bool{}
	for _, t := range totals {
		s := summaries[t.agent]
		if s == nil {
			s = &AgentSummary{Agent: t.agent, Source: chosen[t.agent]}
			summaries[t.agent] = s
			sources[s.Source] = true
		}
		if t.source != chosen[t.agent] {
			s.OtherObservations += int64(t.replies)
			rep.OtherObservations += int64(t.replies)
			continue
		}
		s.Replies += int64(t.replies)
		s.Breaking += int64(t.breaking)
		rep.Replies += int64(t.replies)
	}

	// Rules: one per code over the counted rows; the example comes from the
	// agent that breaks it most (by name on a tie).
	byCode := map[string]*Rule{}
	exampleFrom := map[string]partRow{}
	for _, r := range rules {
		if r.source != chosen[r.agent] || r.replies == 0 {
			continue
		}
		if s := summaries[r.agent]; s != nil {
			s.Rules++
		}
		rule := byCode[r.code]
		if rule == nil {
			rule = &Rule{Code: r.code}
			byCode[r.code] = rule
		}
		rule.Replies += int64(r.replies)
		if ex, ok := exampleFrom[r.code]; !ok || r.replies > ex.replies || r.replies == ex.replies && r.agent < ex.agent {
			exampleFrom[r.code] = r
			rule.ExampleEventID, rule.ExampleErrorID, rule.ExampleAgent, rule.exampleAt = r.eventID, r.errorID, r.agent, r.at
		}
	}
	for code, rule := range byCode {
		rule.Title = code
		if g, ok := lookup.GuideFor(code); ok {
			if g.Title != "" {
				rule.Title = g.Title
			}
			rule.Level, rule.Checks, rule.Change = g.Level, g.Checks, g.Change
		}
		if rep.Replies > 0 {
			rule.Share = float64(rule.Replies) / float64(rep.Replies)
		}
		rep.Rules = append(rep.Rules, *rule)
	}
	slices.SortFunc(rep.Rules, func(a, b Rule) int { return ruleLess(&a, &b) })
	for _, f := range parse.AllFindings {
		if byCode[string(f)] == nil {
			rep.Clean = append(rep.Clean, string(f))
		}
	}

	if agent != "" {
		rep.Source = chosen[agent]
		return rep
	}
	switch len(sources) {
	case 0:
	case 1:
		for s := range sources {
			rep.Source = s
		}
	default:
		rep.Source = "mixed"
	}
	rep.Agents = make([]AgentSummary, 0, len(summaries))
	for _, s := range summaries {
		rep.Agents = append(rep.Agents, *s)
	}
	slices.SortFunc(rep.Agents, func(a, b AgentSummary) int {
		switch {
		case a.Breaking != b.Breaking:
			return cmpDesc(a.Breaking, b.Breaking)
		case a.Replies != b.Replies:
			return cmpDesc(a.Replies, b.Replies)
		}
		return strings.Compare(a.Agent, b.Agent)
	})
	return rep
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}
