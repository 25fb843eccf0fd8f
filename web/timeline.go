package web

import (
	"fmt"
	"sort"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// timeline is the geometry of the incidents page's chart, an SVG drawn on
// the server: one row per agent and kind, a bar per episode from its start
// to its end (to the range's end while open), clipped to the range. The
// template only writes the numbers out; colours come from the stylesheet
// (classes k-<kind>), so the page needs no inline style under the CSP.
type timeline struct {
	Width, Height int
	Left, Plot    int // the label column's width, the plot's width
	Rows          []timelineRow
	Ticks         []timelineTick
	AxisY         int
}

type timelineRow struct {
	Label string
	Y     int // top of the row
	Bars  []timelineBar
}

type timelineBar struct {
	X, W  int
	Kind  string // the class suffix
	Title string // the tooltip (<title>): what and when
	Open  bool
}

type timelineTick struct {
	X     int
	Label string
}

// Chart dimensions, in SVG user units.
const (
	chartWidth  = 960
	chartLeft   = 240
	chartRowH   = 22
	chartBarH   = 14
	chartAxisH  = 24
	chartMinBar = 2 // an episode shorter than a pixel stays visible
)

// newTimeline lays list out over [from, to).
func newTimeline(list []incidents.Incident, from, to time.Time) timeline {
	tl := timeline{Width: chartWidth, Left: chartLeft, Plot: chartWidth - chartLeft - 8}
	span := to.Sub(from)
	if span <= 0 {
		return tl
	}
	x := func(t time.Time) int {
		if t.Before(from) {
			t = from
		}
		if t.After(to) {
			t = to
		}
		return tl.Left + int(float64(tl.Plot)*float64(t.Sub(from))/float64(span))
	}
	type rowKey struct {
		agent string
		kind  int
	}
	order := map[incidents.Kind]int{}
	for i, k := range incidents.Kinds {
		order[k] = i
	}
	rows := map[rowKey][]incidents.Incident{}
	for _, i := range list {
		k := rowKey{i.Agent, order[i.Kind]}
		rows[k] = append(rows[k], i)
	}
	keys := make([]rowKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].agent != keys[b].agent {
			return keys[a].agent < keys[b].agent
		}
		return keys[a].kind < keys[b].kind
	})
	for n, k := range keys {
		kind := incidents.Kinds[k.kind]
		row := timelineRow{Label: k.agent + " · " + string(kind), Y: n * chartRowH}
		for _, i := range rows[k] {
			end := i.End
			if i.Open() {
				end = to
			}
			x0, x1 := x(i.Start), x(end)
			w := max(x1-x0, chartMinBar)
			title := fmt.Sprintf("%s, %s to %s", i.Title(), i.Start.UTC().Format("2006-01-02 15:04:05"), "now (open)")
			if !i.Open() {
				title = fmt.Sprintf("%s, %s to %s (%s); %s", i.Title(), i.Start.UTC().Format("2006-01-02 15:04:05"),
					i.End.UTC().Format("15:04:05"), i.Duration().Round(time.Second), i.Peak())
			}
			row.Bars = append(row.Bars, timelineBar{X: x0, W: w, Kind: string(kind), Title: title, Open: i.Open()})
		}
		tl.Rows = append(tl.Rows, row)
	}
	tl.AxisY = len(tl.Rows) * chartRowH
	tl.Height = tl.AxisY + chartAxisH
	tl.Ticks = ticks(from, to, x)
	return tl
}

// ticks picks about six round times over [from, to) for the axis.
func ticks(from, to time.Time, x func(time.Time) int) []timelineTick {
	span := to.Sub(from)
	steps := []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour,
		6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	layout := "15:04"
	if step >= 24*time.Hour {
		layout = "Jan 2"
	} else if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	}
	var out []timelineTick
	for t := from.UTC().Truncate(step); t.Before(to); t = t.Add(step) {
		if t.Before(from) {
			continue
		}
		out = append(out, timelineTick{X: x(t), Label: t.Format(layout)})
	}
	return out
}
