package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// TestUnitIncidents: /v1/incidents passes its parameters to the reader
// (the range defaulting to the 7 days before now) and answers its episodes;
// bad parameters are refused by name before the reader is asked; without a
// reader the route is unavailable, not empty.
func TestUnitIncidents(t *testing.T) {
	h := newHarness(t, nil)
	a := h.get("/v1/incidents?agent=alpha&kind=overload&open=true&limit=5")
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	var got IncidentList
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Incidents) != 1 || got.Incidents[0].Agent != "alpha" || !got.Incidents[0].Open() {
		t.Errorf("answer %+v, want the reader's one open episode", got)
	}
	now := h.clock.Now().UTC()
	want := incidents.Filter{Agent: "alpha", Kind: incidents.Overload, OpenOnly: true, Limit: 5,
		From: now.Add(-7 * 24 * time.Hour), To: now}
	if h.inc.got != want {
		t.Errorf("reader asked %+v, want %+v", h.inc.got, want)
	}
	if !got.From.Equal(want.From) || !got.To.Equal(want.To) {
		t.Errorf("answer's range %v..%v, want %v..%v", got.From, got.To, want.From, want.To)
	}

	h.inc.got = incidents.Filter{}
	for _, c := range []struct{ query, code string }{
		{"?kind=quota", "invalid-parameter"},
		{"?open=maybe", "invalid-parameter"},
		{"?limit=0", "invalid-parameter"},
		{"?limit=1001", "invalid-parameter"},
		{"?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z", "invalid-range"},
		{"?cursor=x", "unknown-parameter"},
	} {
		a := h.get("/v1/incidents" + c.query)
		if a.status != http.StatusBadRequest || a.problemCode() != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.query, a.status, a.problemCode(), c.code)
		}
	}
	if h.inc.got != (incidents.Filter{}) {
		t.Errorf("the reader was asked %+v for a refused request", h.inc.got)
	}

	h.inc.fn = func(context.Context, incidents.Filter) ([]incidents.Incident, error) { return nil, nil }
	if a := h.get("/v1/incidents"); a.status != http.StatusOK || string(a.body) == "" || !json.Valid(a.body) {
		t.Errorf("no episodes: %d %s", a.status, a.body)
	} else if err := json.Unmarshal(a.body, &got); err != nil || got.Incidents == nil || len(got.Incidents) != 0 {
		t.Errorf("no episodes answered %s, want an empty list", a.body)
	}

	none := newHarness(t, func(c *Config) { c.Incidents = nil })
	if a := none.get("/v1/incidents"); a.status != http.StatusServiceUnavailable {
		t.Errorf("without a reader: %d, want 503", a.status)
	}
}
