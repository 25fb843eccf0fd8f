package lookup

import "github.com/errtrail/errtrail/parse"

// Guide explains one finding (parse.Finding) to the agent team. It is a view
// of the finding's row in parse.Rules, the one table of rules: nothing here
// is written twice.
type Guide struct {
	Title  string
	Level  string // "MUST" (a violation) or "SHOULD" (advice)
	Checks string // the seed or spec sentence, quoted, with its source
	Change string
}

// GuideFor returns the guide of a finding code; ok is false for a code this
// build does not know (a row written by a newer ingester).
func GuideFor(code string) (g Guide, ok bool) {
	r, ok := parse.RuleOf(parse.Finding(code))
	if !ok {
		return Guide{}, false
	}
	return Guide{Title: r.Title, Level: string(r.Level), Checks: r.Checks(), Change: r.Change}, true
}

// findingsOf explains the record's finding codes, in the record's order.
func findingsOf(codes []string) []Finding {
	out := make([]Finding, 0, len(codes))
	for _, c := range codes {
		g, ok := GuideFor(c)
		if !ok {
			g = Guide{Title: "A finding this build does not know",
				Change: "Look the code up in docs/record.md of the errtrail release that stored the row."}
		}
		out = append(out, Finding{Code: c, Title: g.Title, Level: g.Level, Checks: g.Checks, Change: g.Change})
	}
	return out
}
