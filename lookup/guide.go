package lookup

// Guide explains one finding (parse.Finding) to the agent team: a short
// title, the seed or spec sentence it checks, and what to change.
type Guide struct {
	Title  string
	Checks string
	Change string
}

// guides holds one row per finding code.
var guides = map[string]Guide{}

// GuideFor returns the guide of a finding code; ok is false for a code this
// build does not know (a row written by a newer ingester).
func GuideFor(code string) (g Guide, ok bool) {
	g, ok = guides[code]
	return g, ok
}
