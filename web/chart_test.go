package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/report"
)

// TestUnitChartGeometry: stacked bars sit in their step's slot, one rect
// per non-zero count, heights in proportion on a round scale; lines have a
// dot per step, zeros on the axis; the mark covers the step that holds
// it; nothing but zeros draws nothing.
func TestUnitChartGeometry(t *testing.T) {
	base := now.Truncate(time.Minute)
	var starts []time.Time
	for i := 0; i < 4; i++ {
		starts = append(starts, base.Add(time.Duration(i)*time.Minute))
	}
	c := drawChart(chartData{Starts: starts, Step: time.Minute,
		Stacked: []chartSeries{{Name: "quota", Values: []int64{2, 0, 6, 0}}, {Name: "overload", Values: []int64{2, 0, 0, 0}}},
		Lines:   []chartSeries{{Name: "rule", Values: []int64{1, 0, 3, 0}}},
		Mark:    base.Add(2*time.Minute + 30*time.Second), MarkLabel: "this"})
	if !c.Drawn() || len(c.Bars) != 3 {
		t.Fatalf("%d bars; want 3 (zeros draw none)", len(c.Bars))
	}
	// The scale: the highest stack is 6, so the axis goes to 8 in steps of 2.
	unit := float64(c.PlotH) / 8
	slot := float64(c.PlotW) / 4
	q0, o0, q2 := c.Bars[0], c.Bars[1], c.Bars[2]
	if q0.Class != "s0" || o0.Class != "s1" || q2.Class != "s0" {
		t.Errorf("classes %s %s %s; want s0 s1 s0", q0.Class, o0.Class, q2.Class)
	}
	if q0.Y+q0.H != c.Bottom || o0.Y+o0.H != q0.Y {
		t.Errorf("the overload bar (y %d..%d) does not sit on the quota bar (y %d..%d) on the axis %d", o0.Y, o0.Y+o0.H, q0.Y, q0.Y+q0.H, c.Bottom)
	}
	if want := int(2*unit + 0.5); q0.H != want || o0.H != want {
		t.Errorf("heights %d and %d; want %d for 2 each", q0.H, o0.H, want)
	}
	if want := int(6*unit + 0.5); q2.H != want {
		t.Errorf("height %d; want %d for 6", q2.H, want)
	}
	if lo, hi := c.Left+int(2*slot), c.Left+int(3*slot); q2.X < lo || q2.X+q2.W > hi+1 {
		t.Errorf("the third minute's bar at %d..%d; want inside its slot %d..%d", q2.X, q2.X+q2.W, lo, hi)
	}
	if !strings.Contains(q2.Title, "quota") || !strings.Contains(q2.Title, ": 6 ") || !strings.Contains(q2.Title, base.Add(2*time.Minute).Format("15:04")) {
		t.Errorf("tooltip %q", q2.Title)
	}
	if len(c.Lines) != 1 || len(c.Lines[0].Dots) != 4 || c.Lines[0].Class != "s2" {
		t.Fatalf("lines %+v; want one line of 4 dots, the third colour", c.Lines)
	}
	if d := c.Lines[0].Dots; d[1].Y != c.Bottom || d[2].Y != c.Bottom-int(3*unit+0.5) {
		t.Errorf("dots at y %d and %d; want %d (zero) and 3 up", d[1].Y, d[2].Y, c.Bottom)
	}
	if c.Mark == nil || c.Mark.X != c.Left+int(2*slot+0.5) {
		t.Errorf("mark %+v; want over the third minute", c.Mark)
	}
	var ticks []string
	for _, tk := range c.YTicks {
		ticks = append(ticks, tk.Label)
	}
	if got := strings.Join(ticks, " "); got != "0 2 4 6 8" || c.YTicks[4].Pos != c.Top || c.YTicks[0].Pos != c.Bottom {
		t.Errorf("count ticks %q at %d..%d; want 0 2 4 6 8 from the axis to the plot's top", got, c.YTicks[0].Pos, c.YTicks[4].Pos)
	}
	if len(c.Legend) != 3 || c.Legend[2].Label != "rule" || !c.Legend[2].Line {
		t.Errorf("legend %+v", c.Legend)
	}
	if c := drawChart(chartData{Starts: starts, Step: time.Minute, Stacked: []chartSeries{{Name: "x", Values: []int64{0, 0, 0, 0}}}}); c.Drawn() {
		t.Error("a chart of zeros is drawn")
	}
	if c := drawChart(chartData{}); c.Drawn() {
		t.Error("a chart without steps is drawn")
	}
	for v, want := range map[int64]int64{1: 4, 4: 4, 5: 8, 7: 8, 9: 20, 20: 20, 21: 40, 41: 80, 81: 200, 399: 400, 401: 800} {
		if got := niceScale(v); got != want {
			t.Errorf("niceScale(%d) = %d; want %d", v, got, want)
		}
	}
}

