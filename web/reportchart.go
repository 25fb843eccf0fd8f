package web

import (
	"time"

	"github.com/errtrail/errtrail/report"
)

// chartedRules is how many rules the report's chart draws as lines: the
// most broken ones; more would be a tangle. The table lists every rule.
const chartedRules = 6

// overChart draws a report's rules over time: the replies counted per
// hour or day as grey bars, and a line per rule (the most broken first)
// for the replies that broke it, on one scale. It returns how many rules
// it drew. A report without Over, or without a reply, has no chart.
func overChart(r *report.Report) (chart, int) {
	o := r.Over
	if o == nil || r.Replies == 0 {
		return chart{}, 0
	}
	d := chartData{Title: "Error replies per " + o.Step + " and the replies that broke each rule", Starts: o.Starts,
		Step: time.Hour, Unit: "replies"}
	if o.Step == "day" {
		d.Step = 24 * time.Hour
	}
	d.Stacked = []chartSeries{{Name: "error replies", Class: "total", Values: o.Replies}}
	n := min(len(o.Rules), chartedRules)
	for _, ro := range o.Rules[:n] {
		d.Lines = append(d.Lines, chartSeries{Name: ro.Code, Values: ro.Replies})
	}
	return drawChart(d), n
}
