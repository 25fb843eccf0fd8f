package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// fakeIncidents is a FAKE incidents.Reader for the unit tests of the
// pages: it answers list (or err) and records the filter. The real reader
// is tested in package incidents.
type fakeIncidents struct {
	mu   sync.Mutex
	list []incidents.Incident
	err  error
	got  incidents.Filter
}

func (f *fakeIncidents) Incidents(_ context.Context, q incidents.Filter) ([]incidents.Incident, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = q
	return f.list, f.err
}

// TestUnitTimelineGeometry: bars sit where their times are on the range's
// scale, an open one runs to the range's end, one that began before the
// range starts at its left edge; rows are per agent and kind in order; the
// ticks lie on the plot.
func TestUnitTimelineGeometry(t *testing.T) {
	from := now.Add(-10 * time.Hour)
	list := []incidents.Incident{
		{Kind: incidents.Runaway, Agent: "billing", Caller: "c", Start: from.Add(5 * time.Hour), LastSeen: from.Add(6 * time.Hour)},
		{Kind: incidents.Overload, Agent: "billing", Start: from.Add(time.Hour), End: from.Add(2 * time.Hour)},
		{Kind: incidents.Overload, Agent: "alpha", Start: from.Add(-time.Hour), End: from.Add(time.Hour)},
	}
	tl := newTimeline(list, from, now)
	var labels []string
	for _, r := range tl.Rows {
		labels = append(labels, r.Label)
	}
	if got := strings.Join(labels, "|"); got != "alpha · overload|billing · overload|billing · runaway" {
		t.Fatalf("rows %q", got)
	}
	at := func(h float64) int { return tl.Left + int(float64(tl.Plot)*h/10) }
	if b := tl.Rows[0].Bars[0]; b.X != tl.Left || b.X+b.W != at(1) {
		t.Errorf("an episode begun before the range: x %d..%d, want %d..%d", b.X, b.X+b.W, tl.Left, at(1))
	}
	if b := tl.Rows[1].Bars[0]; b.X != at(1) || b.X+b.W != at(2) || b.Open || !strings.Contains(b.Title, "1h0m0s") {
		t.Errorf("the billing overload: x %d..%d open %v title %q; want %d..%d, ended, lasting 1h", b.X, b.X+b.W, b.Open, b.Title, at(1), at(2))
	}
	if b := tl.Rows[2].Bars[0]; b.X != at(5) || b.X+b.W != tl.Left+tl.Plot || !b.Open || b.Kind != "runaway" {
		t.Errorf("the open runaway: x %d..%d open %v kind %s; want %d..%d, open", b.X, b.X+b.W, b.Open, b.Kind, at(5), tl.Left+tl.Plot)
	}
	if len(tl.Ticks) < 3 || len(tl.Ticks) > 11 {
		t.Errorf("%d ticks over 10 hours", len(tl.Ticks))
	}
	for _, tk := range tl.Ticks {
		if tk.X < tl.Left || tk.X > tl.Left+tl.Plot {
			t.Errorf("tick %q at %d, outside the plot", tk.Label, tk.X)
		}
	}
	if tl.Height != 3*chartRowH+chartAxisH {
		t.Errorf("height %d", tl.Height)
	}
}

// TestUnitIncidentsPage: the page asks the reader for the agent over the
// default week, draws the episodes as inline SVG (no script, the same CSP)
// with a table linking to the errors behind each, escapes what producers
// named, refuses a bad kind, and is unavailable without a reader.
func TestUnitIncidentsPage(t *testing.T) {
	inc := &fakeIncidents{list: []incidents.Incident{
		{Kind: incidents.Overload, Agent: "billing", Start: now.Add(-3 * time.Hour), Fired: now.Add(-3 * time.Hour),
			LastSeen: now.Add(-150 * time.Minute), End: now.Add(-2 * time.Hour), PeakRate: 2, PeakCallers: 4},
		{Kind: incidents.Runaway, Agent: "billing", Caller: "<script>alert(1)</script>", Start: now.Add(-time.Hour),
			LastSeen: now.Add(-time.Minute), PeakRate: 5, PeakScore: 150},
	}}
	r := newRig(Config{Incidents: inc})
	resp, body := r.get(t, "/incidents?agent=billing")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if inc.got.Agent != "billing" || !inc.got.To.Equal(now) || !inc.got.From.Equal(now.Add(-DefaultIncidentRange)) {
		t.Errorf("reader asked %+v; want billing over the week before now", inc.got)
	}
	for _, want := range []string{"<svg", `class="bar k-overload"`, `class="bar k-runaway open"`, "billing · overload",
		"billing overloaded: it failed for all callers", "2.00 overload replies/s from 4 callers", "errors then",
		"/errors?agent=billing&amp;from=", "kind=overload"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("the page holds a script element (a caller's name was not escaped, or a script was added)")
	}
	if got := resp.Header.Get("Content-Security-Policy"); got != contentSecurityPolicy {
		t.Errorf("CSP %q, want the pages' own %q", got, contentSecurityPolicy)
	}
	if strings.Contains(body, "style=") {
		t.Error("an inline style attribute: the CSP (default-src 'self') blocks it")
	}

	if resp, _ := r.get(t, "/incidents?kind=quota"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("kind=quota: %d, want 400", resp.StatusCode)
	}
	inc.list = nil
	if resp, body := r.get(t, "/incidents"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "No incidents in this range") || strings.Contains(body, "<svg") {
		t.Errorf("no incidents: %d, want 200 saying so without a chart", resp.StatusCode)
	}
	none := httptest.NewRecorder()
	New(Config{}, nil, nil).ServeHTTP(none, httptest.NewRequest(http.MethodGet, "/incidents", nil))
	if b, _ := io.ReadAll(none.Result().Body); none.Code != http.StatusServiceUnavailable {
		t.Errorf("without a reader: %d %s, want 503", none.Code, b)
	}
}
