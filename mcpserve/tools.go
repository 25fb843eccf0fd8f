package mcpserve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/api"
	"github.com/errtrail/errtrail/conformance"
	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/textout"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// LookupArgs are the lookup tool's arguments.
type LookupArgs struct {
	ID      string `json:"id" jsonschema:"the id as the customer or agent team quotes it: error_id, HTTP or AgentRelay request id, event_id, A2A message_id or task_id, or a JSON-RPC id (then agent is required)"`
	Agent   string `json:"agent,omitempty" jsonschema:"the agent that answered: required with a JSON-RPC id, narrows any other id"`
	EventID string `json:"event_id,omitempty" jsonschema:"picks one of several stored replies that carry the id (an ambiguous lookup lists them)"`
}

func (t *tools) lookup(ctx context.Context, _ *mcp.CallToolRequest, in LookupArgs) (*mcp.CallToolResult, any, error) {
	if msg := checkID("id", in.ID, true); msg != "" {
		return toolError(msg), nil, nil
	}
	for _, a := range []struct{ name, v string }{{"agent", in.Agent}, {"event_id", in.EventID}} {
		if msg := checkID(a.name, a.v, false); msg != "" {
			return toolError(msg), nil, nil
		}
	}
	var st *lookup.Story
	err := t.ask(ctx, func(ctx context.Context) (err error) {
		st, err = t.cfg.Lookup.Story(ctx, in.ID, lookup.FindOptions{Agent: in.Agent, EventID: in.EventID})
		return err
	})
	if err != nil {
		return failed(err, in.ID), nil, nil
	}
	if st == nil {
		return toolError("errtrail found no story and no error; retry later"), nil, nil
	}
	var b strings.Builder
	if err := (textout.Printer{W: &b}).Story(st); err != nil {
		return nil, nil, err
	}
	return text(b.String()), st, nil
}

// CheckArgs are the check tool's arguments.
type CheckArgs struct {
	Reply string `json:"reply" jsonschema:"one error reply as text: the raw HTTP/1.1 response (status line, headers, blank line, body), a gRPC reply text form, or errtrail event JSON"`
}

func (t *tools) check(_ context.Context, _ *mcp.CallToolRequest, in CheckArgs) (*mcp.CallToolResult, any, error) {
	switch {
	case in.Reply == "":
		return toolError("reply is empty: pass one error reply, e.g. the raw HTTP/1.1 response starting with its status line"), nil, nil
	case len(in.Reply) > t.cfg.MaxReplyBytes:
		return toolError(fmt.Sprintf("reply is %d bytes, more than the %d bytes check takes: pass one reply only, with its body cut to the error object", len(in.Reply), t.cfg.MaxReplyBytes)), nil, nil
	}
	res, err := conformance.NewChecker().Check([]byte(in.Reply))
	if err != nil {
		return toolError(unreadable(err)), nil, nil
	}
	var b strings.Builder
	if err := conformance.WriteText(&b, "reply", &res, nil); err != nil {
		return nil, nil, err
	}
	if res.Broken == nil {
		res.Broken = []conformance.Broken{}
	}
	return text(b.String()), CheckResult{Result: res, Violations: res.Violations()}, nil
}

// CheckResult is check's structured answer.
type CheckResult struct {
	conformance.Result
	Violations int `json:"violations"` // broken MUST rules
}

// Window is a time range argument: from and to (RFC 3339), or since (a
// duration before to, or before now).
type Window struct {
	From  string `json:"from,omitempty" jsonschema:"start of the window, RFC 3339 (e.g. 2026-12-01T00:00:00Z); overrides since"`
	To    string `json:"to,omitempty" jsonschema:"end of the window, RFC 3339 (default: now)"`
	Since string `json:"since,omitempty" jsonschema:"the window's length before to, as a duration such as 90m, 24h or 168h"`
}

// ReportArgs are the report tool's arguments.
type ReportArgs struct {
	Agent string `json:"agent,omitempty" jsonschema:"the agent whose replies are counted; omitted: every agent"`
	Window
}

func (t *tools) report(ctx context.Context, _ *mcp.CallToolRequest, in ReportArgs) (*mcp.CallToolResult, any, error) {
	if msg := checkID("agent", in.Agent, false); msg != "" {
		return toolError(msg), nil, nil
	}
	from, to, msg := t.window(in.Window, api.DefaultReportRange, report.MaxRange)
	if msg != "" {
		return toolError(msg), nil, nil
	}
	var rep *report.Report
	err := t.ask(ctx, func(ctx context.Context) (err error) {
		rep, err = t.cfg.Reports.Report(ctx, in.Agent, from, to)
		return err
	})
	if err != nil {
		return failed(err, in.Agent), nil, nil
	}
	if rep == nil {
		return toolError("errtrail made no report and gave no error; retry later"), nil, nil
	}
	var b strings.Builder
	if err := (textout.Printer{W: &b}).Report(rep); err != nil {
		return nil, nil, err
	}
	return text(b.String()), rep, nil
}

// IncidentsArgs are the incidents tool's arguments.
type IncidentsArgs struct {
	Agent    string `json:"agent,omitempty" jsonschema:"only this agent's episodes"`
	Kind     string `json:"kind,omitempty" jsonschema:"only episodes of this kind: overload, runaway, limit_too_low, retry_storm, gateway_mangling, untyped_errors or undecided"`
	OpenOnly bool   `json:"open_only,omitempty" jsonschema:"only the episodes still open"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many episodes, the latest first (default 200, at most 1000)"`
	Window
}

