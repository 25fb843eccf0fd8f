package web

import (
	"fmt"
	"time"

	"github.com/errtrail/errtrail/groups"
)

// hourChart is the geometry of the groups page's chart, an SVG drawn on
// the server: one row per group, one bar per hour of the range whose
// height is the group's errors that hour against the group's busiest hour
// in the range. Colours come from the stylesheet (classes s-<state>), so
// the page needs no inline style under the CSP.
type hourChart struct {
	Width, Height int
	Left, Plot    int
	Rows          []hourRow
	Ticks         []timelineTick
	AxisY         int
}

type hourRow struct {
	Label string
	Y     int // top of the row
	State string
	Bars  []hourBar
}

type hourBar struct {
	X, Y, W, H int
	Title      string
}

const (
	hourRowH = 30
	hourBarH = 24 // the tallest bar
)

// newHourChart lays the groups' hours out over [from, to).
func newHourChart(list []groups.Group, from, to time.Time) hourChart {
	c := hourChart{Width: chartWidth, Left: chartLeft, Plot: chartWidth - chartLeft - 8}
	span := to.Sub(from)
	if span <= 0 {
		return c
	}
	x := func(t time.Time) int {
		if t.Before(from) {
			t = from
		}
		if t.After(to) {
			t = to
		}
		return c.Left + int(float64(c.Plot)*float64(t.Sub(from))/float64(span))
	}
	for n, g := range list {
		row := hourRow{Label: g.Title(), Y: n * hourRowH, State: string(g.State)}
		in := func(h groups.Hour) bool { return h.Count > 0 && h.Hour.Add(time.Hour).After(from) && h.Hour.Before(to) }
		var peak uint64
		for _, h := range g.Hours {
			if in(h) {
				peak = max(peak, h.Count)
			}
		}
		for _, h := range g.Hours {
			if !in(h) {
				continue
			}
			x0, x1 := x(h.Hour), x(h.Hour.Add(time.Hour))
			height := max(int(float64(hourBarH)*float64(h.Count)/float64(peak)+0.5), 1)
			row.Bars = append(row.Bars, hourBar{X: x0, W: max(x1-x0-1, 1), Y: row.Y + 3 + hourBarH - height, H: height,
				Title: fmt.Sprintf("%s: %d errors", h.Hour.UTC().Format("2006-01-02 15:04"), h.Count)})
		}
		c.Rows = append(c.Rows, row)
	}
	c.AxisY = len(c.Rows) * hourRowH
	c.Height = c.AxisY + chartAxisH
	c.Ticks = ticks(from, to, x)
	return c
}
