package mcpserve

// Pure unit tests on fake services (named TestUnit*): how each tool turns
// its arguments and the services' errors into answers. The real stores and
// the real clients are cmd/errtrail's TestMCP.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// fakeStore answers every question with err, or a fixed answer; it
// records what it was asked.
type fakeStore struct {
	err      error
	askedID  string
	from, to time.Time
	f        incidents.Filter
}

func (s *fakeStore) Story(_ context.Context, id string, _ lookup.FindOptions) (*lookup.Story, error) {
	s.askedID = id
	if s.err != nil {
		return nil, s.err
	}
	st := &lookup.Story{MatchedAs: "event_id"}
	st.Record.EventID, st.Record.Kind = "ev-1", "quota"
	return st, nil
}
func (s *fakeStore) List(context.Context, lookup.ListQuery) (*lookup.Page, error) { return nil, s.err }
func (s *fakeStore) Ready(context.Context) error                                  { return s.err }
func (s *fakeStore) Report(_ context.Context, agent string, from, to time.Time) (*report.Report, error) {
	s.from, s.to = from, to
	if s.err != nil {
		return nil, s.err
	}
	return &report.Report{Agent: agent, From: from, To: to}, nil
}
func (s *fakeStore) Incidents(_ context.Context, f incidents.Filter) ([]incidents.Incident, error) {
	s.f = f
	return nil, s.err
}

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func connect(t *testing.T, st *fakeStore) *mcp.ClientSession {
	t.Helper()
	srv, err := New(Config{Lookup: st, Reports: st, Incidents: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return connectTo(t, srv)
}

// connectTo connects a client to srv over in-memory transports.
func connectTo(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, stt := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, stt, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "unit", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (isError bool, text string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error, want a tool result: %v", tool, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return res.IsError, text
}

// TestUnitStoreErrorsAreToolErrors: each failure of the store is a tool
// error that says what to do and never quotes the id asked, even when the
// store's reason holds it.
func TestUnitStoreErrorsAreToolErrors(t *testing.T) {
	const id = "cust-7781@example.test"
	for _, c := range []struct {
		err  error
		want string
	}{
		{lookup.ErrNotFound, "no stored error reply carries this id"},
		{&lookup.BadIDError{Reason: "an e-mail such as " + id + " is stored hashed"}, "cannot be an id errtrail stores"},
		{&lookup.UnavailableError{Err: errors.New("dial " + id)}, "retry later"},
		{&lookup.ConfigError{Err: errors.New("no such table")}, "a retry cannot help"},
		{context.DeadlineExceeded, "did not answer in time"},
		{&lookup.AmbiguousError{Matches: []lookup.Match{{EventID: "ev-a", Agent: "a1"}, {EventID: "ev-b", Agent: "a1"}}, Total: 2}, "event_id"},
	} {
		st := &fakeStore{err: c.err}
		isErr, text := call(t, connect(t, st), "lookup", map[string]any{"id": id})
		if !isErr || !strings.Contains(text, c.want) || strings.Contains(text, id) || st.askedID != id {
			t.Errorf("%T: error %v, %q (asked %q); want a tool error saying %q without the id", c.err, isErr, text, st.askedID, c.want)
		}
		if _, ok := c.err.(*lookup.AmbiguousError); ok && (!strings.Contains(text, "ev-a") || !strings.Contains(text, "ev-b")) {
			t.Errorf("ambiguous: the event_ids to choose from are missing: %q", text)
		}
	}
	// The same story, answered.
	if isErr, text := call(t, connect(t, &fakeStore{}), "lookup", map[string]any{"id": id}); isErr || !strings.Contains(text, "QUOTA") {
		t.Errorf("a story: error %v, %q", isErr, text)
	}
}

// TestUnitArgumentLimits: bad arguments never reach the store.
func TestUnitArgumentLimits(t *testing.T) {
	st := &fakeStore{}
	cs := connect(t, st)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"lookup", map[string]any{"id": ""}, "id is required"},
		{"lookup", map[string]any{"id": strings.Repeat("7", lookup.MaxIDLen+1)}, "longer than any id"},
		{"lookup", map[string]any{"id": "a\x00b"}, "control characters"},
		{"lookup", map[string]any{"id": "x", "agent": "bad\nagent"}, "agent holds control characters"},
		{"lookup", map[string]any{"id": "x", "unknown": 1}, "unknown"},
		{"check", map[string]any{"reply": ""}, "reply is empty"},
		{"check", map[string]any{"reply": strings.Repeat("y", DefaultMaxReplyBytes+1)}, "more than the 262144 bytes"},
		{"check", map[string]any{"reply": "not a reply at all"}, "cannot be read"},
		{"report", map[string]any{"since": "32d"}, "since must be"},
		{"report", map[string]any{"since": "745h"}, "since must be"},
		{"report", map[string]any{"from": "2026-01-01T00:00:00Z"}, "longer than 31 days"},
		{"report", map[string]any{"from": "2026-12-05T12:00:00Z", "to": "2026-12-05T11:00:00Z"}, "from must be before to"},
		{"report", map[string]any{"to": "yesterday"}, "to must be an RFC 3339 time"},
		{"incidents", map[string]any{"kind": "quota"}, "kind is not a kind"},
		{"incidents", map[string]any{"limit": 1001}, "limit must be from 1 to 1000"},
	} {
		st.askedID, st.from, st.f = "", time.Time{}, incidents.Filter{}
		isErr, text := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: error %v, %q; want a tool error saying %q", c.tool, c.args, isErr, text, c.want)
		}
		if st.askedID != "" || !st.from.IsZero() || !st.f.To.IsZero() {
			t.Errorf("%s %v: the store was asked", c.tool, c.args)
		}
	}
}