func (t *tools) incidents(ctx context.Context, _ *mcp.CallToolRequest, in IncidentsArgs) (*mcp.CallToolResult, any, error) {
	if msg := checkID("agent", in.Agent, false); msg != "" {
		return toolError(msg), nil, nil
	}
	f := incidents.Filter{Agent: in.Agent, OpenOnly: in.OpenOnly, Limit: api.DefaultIncidentLimit}
	if in.Kind != "" {
		k, err := incidents.ParseKind(in.Kind)
		if err != nil {
			return toolError("kind is not a kind of incident: use overload, runaway, limit_too_low, retry_storm, gateway_mangling, untyped_errors or undecided"), nil, nil
		}
		f.Kind = k
	}
	if in.Limit != 0 {
		if in.Limit < 1 || in.Limit > api.MaxIncidentLimit {
			return toolError(fmt.Sprintf("limit must be from 1 to %d", api.MaxIncidentLimit)), nil, nil
		}
		f.Limit = in.Limit
	}
	var msg string
	if f.From, f.To, msg = t.window(in.Window, api.DefaultIncidentRange, api.MaxIncidentRange); msg != "" {
		return toolError(msg), nil, nil
	}
	var list []incidents.Incident
	err := t.ask(ctx, func(ctx context.Context) (err error) {
		list, err = t.cfg.Incidents.Incidents(ctx, f)
		return err
	})
	if err != nil {
		return failed(err, ""), nil, nil
	}
	if list == nil {
		list = []incidents.Incident{}
	}
	var b strings.Builder
	if err := incidents.WriteText(&b, list); err != nil {
		return nil, nil, err
	}
	return text(b.String()), api.IncidentList{Incidents: list, From: f.From, To: f.To}, nil
}

// GroupsArgs are the groups tool's arguments.
type GroupsArgs struct {
	Agent   string `json:"agent" jsonschema:"the agent whose error groups are listed"`
	NewOnly bool   `json:"new_only,omitempty" jsonschema:"only the groups new in the last hour of the window"`
	Version string `json:"version,omitempty" jsonschema:"only the groups seen with this agent version (source.version)"`
	Window
}

func (t *tools) groups(ctx context.Context, _ *mcp.CallToolRequest, in GroupsArgs) (*mcp.CallToolResult, any, error) {
	if msg := checkID("agent", in.Agent, true); msg != "" {
		return toolError(msg), nil, nil
	}
	if msg := checkID("version", in.Version, false); msg != "" {
		return toolError(msg), nil, nil
	}
	f := groups.Filter{Agent: in.Agent, NewOnly: in.NewOnly, Version: in.Version}
	var msg string
	if f.From, f.To, msg = t.window(in.Window, api.DefaultGroupRange, api.MaxGroupRange); msg != "" {
		return toolError(msg), nil, nil
	}
	f.Now = t.cfg.Now().UTC()
	if f.To.Before(f.Now) {
		f.Now = f.To
	}
	var list []groups.Group
	err := t.ask(ctx, func(ctx context.Context) (err error) {
		list, err = t.cfg.Groups.Groups(ctx, f)
		return err
	})
	if err != nil {
		return failed(err, ""), nil, nil
	}
	if list == nil {
		list = []groups.Group{}
	}
	var b strings.Builder
	if err := groups.WriteText(&b, list); err != nil {
		return nil, nil, err
	}
	return text(b.String()), api.GroupList{Agent: in.Agent, Groups: list, From: f.From, To: f.To}, nil
}

// window reads a Window: to defaults to now, from to def before to (or
// since before to). The range must not be empty, longer than max, nor
// outside what ClickHouse's DateTime holds.
func (t *tools) window(w Window, def, max time.Duration) (from, to time.Time, msg string) {
	days := int(max / (24 * time.Hour))
	parse := func(name, v string) (time.Time, string) {
		if v == "" {
			return time.Time{}, ""
		}
		tt, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || tt.Before(lookup.MinListTime) || tt.After(lookup.MaxListTime) {
			return time.Time{}, name + " must be an RFC 3339 time between 1970 and 2106, e.g. 2026-12-01T00:00:00Z"
		}
		return tt.UTC(), ""
	}
	if from, msg = parse("from", w.From); msg != "" {
		return
	}
	if to, msg = parse("to", w.To); msg != "" {
		return
	}
	if to.IsZero() {
		to = t.cfg.Now().UTC()
	}
	if w.Since != "" {
		d, err := time.ParseDuration(w.Since)
		if err != nil || d <= 0 || d > max {
			return from, to, fmt.Sprintf("since must be a positive duration of at most %d days (%dh), such as 90m, 24h or 168h", days, days*24)
		}
		if from.IsZero() {
			from = to.Add(-d)
		}
	}
	if from.IsZero() {
		from = to.Add(-def)
	}
	switch {
	case !from.Before(to):
		return from, to, "from must be before to"
	case to.Sub(from) > max:
		return from, to, fmt.Sprintf("the window is longer than %d days: narrow from and to, or give a shorter since", days)
	case from.Before(lookup.MinListTime):
		return from, to, "the window starts before 1970: give a later from"
	}
	return from, to, ""
}

// checkID checks an id-like argument: printable UTF-8 of at most
// lookup.MaxIDLen bytes, and present when required. The message never
// quotes the value.
func checkID(name, v string, required bool) string {
	switch {
	case v == "" && required:
		return name + " is required: pass the id exactly as the customer or agent team quotes it"
	case len(v) > lookup.MaxIDLen:
		return fmt.Sprintf("%s is %d bytes, longer than any id errtrail stores (at most %d): pass the id alone, without surrounding text", name, len(v), lookup.MaxIDLen)
	case !api.TextValue(v, lookup.MaxIDLen):
		return name + " holds control characters or invalid UTF-8: pass the id alone, as printable text"
	}
	return ""
}
