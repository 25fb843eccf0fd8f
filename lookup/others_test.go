package lookup

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUnitMeaningOtherCallers: the meaning says what errtrail knows of the
// agent's other callers: the alerter's verdict (no overload found, never
// "healthy for everyone else"), then how many other callers got the same
// kind of error in that minute, or that none did; uncounted, nothing.
// Pure.
func TestUnitMeaningOtherCallers(t *testing.T) {
	r := testRecord("quota", "a2a")
	for _, tc := range []struct {
		others int64
		want   string
	}{
		{4, "4 other callers were also rejected for quota by research-agent in that minute."},
		{1, "1 other caller was also rejected for quota by research-agent in that minute."},
		{0, "No other caller was rejected for quota by research-agent in that minute."},
	} {
		m := meaningOf(&r, healthOK, tc.others)
		if !strings.Contains(m.Text, "The alerter found no overload of research-agent at that moment. "+tc.want) {
			t.Errorf("%d others: %q; want the verdict, then %q", tc.others, m.Text, tc.want)
		}
		if strings.Contains(m.Text, "healthy") {
			t.Errorf("%d others: says more than errtrail knows: %q", tc.others, m.Text)
		}
	}
	if m := meaningOf(&r, healthOK, -1); strings.Contains(m.Text, "other caller") {
		t.Errorf("uncounted: %q", m.Text)
	}
	in := testRecord("internal", "")
	if m := meaningOf(&in, healthUnknown, 2); !strings.Contains(m.Text, "2 other callers were also answered with internal errors by research-agent in that minute.") {
		t.Errorf("another kind: %q", m.Text)
	}
}

// TestStoryOtherCallers: four other callers were rate limited by the agent
// in the record's minute. The story counts them (each once, though one was
// seen by two observers), and not: the record's own caller, a copy without
// a caller, another kind, another minute, another agent.
func TestStoryOtherCallers(t *testing.T) {
	conn, opts := openDB(t)
	minute := time.Now().Add(-5 * time.Minute).Truncate(time.Minute)
	at := minute.Add(20 * time.Second)
	q := func(id, agent, caller, src string, at time.Time) ev {
		return ev{ID: id, At: at, Agent: agent, Caller: caller, Source: src, Status: 429, Body: rest429("quota")}
	}
	evs := []ev{q("ev-oc-this", "research-agent", "orchestrator-7", "", at), q("ev-oc-this-2", "research-agent", "orchestrator-7", "", at.Add(time.Second))}
	for i := 1; i <= 4; i++ {
		evs = append(evs, q(fmt.Sprintf("ev-oc-%d", i), "research-agent", fmt.Sprintf("planner-%d", i), "", at.Add(time.Duration(i)*time.Second)))
	}
	evs = append(evs,
		q("ev-oc-1-client", "research-agent", "planner-1", "client", at.Add(time.Second+time.Millisecond)), // the same rejection, seen again
		q("ev-oc-nameless", "research-agent", "", "client", at.Add(5*time.Second)),
		q("ev-oc-before", "research-agent", "planner-9", "", minute.Add(-time.Second)),
		q("ev-oc-elsewhere", "other-agent", "planner-8", "", at),
		ev{ID: "ev-oc-overload", At: at, Agent: "research-agent", Caller: "planner-7", Status: 503, Body: rest503})
	store(t, conn, opts, evs...)
	st, err := newFinder(conn, opts).Story(context.Background(), "ev-oc-this", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Context.OtherCallers != 4 {
		t.Errorf("other callers %d; want the 4 planners", st.Context.OtherCallers)
	}
	if !strings.Contains(st.Meaning.Text, "4 other callers were also rejected for quota by research-agent in that minute.") ||
		strings.Contains(st.Meaning.Text, "healthy for everyone") {
		t.Errorf("meaning %q", st.Meaning.Text)
	}
}
