package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// chart is the geometry of a time-series chart drawn on the server as SVG
// (templates/layout.html, "chart"): counts per step of time, as bars
// stacked by series, as lines with a dot per step, or both on one scale.
// Like the incidents timeline (timeline.go), the template only writes the
// numbers out and colours come from the stylesheet by class (s0 … s7), so
// a page with a chart needs no script and no inline style under the CSP.
type chart struct {
	Title         string // the SVG's accessible name
	Width, Height int
	Left, Top     int // the plot's top-left corner
	PlotW, PlotH  int
	Bottom        int // Top + PlotH: the x axis
	Bars          []chartBar
	Lines         []chartLine
	XTicks        []chartTick
	YTicks        []chartTick
	Legend        []chartLegend
	Mark          *chartMark // one step singled out (the story's minute)
}

type chartBar struct {
	X, Y, W, H int
	Class      string // s<i>: the series' colour
	Title      string // the tooltip: series, step, count
}

type chartLine struct {
	Class  string
	Name   string
	Points string // the polyline's points, "x,y x,y …"
	Dots   []chartDot
}

type chartDot struct {
	X, Y  int
	Title string
}

type chartTick struct {
	Pos   int // x for the time axis, y for the count axis
	Label string
}

type chartLegend struct {
	X, Y  int
	Class string
	Label string
	Line  bool // drawn as a line sample, not a swatch
}

type chartMark struct {
	X, W  int
	Label string
}

// chartSeries is one named series of counts, one per step.
type chartSeries struct {
	Name   string
	Class  string // "" for the next colour (s<i>)
	Values []int64
}

func (s chartSeries) class(i int) string {
	if s.Class != "" {
		return s.Class
	}
	return "s" + strconv.Itoa(i%seriesColours)
}

// chartData is what a chart shows: the steps' starts (oldest first, Step
// apart), series stacked as bars and series drawn as lines, on one count
// scale, and optionally one step to single out.
type chartData struct {
	Title     string
	Starts    []time.Time
	Step      time.Duration
	Stacked   []chartSeries
	Lines     []chartSeries
	Mark      time.Time // the step that holds it is marked; zero: none
	MarkLabel string    // the mark's label
	Unit      string    // what is counted, for the tooltips ("errors")
}

// Chart dimensions, in SVG user units.
const (
	seriesWidth   = 960
	seriesLeft    = 56
	seriesRight   = 12
	seriesTop     = 28 // the legend's row
	seriesPlotH   = 180
	seriesAxisH   = 24
	seriesColours = 8 // s0 … s7 in the stylesheet
)

// drawChart lays d out. A chart with no step, or nothing but zeros, has no
// plot (Bars and Lines empty): the page says so in words instead.
func drawChart(d chartData) chart {
	c := chart{Title: d.Title, Width: seriesWidth, Left: seriesLeft, Top: seriesTop,
		PlotW: seriesWidth - seriesLeft - seriesRight, PlotH: seriesPlotH}
	c.Bottom = c.Top + c.PlotH
	c.Height = c.Bottom + seriesAxisH
	n := len(d.Starts)
	if n == 0 {
		return c
	}
	var top int64
	for i := 0; i < n; i++ {
		var sum int64
		for _, s := range d.Stacked {
			sum += at(s.Values, i)
		}
		top = max(top, sum)
		for _, s := range d.Lines {
			top = max(top, at(s.Values, i))
		}
	}
	if top == 0 {
		return c
	}
	scale := niceScale(top)
	y := func(v int64) int { return c.Bottom - int(float64(c.PlotH)*float64(v)/float64(scale)+0.5) }
	slot := float64(c.PlotW) / float64(n)
	x := func(i int) int { return c.Left + int(slot*float64(i)+0.5) } // a step's left edge
	barW := max(int(slot*0.8), 1)
	layout := "15:04"
	if d.Step >= 24*time.Hour {
		layout = "Jan 2"
	} else if d.Starts[n-1].Sub(d.Starts[0]) >= 24*time.Hour {
		layout = "Jan 2 15:04"
	}
	stepWords := func(i int) string { return d.Starts[i].UTC().Format("2006-01-02 15:04") + " UTC" }
	unit := d.Unit
	if unit == "" {
		unit = "replies"
	}

	for i := 0; i < n; i++ {
		base := int64(0)
		for k, s := range d.Stacked {
			v := at(s.Values, i)
			if v == 0 {
				continue
			}
			y0, y1 := y(base+v), y(base)
			c.Bars = append(c.Bars, chartBar{X: x(i) + (int(slot)-barW)/2, Y: y0, W: barW, H: max(y1-y0, 1),
				Class: s.class(k), Title: fmt.Sprintf("%s, %s: %d %s", s.Name, stepWords(i), v, unit)})
			base += v
		}
	}
	for k, s := range d.Lines {
		l := chartLine{Class: s.class(len(d.Stacked) + k), Name: s.Name}
		var pts []string
		for i := 0; i < n; i++ {
			v := at(s.Values, i)
			cx, cy := x(i)+int(slot/2), y(v)
			pts = append(pts, strconv.Itoa(cx)+","+strconv.Itoa(cy))
			l.Dots = append(l.Dots, chartDot{X: cx, Y: cy, Title: fmt.Sprintf("%s, %s: %d %s", s.Name, stepWords(i), v, unit)})
		}
		l.Points = strings.Join(pts, " ")
		c.Lines = append(c.Lines, l)
	}

	// The count axis: 0, a quarter, … the scale.
	for q := int64(0); q <= 4; q++ {
		v := scale * q / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: y(v), Label: strconv.FormatInt(v, 10)})
	}
	// The time axis: every k-th step, at most about 8 labels.
	every := (n + 7) / 8
	for i := 0; i < n; i += every {
		c.XTicks = append(c.XTicks, chartTick{Pos: x(i) + int(slot/2), Label: d.Starts[i].UTC().Format(layout)})
	}
	if !d.Mark.IsZero() {
		for i := 0; i < n; i++ {
			if !d.Mark.Before(d.Starts[i]) && d.Mark.Before(d.Starts[i].Add(d.Step)) {
				c.Mark = &chartMark{X: x(i), W: max(x(i+1)-x(i), 1), Label: d.MarkLabel}
			}
		}
	}
	// The legend, one entry per series, left to right.
	lx := c.Left
	for k, s := range d.Stacked {
		c.Legend = append(c.Legend, chartLegend{X: lx, Y: 8, Class: s.class(k), Label: s.Name})
		lx += 22 + 7*len(s.Name)
	}
	for _, l := range c.Lines {
		c.Legend = append(c.Legend, chartLegend{X: lx, Y: 8, Class: l.Class, Label: l.Name, Line: true})
		lx += 22 + 7*len(l.Name)
	}
	return c
}

// Drawn reports whether the chart has anything to show.
func (c chart) Drawn() bool { return len(c.Bars) > 0 || len(c.Lines) > 0 }

func at(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// niceScale is the top of a count axis for counts up to v: four ticks of
// a round step (1, 2 or 5 times a power of ten), so every tick is a whole,
// round number.
func niceScale(v int64) int64 {
	need := (v + 3) / 4
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= need {
				return 4 * m * p
			}
		}
	}
}
