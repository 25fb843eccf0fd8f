package lookup

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// restQuota is seed 002's quota rejection with an error_id in its
// ErrorInfo metadata (the id the agent gave this reply).
func restQuota(errorID string) string {
	return `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Caller orchestrator-7 exceeded 60 SendMessage calls per minute","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"scope":"caller","error_id":"` + errorID + `"}},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`
}

// TestStoryOneReplyTwoObservers: the agent's middleware and the client's
// transport both published one reply. Its error_id gives one story (not
// "several matches"), told from the agent's copy, naming both observers
// and saying they saw the same thing; the client's event_id gives the same
// reply told from the client's copy. A retry of the message (a second
// reply, also seen twice) makes the message_id name two replies: several
// matches, four rows, each with its observer and its reply number. A
// gateway that rewrote the reply is named with the fields it changed.
func TestStoryOneReplyTwoObservers(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-4 * time.Minute).Truncate(time.Millisecond)
	reply := func(id, src, errorID string, d time.Duration, attempt int) ev {
		e := ev{ID: id, At: at.Add(d), Agent: "research-agent", Source: src, Attempt: attempt, Status: 429,
			Headers: map[string]string{"Retry-After": "12"},
			Request: map[string]any{"message_id": "msg-two-obs", "http_request_id": "req-two-obs-" + errorID},
			Body:    restQuota(errorID)}
		if src == "agent" {
			e.Caller = "orchestrator-7" // the client's transport names no caller
		}
		return e
	}
	store(t, conn, opts,
		reply("agent-1:aa-1", "agent", "err_two_obs_1", 0, 1),
		reply("client-1:cc-1", "client", "err_two_obs_1", 3*time.Millisecond, 1),
		reply("agent-1:aa-2", "agent", "err_two_obs_2", 15*time.Second, 2),
		reply("client-1:cc-2", "client", "err_two_obs_2", 15*time.Second+2*time.Millisecond, 2))
	f := newFinder(conn, opts)
	ctx := context.Background()

	st, err := f.Story(ctx, "err_two_obs_1", FindOptions{})
	if err != nil {
		t.Fatalf("one reply seen by the agent and the client: %v; want one story", err)
	}
	o := st.Observers
	if st.MatchedAs != "error_id" || st.Record.EventID != "agent-1:aa-1" || st.Record.SourceKind != "agent" || st.Record.Caller != "orchestrator-7" {
		t.Errorf("story told from %s (%s, caller %q), matched as %s; want the agent's copy, by error_id",
			st.Record.EventID, st.Record.SourceKind, st.Record.Caller, st.MatchedAs)
	}
	if !o.Same || !o.Joined || len(o.Copies) != 2 || o.Copies[0].SourceKind != "agent" || !o.Copies[0].This ||
		o.Copies[1].SourceKind != "client" || o.Copies[1].EventID != "client-1:cc-1" || len(o.Copies[1].Differs) != 0 {
		t.Errorf("observers %+v; want the agent's copy, then the client's, equal", o)
	}
	if !strings.Contains(o.Summary, "the agent (agent-1) and the client (client-1)") || !strings.Contains(o.Summary, "same reply") {
		t.Errorf("summary %q", o.Summary)
	}
	// The attempts are the agent's own chain: the client's copies are not
	// counted as more attempts.
	if n := len(st.Attempts.Attempts); n != 2 {
		t.Errorf("%d attempts; want the agent's 2 (the client's copies are not attempts)", n)
	}

	// The client's event_id: the same reply, told from the client's copy.
	st, err = f.Story(ctx, "client-1:cc-1", FindOptions{})
	if err != nil || st.Record.EventID != "client-1:cc-1" || st.MatchedAs != "event_id" || len(st.Observers.Copies) != 2 ||
		st.Observers.Copies[1].EventID != "agent-1:aa-1" {
		t.Errorf("by the client's event_id: %v, %+v; want the client's copy with the agent's beside it", err, st)
	}
	// The request id both observers read: the same one story.
	if st, err = f.Story(ctx, "req-two-obs-err_two_obs_2", FindOptions{}); err != nil || st.Record.EventID != "agent-1:aa-2" || len(st.Observers.Copies) != 2 {
		t.Errorf("by the request id: %v; want the second reply's story with both copies", err)
	}

	// The message_id names both replies: several matches, with observers.
	_, err = f.Story(ctx, "msg-two-obs", FindOptions{})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Total != 4 || amb.Replies != 2 || len(amb.Matches) != 4 {
		t.Fatalf("a retried message: %v (%+v); want several matches: 2 replies, 4 rows", err, amb)
	}
	var got []string
	for _, m := range amb.Matches {
		got = append(got, m.EventID+"/"+m.SourceKind+"/"+string(rune('0'+m.Reply)))
	}
	if want := []string{"agent-1:aa-2/agent/1", "client-1:cc-2/client/1", "agent-1:aa-1/agent/2", "client-1:cc-1/client/2"}; !slices.Equal(got, want) {
		t.Errorf("matches %q, want %q", got, want)
	}
	if !strings.Contains(err.Error(), "2 distinct error replies") || strings.Contains(err.Error(), "msg-two-obs") {
		t.Errorf("message %q", err)
	}
	// Picking one row gives that reply's one story, both observers in it.
	st, err = f.Story(ctx, "msg-two-obs", FindOptions{EventID: "client-1:cc-2"})
	if err != nil || st.Record.EventID != "client-1:cc-2" || len(st.Observers.Copies) != 2 || st.Observers.Copies[1].SourceKind != "agent" {
		t.Errorf("picked by event_id: %v %+v", err, st)
	}

	// A gateway that turned the 429 into a 503 and dropped Retry-After.
	gw := reply("edge-1:gg-3", "gateway", "err_two_obs_3", 40*time.Second+5*time.Millisecond, 1)
	gw.Status, gw.Headers = 503, nil
	gw.Request = map[string]any{"message_id": "msg-rewritten"}
	ag := reply("agent-1:aa-3", "agent", "err_two_obs_3", 40*time.Second, 1)
	ag.Request = map[string]any{"message_id": "msg-rewritten"}
	store(t, conn, opts, ag, gw)
	st, err = f.Story(ctx, "err_two_obs_3", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o = st.Observers
	if o.Same || len(o.Copies) != 2 || o.Copies[1].SourceKind != "gateway" {
		t.Fatalf("a rewrite: %+v; want two copies that differ", o)
	}
	var fields []string
	for _, d := range o.Copies[1].Differs {
		fields = append(fields, d.Field)
	}
	if !slices.Contains(fields, "http_status") || slices.Contains(fields, "event_id") || slices.Contains(fields, "observed_at") {
		t.Errorf("differences %q; want http_status among them and no observation field", fields)
	}
	if !strings.Contains(o.Summary, "http_status (429 for the agent, 503 for a gateway)") {
		t.Errorf("summary %q", o.Summary)
	}
}
