package lookup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// TestContextVerdictsFromIncidents: when an alerter was recording in the
// record's minute, the story's verdicts are the episodes under way at its
// second (read, not recomputed: one overload reply alone would never make
// an overload verdict); a runaway is the record's caller's only; an episode
// that had ended, or not begun, is no verdict; in a minute no alerter
// recorded, the verdicts are recomputed and the story says so.
func TestContextVerdictsFromIncidents(t *testing.T) {
	conn, opts := openDB(t)
	ctx := context.Background()
	at := time.Now().Add(-30 * time.Minute).Truncate(time.Minute).Add(20 * time.Second)
	store(t, conn, opts,
		ev{ID: "ev-in", At: at, Agent: "busy-agent", Caller: "caller-0", Status: 503, Body: rest503},
		ev{ID: "ev-other-caller", At: at.Add(time.Second), Agent: "busy-agent", Caller: "caller-1", Status: 503, Body: rest503},
		ev{ID: "ev-after", At: at.Add(2 * time.Minute), Agent: "busy-agent", Caller: "caller-0", Status: 503, Body: rest503},
		ev{ID: "ev-unrecorded", At: at.Add(-10 * time.Minute), Agent: "busy-agent", Caller: "caller-0", Status: 503, Body: rest503},
		ev{ID: "ev-quota", At: at, Agent: "research-agent", Caller: "orchestrator-7", Status: 429, Body: rest429("quota")},
	)
	episodes := []incidents.Incident{
		{Kind: incidents.Overload, Agent: "busy-agent", Start: at.Add(-time.Minute), Fired: at.Add(-45 * time.Second),
			LastSeen: at.Add(50 * time.Second), End: at.Add(time.Minute), Version: 1},
		{Kind: incidents.Runaway, Agent: "busy-agent", Caller: "caller-0", Start: at.Add(-time.Minute),
			LastSeen: at.Add(50 * time.Second), End: at.Add(time.Minute), Version: 1},
	}
	if err := incidents.Write(ctx, conn, opts.Database, episodes); err != nil {
		t.Fatal(err)
	}
	for _, m := range []time.Duration{0, 2 * time.Minute} {
		if err := incidents.MarkRecording(ctx, conn, opts.Database, "alerter-1", at.Add(m)); err != nil {
			t.Fatal(err)
		}
	}
	f := newFinder(conn, opts)
	story := func(id string) Context {
		t.Helper()
		st, err := f.Story(ctx, id, FindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Context.VerdictError != "" {
			t.Fatalf("%s: verdict error %q", id, st.Context.VerdictError)
		}
		if id == "ev-in" && !strings.Contains(st.Meaning.Text, "The agent was failing for everyone at that moment") {
			t.Errorf("%s: the meaning ignores the recorded overload: %s", id, st.Meaning.Text)
		}
		return st.Context
	}
	for _, c := range []struct {
		id                  string
		overloaded, runaway bool
		source              string
	}{
		{"ev-in", true, true, VerdictsRecorded},
		{"ev-other-caller", true, false, VerdictsRecorded},
		{"ev-after", false, false, VerdictsRecorded},
		{"ev-quota", false, false, VerdictsRecorded},
		{"ev-unrecorded", false, false, VerdictsRecomputed},
	} {
		got := story(c.id)
		if got.AgentOverloaded != c.overloaded || got.CallerRunaway != c.runaway || got.VerdictSource != c.source {
			t.Errorf("%s: overloaded %v, runaway %v, source %q; want %v, %v, %q", c.id,
				got.AgentOverloaded, got.CallerRunaway, got.VerdictSource, c.overloaded, c.runaway, c.source)
		}
		if c.source == VerdictsRecorded && !got.RetryStormChecked {
			t.Errorf("%s: recorded verdicts say retry storms were not checked (the alerter checks them always)", c.id)
		}
	}
}
