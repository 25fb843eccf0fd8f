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
	// callers_1m counts quota and overload apart and the rest together:
	// for another kind the count is of that class, and the text says so.
	in := testRecord("internal", "")
	if m := meaningOf(&in, healthUnknown, 2); !strings.Contains(m.Text, "2 other callers were also answered with errors other than quota or overload by research-agent in that minute.") ||
		strings.Contains(m.Text, "internal errors by") {
		t.Errorf("another kind: %q", m.Text)
	}
	ov := testRecord("overload", "")
	if m := meaningOf(&ov, healthUnknown, 3); !strings.Contains(m.Text, "3 other callers were also answered with overload errors by research-agent in that minute.") {
		t.Errorf("overload: %q", m.Text)
	}
	if m := meaningOf(&ov, healthUnknown, 0); !strings.Contains(m.Text, "No other caller got overload errors from research-agent in that minute.") {
		t.Errorf("overload, no others: %q", m.Text)
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

// TestStoryOtherCallersOfOtherKinds: for a record of a kind other than
// quota and overload the count is of the callers with errors of any such
// kind in that minute (callers_1m counts the rest together): a caller
// with a not-found error counts for an internal error's story; callers
// with only quota or only overload errors, the record's own caller and
// another minute do not.
func TestStoryOtherCallersOfOtherKinds(t *testing.T) {
	conn, opts := openDB(t)
	minute := time.Now().Add(-5 * time.Minute).Truncate(time.Minute)
	at := minute.Add(20 * time.Second)
	const agent = "kinds-agent"
	evs := []ev{
		{ID: "ev-ok-this", At: at, Agent: agent, Caller: "me", Status: 500, Body: `{"error":"boom"}`},
		{ID: "ev-ok-1", At: at.Add(time.Second), Agent: agent, Caller: "other-1", Status: 500, Body: `{"error":"boom"}`},
		{ID: "ev-ok-2", At: at.Add(2 * time.Second), Agent: agent, Caller: "other-2", Status: 404, Body: taskNotFound},
		{ID: "ev-ok-quota", At: at, Agent: agent, Caller: "only-quota", Status: 429, Body: rest429("quota")},
		{ID: "ev-ok-overload", At: at, Agent: agent, Caller: "only-overload", Status: 503, Body: rest503},
		{ID: "ev-ok-before", At: minute.Add(-time.Second), Agent: agent, Caller: "other-3", Status: 500, Body: `{"error":"boom"}`},
	}
	store(t, conn, opts, evs...)
	st, err := newFinder(conn, opts).Story(context.Background(), "ev-ok-this", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Context.OtherCallers != 2 {
		t.Errorf("other callers %d; want other-1 and other-2", st.Context.OtherCallers)
	}
	if !strings.Contains(st.Meaning.Text, "2 other callers were also answered with errors other than quota or overload by kinds-agent in that minute.") {
		t.Errorf("meaning %q", st.Meaning.Text)
	}
}

// TestStoryContextMinutesByClass: the caller's minutes around the record
// come from callers_1m: quota and overload apart, every other kind as
// KindOther; another caller's and another agent's errors are not in them.
func TestStoryContextMinutesByClass(t *testing.T) {
	conn, opts := openDB(t)
	minute := time.Now().Add(-5 * time.Minute).Truncate(time.Minute)
	at := minute.Add(10 * time.Second)
	const agent, caller = "class-agent", "class-caller"
	evs := []ev{
		{ID: "ev-cl-this", At: at, Agent: agent, Caller: caller, Status: 429, Body: rest429("quota")},
		{ID: "ev-cl-2", At: at.Add(time.Second), Agent: agent, Caller: caller, Status: 429, Body: rest429("quota")},
		{ID: "ev-cl-3", At: at.Add(2 * time.Second), Agent: agent, Caller: caller, Status: 503, Body: rest503},
		{ID: "ev-cl-4", At: at.Add(3 * time.Second), Agent: agent, Caller: caller, Status: 404, Body: taskNotFound},
		{ID: "ev-cl-5", At: at.Add(-2 * time.Minute), Agent: agent, Caller: caller, Status: 500, Body: `{"error":"boom"}`},
		{ID: "ev-cl-6", At: at.Add(-2 * time.Minute), Agent: agent, Caller: caller, Status: 404, Body: taskNotFound},
		{ID: "ev-cl-other-caller", At: at, Agent: agent, Caller: "someone-else", Status: 500, Body: `{"error":"boom"}`},
		{ID: "ev-cl-other-agent", At: at, Agent: "elsewhere", Caller: caller, Status: 503, Body: rest503},
	}
	store(t, conn, opts, evs...)
	st, err := newFinder(conn, opts).Story(context.Background(), "ev-cl-this", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range st.Context.Minutes {
		if len(m.ByKind) > 0 {
			got[m.Minute.Sub(minute).String()] = fmt.Sprint(m.ByKind)
		}
	}
	want := map[string]string{"0s": "map[other:1 overload:1 quota:2]", "-2m0s": "map[other:2]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the caller's minutes (offset from the record's minute: counts) %v; want %v", got, want)
	}
}