// svgCounts counts the chart's drawn elements in a page.
func svgCounts(body string) (bars, dots int) {
	return strings.Count(body, `<rect class="bar `), strings.Count(body, `<circle class="dot `)
}

// TestUnitStoryChart: the story draws its context's minutes (over the
// fake service) as SVG next to the table: one bar per non-zero minute and
// kind, the record's minute marked, no script and no inline style; a
// context of zeros gets a sentence and no chart.
func TestUnitStoryChart(t *testing.T) {
	r := newRig(Config{})
	resp, body := r.get(t, storyPath(typedID))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if bars, _ := svgCounts(body); bars != 2 {
		t.Errorf("%d bars; want 2 (quota 20 in the record's minute, overload 1 the minute before)", bars)
	}
	for _, want := range []string{`<figure class="series context">`, `<rect class="mark"`, "the minute of this reply", "quota, " + t0.Truncate(time.Minute).Format("2006-01-02 15:04") + " UTC: 20 errors"} {
		if !strings.Contains(body, want) {
			t.Errorf("the story lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "style=") {
		t.Error("a script element or an inline style")
	}
	if strings.Contains(body, "No chart:") {
		t.Error("the sentence for no chart next to a chart")
	}
	for i := range r.svc.story.Context.Minutes {
		r.svc.story.Context.Minutes[i].ByKind = map[string]int64{}
	}
	_, body = r.get(t, storyPath(typedID))
	if strings.Contains(body, "<svg") || !strings.Contains(body, "No chart: no error of this caller") {
		t.Error("a context without errors: want the sentence, not a chart")
	}
}

// TestUnitReportChart: the report draws its replies per step as bars and
// each broken rule as a line of one dot per step; a report without a reply
// says so instead of drawing.
func TestUnitReportChart(t *testing.T) {
	r := newRig(Config{})
	day := now.Truncate(24 * time.Hour)
	r.rep.rep.Over = &report.Over{Step: "day", Starts: []time.Time{day.Add(-48 * time.Hour), day.Add(-24 * time.Hour), day},
		Replies: []int64{700, 0, 500}, Rules: []report.RuleOver{{Code: "retry_after_header_missing", Replies: []int64{100, 0, 200}}}}
	resp, body := r.get(t, "/agents/research-agent/report")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if bars, dots := svgCounts(body); bars != 2 || dots != 3 {
		t.Errorf("%d bars, %d dots; want 2 bars (the day without replies has none) and 3 dots", bars, dots)
	}
	for _, want := range []string{`<figure class="series over">`, "retry_after_header_missing, " + day.Format("2006-01-02") + " 00:00 UTC: 200 replies", "per day"} {
		if !strings.Contains(body, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "No chart:") {
		t.Error("a script element, or the no-chart sentence next to the chart")
	}
	r.rep.rep = &report.Report{Agent: "research-agent", Rules: []report.Rule{}, Clean: []string{},
		Over: &report.Over{Step: "hour", Starts: []time.Time{now}, Replies: []int64{0}, Rules: []report.RuleOver{}}}
	_, body = r.get(t, "/agents/research-agent/report")
	if strings.Contains(body, "<svg") || !strings.Contains(body, "No chart: there is no error reply") {
		t.Error("a report without replies: want the sentence, not a chart")
	}
}
