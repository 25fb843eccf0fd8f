package lookup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/schema"
)

// row is a stored row for the pure tests of the grouping rule.
func row(event, kind, errorID, msgID string, at time.Time) schema.ErrorRow {
	return schema.ErrorRow{EventID: event, SourceKind: kind, SourceID: kind + "-1", Agent: "research-agent",
		ErrorID: errorID, MessageID: msgID, ObservedAt: at.Truncate(time.Second), ObservedAtMS: uint64(at.UnixMilli()),
		Kind: "quota", Code: "RATE_LIMITED", HTTPStatus: 429, Retryable: 1, RetryAfterMS: 12000}
}

func eventIDs(rows []schema.ErrorRow, groups [][]int) [][]string {
	out := make([][]string, len(groups))
	for i, g := range groups {
		for _, j := range g {
			out[i] = append(out[i], rows[j].EventID)
		}
	}
	return out
}

// TestUnitGroupReplies: the rule of "one reply" (observers.go). Copies of
// one reply share a non-empty error_id, an agent and (when both have one)
// the message_id, come from different observers and were seen within
// MaxObserverSkew; the best observer is first, the newest reply first.
// Pure: rows built by hand.
func TestUnitGroupReplies(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		rows []schema.ErrorRow
		want [][]string
	}{
		{"agent and client see one reply", []schema.ErrorRow{
			row("c1", "client", "err_1", "m1", t0.Add(3*ms)), row("a1", "agent", "err_1", "m1", t0)},
			[][]string{{"a1", "c1"}}},
		{"agent, gateway and client", []schema.ErrorRow{
			row("c1", "client", "err_1", "m1", t0.Add(5*ms)), row("g1", "gateway", "err_1", "m1", t0.Add(2*ms)), row("a1", "agent", "err_1", "m1", t0)},
			[][]string{{"a1", "g1", "c1"}}},
		{"a retried message: two replies, each seen twice", []schema.ErrorRow{
			row("a1", "agent", "err_1", "m1", t0), row("c1", "client", "err_1", "m1", t0.Add(ms)),
			row("a2", "agent", "err_2", "m1", t0.Add(2*time.Second)), row("c2", "client", "err_2", "m1", t0.Add(2*time.Second+ms))},
			[][]string{{"a2", "c2"}, {"a1", "c1"}}},
		{"an agent that reuses its error_id: one observer's two rows are two replies", []schema.ErrorRow{
			row("a1", "agent", "err_same", "m1", t0), row("c1", "client", "err_same", "m1", t0.Add(ms)),
			row("a2", "agent", "err_same", "m1", t0.Add(time.Second)), row("c2", "client", "err_same", "m1", t0.Add(time.Second+ms))},
			[][]string{{"a2", "c2"}, {"a1", "c1"}}},
		{"no error_id: copies cannot be told from retries", []schema.ErrorRow{
			row("a1", "agent", "", "m1", t0), row("c1", "client", "", "m1", t0.Add(ms))},
			[][]string{{"c1"}, {"a1"}}},
		{"too far apart", []schema.ErrorRow{
			row("a1", "agent", "err_1", "", t0), row("c1", "client", "err_1", "", t0.Add(MaxObserverSkew+time.Second))},
			[][]string{{"c1"}, {"a1"}}},
		{"different messages", []schema.ErrorRow{
			row("a1", "agent", "err_1", "m1", t0), row("c1", "client", "err_1", "m2", t0.Add(ms))},
			[][]string{{"c1"}, {"a1"}}},
		{"one side without a message_id", []schema.ErrorRow{
			row("a1", "agent", "err_1", "m1", t0), row("c1", "client", "err_1", "", t0.Add(ms))},
			[][]string{{"a1", "c1"}}},
	} {
		got := eventIDs(tc.rows, groupReplies(tc.rows))
		if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
			t.Errorf("%s: groups %q, want %q", tc.name, got, tc.want)
		}
	}
	// Another agent's row with the same error_id is another reply; a
	// client's copy that names no agent is a copy.
	a, b := row("a1", "agent", "err_1", "", t0), row("c1", "client", "err_1", "", t0)
	b.Agent = "other-agent"
	if sameReply(&a, &b) {
		t.Error("rows of two agents joined as one reply")
	}
	b.Agent = ""
	if !sameReply(&a, &b) {
		t.Error("a client's copy without the agent's name not joined")
	}
}

// TestUnitObservers: the copies of one reply, compared field by field. An
// equal copy says so; a gateway that turned the agent's 429 into a bare
// 502 differs in exactly the fields it changed, and the summary names them
// and both observers; the observation's own fields (event_id, time,
// endpoint, caller) are never differences. Pure.
func TestUnitObservers(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	agent := row("a1", "agent", "err_1", "m1", t0)
	agent.Caller, agent.Endpoint = "orchestrator-7", "http://127.0.0.1:8080/a2a"
	client := row("c1", "client", "err_1", "m1", t0.Add(4*time.Millisecond))
	client.Endpoint = "https://research.agents.example/a2a" // and no caller: the client did not name itself
	rec := recordOf(&agent)

	o := observersOf(&rec, []schema.ErrorRow{agent, client})
	if !o.Same || !o.Joined || len(o.Copies) != 2 || !o.Copies[0].This || o.Copies[0].SourceKind != "agent" ||
		o.Copies[1].SourceKind != "client" || o.Copies[1].This || len(o.Copies[1].Differs) != 0 {
		t.Fatalf("agent and client, equal copies: %+v", o)
	}
	for _, want := range []string{"2 observers", "the agent (agent-1)", "the client (client-1)", "same reply"} {
		if !strings.Contains(o.Summary, want) {
			t.Errorf("summary %q lacks %q", o.Summary, want)
		}
	}

	rewritten := client
	rewritten.SourceKind, rewritten.SourceID, rewritten.EventID = "gateway", "edge-1", "g1"
	rewritten.HTTPStatus, rewritten.Code, rewritten.Kind, rewritten.RetryAfterMS = 502, "", "unknown", -1
	o = observersOf(&rec, []schema.ErrorRow{rewritten, agent})
	if o.Same || len(o.Copies) != 2 || o.Copies[0].EventID != "a1" {
		t.Fatalf("a rewrite reads as the same reply: %+v", o)
	}
	var fields []string
	for _, d := range o.Copies[1].Differs {
		fields = append(fields, d.Field)
	}
	if want := []string{"http_status", "code", "kind", "retry_after_ms"}; !slices.Equal(fields, want) {
		t.Errorf("differences %q, want %q", fields, want)
	}
	if d := o.Copies[1].Differs[0]; d.Record != "429" || d.Copy != "502" {
		t.Errorf("http_status difference %+v; want 429 for the record, 502 for the copy", d)
	}
	for _, want := range []string{"a gateway (edge-1)", "http_status (429 for the agent, 502 for a gateway)", "changed on its way"} {
		if !strings.Contains(o.Summary, want) {
			t.Errorf("summary %q lacks %q", o.Summary, want)
		}
	}

	alone := row("a9", "agent", "", "m9", t0)
	rec = recordOf(&alone)
	o = observersOf(&rec, []schema.ErrorRow{alone})
	if !o.Same || o.Joined || len(o.Copies) != 1 || !strings.Contains(o.Summary, "no error_id") {
		t.Errorf("a reply without error_id: %+v", o)
	}
}
