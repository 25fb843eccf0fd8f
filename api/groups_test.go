package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
)

// TestUnitGroups: /v1/agents/{agent}/groups passes the agent and its
// parameters to the reader (the range defaulting to the 7 days before
// now), answers its groups, pages them with a cursor that repeats and
// skips none; bad parameters are refused by name before the reader is
// asked; without a reader the route is unavailable, not empty.
func TestUnitGroups(t *testing.T) {
	h := newHarness(t, nil)
	a := h.get("/v1/agents/alpha/groups?new=true&version=1.2.0&limit=2")
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	var got GroupList
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	now := h.clock.Now().UTC()
	want := groups.Filter{Agent: "alpha", NewOnly: true, Version: "1.2.0", From: now.Add(-7 * 24 * time.Hour), To: now, Now: now}
	if h.grp.got != want {
		t.Errorf("reader asked %+v, want %+v", h.grp.got, want)
	}
	if got.Agent != "alpha" || len(got.Groups) != 2 || got.Groups[0].State != groups.New || got.Next == "" {
		t.Fatalf("first page %+v; want 2 groups, the new one first, and a cursor", got)
	}
	b := h.get("/v1/agents/alpha/groups?limit=2&cursor=" + got.Next)
	var second GroupList
	if err := json.Unmarshal(b.body, &second); b.status != http.StatusOK || err != nil {
		t.Fatalf("second page: %d %s", b.status, b.body)
	}
	if len(second.Groups) != 1 || second.Groups[0].Code != "RATE_LIMIT_EXCEEDED" || second.Next != "" {
		t.Errorf("second page %+v; want the third group only, no cursor", second)
	}

	h.grp.got = groups.Filter{}
	for _, c := range []struct{ query, code string }{
		{"?new=maybe", "invalid-parameter"},
		{"?limit=0", "invalid-parameter"},
		{"?limit=1001", "invalid-parameter"},
		{"?cursor=x", "invalid-parameter"},
		{"?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z", "invalid-range"},
		{"?kind=quota", "unknown-parameter"},
	} {
		a := h.get("/v1/agents/alpha/groups" + c.query)
		if a.status != http.StatusBadRequest || a.problemCode() != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.query, a.status, a.problemCode(), c.code)
		}
	}
	if h.grp.got != (groups.Filter{}) {
		t.Errorf("the reader was asked %+v for a refused request", h.grp.got)
	}
	h.grp.fn = func(context.Context, groups.Filter) ([]groups.Group, error) { return nil, nil }
	if a := h.get("/v1/agents/alpha/groups"); a.status != http.StatusOK {
		t.Errorf("no groups: %d %s", a.status, a.body)
	} else if err := json.Unmarshal(a.body, &got); err != nil || got.Groups == nil || len(got.Groups) != 0 {
		t.Errorf("no groups answered %s, want an empty list", a.body)
	}
	none := newHarness(t, func(c *Config) { c.Groups = nil })
	if a := none.get("/v1/agents/alpha/groups"); a.status != http.StatusServiceUnavailable {
		t.Errorf("without a reader: %d, want 503", a.status)
	}
}