// TestUnitWindows: the defaults and since.
func TestUnitWindows(t *testing.T) {
	st := &fakeStore{}
	cs := connect(t, st)
	if isErr, text := call(t, cs, "report", map[string]any{"agent": "a1"}); isErr || !st.to.Equal(now) || !st.from.Equal(now.Add(-24*time.Hour)) {
		t.Errorf("report default: %v %q, %v–%v; want the last 24 hours", isErr, text, st.from, st.to)
	}
	if isErr, _ := call(t, cs, "report", map[string]any{"since": "90m", "to": "2026-12-01T00:00:00Z"}); isErr ||
		!st.from.Equal(time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC)) {
		t.Errorf("since 90m before to: %v %v", isErr, st.from)
	}
	if isErr, text := call(t, cs, "incidents", map[string]any{"kind": "overload", "open_only": true}); isErr || st.f.Kind != incidents.Overload ||
		!st.f.OpenOnly || st.f.Limit != 200 || !st.f.From.Equal(now.Add(-7*24*time.Hour)) || !strings.Contains(text, "no incidents") {
		t.Errorf("incidents: %v %q, %+v", isErr, text, st.f)
	}
}

// fakeGroups answers the groups tool with list or err and records the
// filter it was asked.
type fakeGroups struct {
	list []groups.Group
	err  error
	f    groups.Filter
}

func (g *fakeGroups) Groups(_ context.Context, f groups.Filter) ([]groups.Group, error) {
	g.f = f
	return g.list, g.err
}

// TestUnitGroupsTool: the groups tool is offered only with a groups
// store; it passes agent, new_only, version and the window (7 days by
// default) to the store, answers the groups as text and structured
// content, refuses a missing agent or a window over 90 days without asking
// the store, and turns a store failure into a tool error.
func TestUnitGroupsTool(t *testing.T) {
	st := &fakeStore{}
	names := func(cs *mcp.ClientSession) (out []string) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(connect(t, st)); strings.Contains(strings.Join(got, " "), "groups") {
		t.Errorf("without a groups store the tools are %v; want no groups tool", got)
	}
	g := &fakeGroups{list: []groups.Group{{ID: "0123456789abcdef", Key: groups.Key{Agent: "billing-agent", Protocol: "a2a", Code: "TASK_NOT_FOUND", Kind: "not_found", Method: "GetTask"},
		FirstSeen: now.Add(-30 * time.Minute), LastSeen: now.Add(-time.Minute), Count: 12, Callers: 3, Example: "err_9", State: groups.New, Why: "first seen 30 minutes ago"}}}
	srv, err := New(Config{Lookup: st, Reports: st, Incidents: st, Groups: g, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectTo(t, srv)
	if got := strings.Join(names(cs), " "); !strings.Contains(got, "groups") {
		t.Fatalf("with a groups store the tools are %v; want groups among them", got)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "groups", Arguments: map[string]any{"agent": "billing-agent", "new_only": true, "version": "1.5.0"}})
	if err != nil || res.IsError {
		t.Fatalf("groups: %v %+v", err, res)
	}
	if g.f.Agent != "billing-agent" || !g.f.NewOnly || g.f.Version != "1.5.0" || !g.f.To.Equal(now) || !g.f.From.Equal(now.Add(-7*24*time.Hour)) || !g.f.Now.Equal(now) {
		t.Errorf("the store was asked %+v; want agent, new_only, version and the last 7 days", g.f)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !strings.Contains(text, "TASK_NOT_FOUND") || !strings.Contains(text, "new") {
		t.Errorf("groups text %q; want the group and its state", text)
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"id":"0123456789abcdef"`) || !strings.Contains(string(sc), `"agent":"billing-agent"`) {
		t.Errorf("structured content %s; want the group list", sc)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "agent"}, // the SDK checks the schema: agent is required
		{map[string]any{"agent": "billing-agent", "since": "2161h"}, "since must be"},
	} {
		g.f = groups.Filter{}
		if isErr, text := call(t, cs, "groups", c.args); !isErr || !strings.Contains(text, c.want) || !g.f.To.IsZero() {
			t.Errorf("groups %v: error %v, %q (store asked %+v); want a tool error saying %q, the store not asked", c.args, isErr, text, g.f, c.want)
		}
	}
	g.err = &lookup.UnavailableError{Err: errors.New("dial")}
	if isErr, text := call(t, cs, "groups", map[string]any{"agent": "billing-agent"}); !isErr || !strings.Contains(text, "retry later") {
		t.Errorf("groups on a failing store: error %v, %q; want a tool error saying to retry later", isErr, text)
	}
}
