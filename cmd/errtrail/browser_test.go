package main

// TestBrowserCharts: the pages' charts in headless Chromium
// (internal/browsertest), served by the real command (run "serve") over
// rows and incidents stored in a fresh database of the stack's ClickHouse.
// Each chart must be there and show the stored data (its bars, dots and
// labels counted against what was written), be absent with a sentence when
// there is nothing to draw, and bring no script, no other CSP and no id or
// message of a record into the SVG. Screenshots: the folder the test logs
// ($ERRTRAIL_ARTIFACTS/errtrail/TestBrowserCharts when set).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/browsertest"
	"github.com/errtrail/errtrail/report"
)

// pagesCSP is the pages' Content-Security-Policy, which a chart must not
// change (web's contentSecurityPolicy).
const pagesCSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func TestBrowserCharts(t *testing.T) {
	b := browsertest.New(t, "errtrail")
	s := newStore(t)
	ctx := context.Background()
	const agent, caller = "chart-agent", "chart-caller"
	// The record: 20 s into a minute half an hour ago. Its caller's context:
	// 2 errors three minutes before, 4 in its minute (the record one of
	// them), 1 two minutes after; the report's range of 6 hours holds 3
	// more replies 3 hours before.
	// In the middle of an hour (the last hour's half past), so that the
	// minutes around it share its hour whatever the clock says.
	at := time.Now().UTC().Truncate(time.Hour).Add(-30*time.Minute + 20*time.Second)
	const errorID = "err_chart_record_7"
	var rows []row
	add := func(n int, when time.Time) {
		for range n {
			rows = append(rows, row{eventID: fmt.Sprintf("ev-chart-%02d", len(rows)), agent: agent, caller: caller, at: when})
		}
	}
	add(2, at.Add(-3*time.Minute))
	add(3, at.Add(time.Second))
	rows = append(rows, row{eventID: "ev-chart-record", agent: agent, caller: caller, errorID: errorID, at: at})
	add(1, at.Add(2*time.Minute))
	add(3, at.Add(-3*time.Hour))
	if err := s.write(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	// Two episodes of the agent: an overload that ended, a runaway still open.
	inc := []incidents.Incident{
		{Kind: incidents.Overload, Agent: agent, Start: at.Add(-2 * time.Hour), Fired: at.Add(-2 * time.Hour), LastSeen: at.Add(-100 * time.Minute),
			End: at.Add(-90 * time.Minute), PeakRate: 3, PeakCallers: 5, Evaluations: 60, Writer: "test", Version: 1},
		{Kind: incidents.Runaway, Agent: agent, Caller: caller, Start: at.Add(-20 * time.Minute), Fired: at.Add(-19 * time.Minute),
			LastSeen: at.Add(-time.Minute), PeakRate: 4, PeakScore: 12, Evaluations: 20, Writer: "test", Version: 1},
	}
	if err := incidents.Write(ctx, s.conn, s.opts.Database, inc); err != nil {
		t.Fatal(err)
	}
	srv := s.serve(t)

	// page opens path, checks what every page with or without a chart
	// must hold, and keeps a screenshot.
	page := func(name, path string) {
		t.Helper()
		res := b.OpenResponse(srv.base + path)
		b.Screenshot(name)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", name, res.Status, b.Text())
		}
		if csp, _ := res.Headers["Content-Security-Policy"].(string); csp != pagesCSP {
			t.Errorf("%s: CSP %q; want the pages' %q", name, csp, pagesCSP)
		}
		if n := b.Eval(`String(document.scripts.length)`); n != "0" {
			t.Errorf("%s: %s script elements", name, n)
		}
	}
	count := func(css string) int {
		t.Helper()
		n, _ := strconv.Atoi(b.Eval(`String(document.querySelectorAll('` + css + `').length)`))
		return n
	}
	// The charts' SVG carries counts, kinds, rule codes and times: never a
	// record's ids or message.
	noValues := func(name string) {
		t.Helper()
		svg := b.Eval(`Array.from(document.querySelectorAll('svg')).map(e => e.outerHTML).join('')`)
		for _, v := range []string{errorID, "ev-chart", "Caller exceeded its limit"} {
			if strings.Contains(svg, v) {
				t.Errorf("%s: the chart holds %q", name, v)
			}
		}
	}
	// The stylesheet coloured the chart (same origin, allowed by the CSP).
	styled := func(name, css string) {
		t.Helper()
		if fill := b.Eval(`getComputedStyle(document.querySelector('` + css + `')).fill`); fill == "" || fill == "rgb(0, 0, 0)" {
			t.Errorf("%s: %s is filled %q: the stylesheet did not apply", name, css, fill)
		}
	}

	// The story's context: one bar per minute with errors (one kind), the
	// record's minute marked, the counts in the tooltips.
	page("1-story-chart", "/errors?id="+errorID)
	if n := count("figure.context svg rect.bar"); n != 3 {
		t.Errorf("story: %d bars; want 3 (the minutes with 2, 4 and 1 errors)", n)
	}
	if n := count("figure.context svg rect.mark"); n != 1 {
		t.Errorf("story: %d marked minutes; want 1", n)
	}
	tips := b.Eval(`Array.from(document.querySelectorAll('figure.context rect.bar title')).map(e => e.textContent).join('|')`)
	for _, m := range []struct {
		at time.Time
		n  int
	}{{at.Add(-3 * time.Minute), 2}, {at, 4}, {at.Add(2 * time.Minute), 1}} {
		if want := fmt.Sprintf("quota, %s UTC: %d errors", m.at.Truncate(time.Minute).Format("2006-01-02 15:04"), m.n); !strings.Contains(tips, want) {
			t.Errorf("story: no bar %q among %s", want, tips)
		}
	}
	if got := b.Eval(`document.querySelector('figure.context rect.mark title').textContent`); got != "the minute of this reply" {
		t.Errorf("story: the mark says %q", got)
	}
	if strings.Contains(b.Text(), "No chart:") {
		t.Error("story: the no-chart sentence next to a chart")
	}
	styled("story", "figure.context rect.bar")
	noValues("story")

	// The report over 6 hours: a bar per hour with replies, a dot per hour
	// for the one rule broken, the counts as the Reporter gives them.
	from, to := at.Truncate(time.Hour).Add(-5*time.Hour), at.Truncate(time.Hour).Add(time.Hour)
	rng := "?from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339))
	want, err := (&report.ClickHouse{Conn: s.conn, Database: s.opts.Database}).Report(ctx, agent, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if want.Over == nil || len(want.Over.Starts) != 6 || len(want.Over.Rules) != 1 {
		t.Fatalf("the report's Over %+v; want 6 hours and one rule", want.Over)
	}
	page("2-report-chart", "/agents/"+agent+"/report"+rng)
	nonzero := 0
	for _, n := range want.Over.Replies {
		if n > 0 {
			nonzero++
		}
	}
	if n := count("figure.over svg rect.bar"); n != nonzero || n != 2 {
		t.Errorf("report: %d bars; want %d, the hours with replies (2)", n, nonzero)
	}
	if n := count("figure.over svg circle.dot"); n != 6 {
		t.Errorf("report: %d dots; want 6 (one rule, 6 hours)", n)
	}
	dots := b.Eval(`Array.from(document.querySelectorAll('figure.over circle.dot title')).map(e => e.textContent).join('|')`)
	if w := fmt.Sprintf("untyped_5xx, %s UTC: 7 replies", at.Truncate(time.Hour).Format("2006-01-02 15:04")); !strings.Contains(dots, w) {
		t.Errorf("report: no dot %q among %s", w, dots)
	}
	if legend := b.Eval(`document.querySelector('figure.over g.legend').textContent`); !strings.Contains(legend, "untyped_5xx") || !strings.Contains(legend, "error replies") {
		t.Errorf("report: legend %q", legend)
	}
	styled("report", "figure.over circle.dot")
	noValues("report")

	// A range without replies: a sentence, no chart.
	empty := "?from=" + url.QueryEscape(from.Add(-20*24*time.Hour).Format(time.RFC3339)) + "&to=" + url.QueryEscape(from.Add(-19*24*time.Hour).Format(time.RFC3339))
	page("3-report-empty", "/agents/"+agent+"/report"+empty)
	if n := count("svg"); n != 0 || !strings.Contains(b.Text(), "No chart: there is no error reply in this range") {
		t.Errorf("report without replies: %d charts, text:\n%s", n, b.Text())
	}

	// The incidents timeline: a row per kind, one bar per episode, the
	// open one dashed.
	page("4-incidents", "/incidents?agent="+agent+"&from="+url.QueryEscape(at.Add(-3*time.Hour).Format(time.RFC3339)))
	if n := count("figure.timeline rect.bar"); n != 2 {
		t.Errorf("incidents: %d bars; want 2", n)
	}
	if n := count("figure.timeline rect.bar.open"); n != 1 {
		t.Errorf("incidents: %d open bars; want 1 (the runaway)", n)
	}
	labels := b.Eval(`Array.from(document.querySelectorAll('figure.timeline text.label')).map(e => e.textContent).join('|')`)
	if labels != agent+" · overload|"+agent+" · runaway" {
		t.Errorf("incidents: rows %q", labels)
	}
	styled("incidents", "figure.timeline rect.k-overload")
	noValues("incidents")

	page("5-incidents-empty", "/incidents?agent=no-such-agent")
	if n := count("svg"); n != 0 || !strings.Contains(b.Text(), "No incidents in this range") {
		t.Errorf("incidents of no agent: %d charts, text:\n%s", n, b.Text())
	}
	t.Logf("%d screenshots in %s", b.Shots, b.Artifacts)
}
