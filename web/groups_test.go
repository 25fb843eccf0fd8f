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

	"github.com/errtrail/errtrail/groups"
)

// fakeGroups is a FAKE groups.Reader for the unit tests of the pages: it
// answers list (or err) and records the filter. The real reader is tested
// in package groups.
type fakeGroups struct {
	mu   sync.Mutex
	list []groups.Group
	err  error
	got  groups.Filter
}

func (f *fakeGroups) Groups(_ context.Context, q groups.Filter) ([]groups.Group, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = q
	return f.list, f.err
}

func sampleGroups() []groups.Group {
	hour := now.Truncate(time.Hour)
	k1 := groups.Key{Agent: "billing", Protocol: "a2a", Code: "TOOL_TIMEOUT", Kind: "unavailable", Method: "SendMessage"}
	k2 := groups.Key{Agent: "billing", Protocol: "a2a", Code: "INTERNAL_ERROR", Kind: "internal", Method: "<script>alert(1)</script>"}
	return []groups.Group{
		{ID: k1.ID(), Key: k1, FirstSeen: now.Add(-20 * time.Minute), LastSeen: now.Add(-time.Minute), Count: 12, Callers: 2,
			Versions: []groups.Version{{Version: "1.5.0"}}, Example: "err_tool_1", State: groups.New, Why: "first seen then",
			Hours: []groups.Hour{{Hour: hour, Count: 12}}},
		{ID: k2.ID(), Key: k2, FirstSeen: now.Add(-5 * time.Hour), LastSeen: now.Add(-2 * time.Minute), Count: 40, Callers: 1,
			Versions: []groups.Version{{Version: "1.5.0"}, {Version: "1.4.9"}}, Example: "ev-1",
			Hours: []groups.Hour{{Hour: hour.Add(-4 * time.Hour), Count: 20}, {Hour: hour.Add(-2 * time.Hour), Count: 10}, {Hour: hour, Count: 10}}},
	}
}

// TestUnitHourChartGeometry: one row per group; a bar per hour with
// errors, where that hour is on the range's scale, as tall as its errors
// against the group's busiest hour; none for hours without errors or
// outside the range.
func TestUnitHourChartGeometry(t *testing.T) {
	from := now.Truncate(time.Hour).Add(-9 * time.Hour)
	to := from.Add(10 * time.Hour)
	list := sampleGroups()
	list[1].Hours = append(list[1].Hours, groups.Hour{Hour: from.Add(-3 * time.Hour), Count: 99}) // before the range
	c := newHourChart(list, from, to)
	if len(c.Rows) != 2 || c.Rows[0].State != "new" || c.Rows[1].State != "" {
		t.Fatalf("rows %+v", c.Rows)
	}
	at := func(h float64) int { return c.Left + int(float64(c.Plot)*h/10) }
	if len(c.Rows[1].Bars) != 3 {
		t.Fatalf("the second group has %d bars; want 3 (its hours in the range)", len(c.Rows[1].Bars))
	}
	b0, b1 := c.Rows[1].Bars[0], c.Rows[1].Bars[1]
	if b0.X != at(5) || b1.X != at(7) || b0.H != hourBarH || b1.H != hourBarH/2 || b0.Y+b0.H != b1.Y+b1.H {
		t.Errorf("bars %+v %+v; want at hours 5 and 7, full and half height, on one baseline", b0, b1)
	}
	if !strings.Contains(b0.Title, "20 errors") {
		t.Errorf("bar title %q", b0.Title)
	}
	if c.Height != 2*hourRowH+chartAxisH {
		t.Errorf("height %d", c.Height)
	}
}

// TestUnitGroupsPage: the page asks the reader for the agent over the
// default week (new, version and group passed on), draws the groups per
// hour as inline SVG (no script, the same CSP, no inline style) with a
// table linking each example to its story, escapes what producers named,
// refuses a bad "new", and is unavailable without a reader.
func TestUnitGroupsPage(t *testing.T) {
	grp := &fakeGroups{list: sampleGroups()}
	r := newRig(Config{Groups: grp})
	resp, body := r.get(t, "/agents/billing/groups?new=true&version=1.5.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if grp.got.Agent != "billing" || !grp.got.NewOnly || grp.got.Version != "1.5.0" || !grp.got.To.Equal(now) || !grp.got.From.Equal(now.Add(-DefaultGroupRange)) {
		t.Errorf("reader asked %+v; want billing's new groups of 1.5.0 over the week before now", grp.got)
	}
	for _, want := range []string{"<svg", `class="row s-new"`, `class="row s-seen"`, `class="bar"`,
		"unavailable TOOL_TIMEOUT on SendMessage (a2a)", "new (first seen then)", "1.5.0 1.4.9",
		"/errors?agent=billing&amp;id=err_tool_1", sampleGroups()[0].ID} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("the page holds a script element (a method name was not escaped, or a script was added)")
	}
	if got := resp.Header.Get("Content-Security-Policy"); got != contentSecurityPolicy {
		t.Errorf("CSP %q, want the pages' own %q", got, contentSecurityPolicy)
	}
	if strings.Contains(body, "style=") {
		t.Error("an inline style attribute: the CSP (default-src 'self') blocks it")
	}
	if resp, _ := r.get(t, "/agents/billing/groups?new=maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("new=maybe: %d, want 400", resp.StatusCode)
	}
	grp.list = nil
	if resp, body := r.get(t, "/agents/billing/groups"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "No error groups") || strings.Contains(body, "<svg") {
		t.Errorf("no groups: %d, want 200 saying so without a chart", resp.StatusCode)
	}
	none := httptest.NewRecorder()
	New(Config{}, nil, nil).ServeHTTP(none, httptest.NewRequest(http.MethodGet, "/agents/billing/groups", nil))
	if b, _ := io.ReadAll(none.Result().Body); none.Code != http.StatusServiceUnavailable {
		t.Errorf("without a reader: %d %s, want 503", none.Code, b)
	}
	if u := GroupsURL("https://e.example/ops/", "billing agent", "0123456789abcdef", false); u != "https://e.example/ops/agents/billing%20agent/groups?group=0123456789abcdef" {
		t.Errorf("GroupsURL = %s", u)
	}
}
