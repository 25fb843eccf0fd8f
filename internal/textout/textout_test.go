package textout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/tracelink"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

func story() *lookup.Story {
	d := int64(12000)
	waited := int64(3100)
	at := time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC)
	return &lookup.Story{
		MatchedAs: "error_id",
		Group:     "0123456789abcdef",
		Record: lookup.Row{EventID: "ev-1", ObservedAt: at, Agent: "research-agent", Caller: "orch\x1b[2J-7",
			Protocol: "a2a", Binding: "http", Kind: "quota", ErrorID: "err_1", Findings: []string{"retry_after_header_missing"}, SourceVersion: "1.4.2"},
		Meaning: lookup.Meaning{Headline: "Quota: caller went over its limit.", Details: []string{"The alerter found no overload of research-agent at that moment."}, Advice: "Wait 12 s."},
		Attempts: lookup.Attempts{Key: "message_id", Attempts: []lookup.Attempt{
			{EventID: "ev-0", Attempt: 1, ObservedAt: at.Add(-3100 * time.Millisecond), Kind: "quota", AskedDelayMS: &d, Next: "error"},
			{EventID: "ev-1", Attempt: 2, ObservedAt: at, Kind: "quota", AskedDelayMS: &d, WaitedMS: &waited, Next: "none_seen", This: true, Violations: []string{"retried_too_soon"}},
		}, Violations: []string{"retried_too_soon"}},
		Context: lookup.Context{From: at.Add(-7 * time.Minute), To: at.Add(8 * time.Minute), VerdictAt: at,
			Minutes: []lookup.Minute{{Minute: at.Truncate(time.Minute), ByKind: map[string]int64{"quota": 4}}}},
		Findings: []lookup.Finding{{Code: "retry_after_header_missing", Checks: "Seed 000: an HTTP 429 MUST include Retry-After", Change: "Send Retry-After."}},
	}
}

// TestStoryText: every section is printed, aligned, the attempt the story
// is about is marked, and nothing reaches the terminal as a control byte
// (a stored value holding an escape sequence is neutralised).
func TestStoryText(t *testing.T) {
	var b bytes.Buffer
	if err := (Printer{W: &b}).Story(story()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"QUOTA", "Quota: caller went over its limit.", "What the caller should do: Wait 12 s.",
		"RECORD", "ATTEMPTS (same message_id)", "retried_too_soon", "3.1s", "12s", "CONTEXT", "FINDINGS",
		"checks: Seed 000", "change: Send Retry-After.", "  >  2", "retry storm not checked",
		"Error group 0123456789abcdef: errtrail groups research-agent", "source_version  1.4.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("an escape byte reached the output:\n%q", out)
	}
	if !strings.Contains(out, "orch?[2J-7") {
		t.Error("the control byte of the caller was not replaced by '?'")
	}
}

// TestStoryTextWindowStillOpen: a story told while its window was open
// says when the window ended, to the second, and marks the current minute
// as counted so far; a whole window marks none.
func TestStoryTextWindowStillOpen(t *testing.T) {
	var whole bytes.Buffer
	s := story()
	s.Context.To = s.Context.From.Truncate(time.Minute).Add(15 * time.Minute)
	if err := (Printer{W: &whole}).Story(s); err != nil {
		t.Fatal(err)
	}
	if out := whole.String(); strings.Contains(out, "so far") || !strings.Contains(out, "11:53 to 12:08 UTC") {
		t.Errorf("a whole window:\n%s", out)
	}
	var open bytes.Buffer
	s.Context.To = s.Record.ObservedAt.Add(25 * time.Second) // 12:00:30
	if err := (Printer{W: &open}).Story(s); err != nil {
		t.Fatal(err)
	}
	out := open.String()
	if !strings.Contains(out, "11:53 to 12:00:30 UTC") || !strings.Contains(out, "12:00 so far") || strings.Count(out, "so far") != 1 {
		t.Errorf("an open window: want its end to the second and the current minute marked once:\n%s", out)
	}
}

func TestColorOnlyWhenAsked(t *testing.T) {
	var plain, color bytes.Buffer
	(Printer{W: &plain}).Story(story())
	(Printer{W: &color, Color: true}).Story(story())
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("colour without Color")
	}
	if !strings.Contains(color.String(), "\x1b[1mRECORD\x1b[0m") || !strings.Contains(color.String(), "\x1b[31mretried_too_soon") {
		t.Error("Color did not emphasise headings and broken rules")
	}
}

func TestMatchesAndReport(t *testing.T) {
	var b bytes.Buffer
	ms := []lookup.Match{{EventID: "ev-1", Agent: "a", Kind: "quota", MatchedAs: "task_id"}, {EventID: "ev-2", Agent: "a", Kind: "quota", MatchedAs: "task_id"}}
	(Printer{W: &b}).Matches(ms, 5, 0)
	if out := b.String(); !strings.Contains(out, "5 stored error replies") || !strings.Contains(out, "ev-2") || !strings.Contains(out, "and 3 more") {
		t.Errorf("matches:\n%s", out)
	}
	b.Reset()
	(Printer{W: &b}).Report(&report.Report{Agent: "legacy-agent", Replies: 10,
		Rules: []report.Rule{{Code: "untyped_5xx", Title: "Bare 5xx", Replies: 4, Share: 0.4, ExampleEventID: "ev-9", Change: "Send a typed reason.",
			ExampleAgent: "legacy-agent", ExampleGroup: "0123456789abcdef"}},
		Clean: []string{"retry_delay_zero"}})
	out := b.String()
	for _, want := range []string{"Conformance of agent legacy-agent", "10 error replies", "untyped_5xx  Bare 5xx", "4 replies (40.0%)", "ev-9", "error group 0123456789abcdef", "change: Send a typed reason.", "Never broken: retry_delay_zero"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No reply broke") {
		t.Error("a report with a broken rule says none was broken")
	}
}

// errWriter keeps the first error: a closed pipe is reported, not ignored.
func TestWriteErrorReported(t *testing.T) {
	if err := (Printer{W: failing{}}).Story(story()); err == nil {
		t.Error("a failing writer gave no error")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errClosed }

var errClosed = &closedErr{}

type closedErr struct{}

func (*closedErr) Error() string { return "closed" }

// TestStoryTextObservers: the story names every observer of the reply, marks
// the record's copy, and prints each field a copy saw differently with both
// values; the summary follows.
func TestStoryTextObservers(t *testing.T) {
	s := story()
	at := s.Record.ObservedAt
	s.Observers = lookup.Observers{Joined: true, Summary: "Seen by 2 observers: the agent (host-a) and a gateway (edge-1).", Copies: []lookup.Copy{
		{EventID: "ev-1", SourceKind: "agent", SourceID: "host-a", ObservedAt: at, This: true},
		{EventID: "gw-1", SourceKind: "gateway", SourceID: "edge-1", ObservedAt: at.Add(3 * time.Millisecond),
			Differs: []lookup.Difference{{Field: "http_status", Record: "429", Copy: "502"}, {Field: "code", Record: "RATE_LIMITED"}}},
	}}
	var b bytes.Buffer
	if err := (Printer{W: &b}).Story(s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"SEEN BY", "agent", "host-a", "this record", "gateway", "edge-1", "gw-1", "a different reply (2 fields)",
		"gateway differs on http_status: 502 here, 429 in this record", "gateway differs on code: none here, RATE_LIMITED in this record",
		"Seen by 2 observers"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	s.Observers.Copies[1].Differs = nil
	b.Reset()
	(Printer{W: &b}).Story(s)
	if out := b.String(); !strings.Contains(out, "the same reply") || strings.Contains(out, "differs on") {
		t.Errorf("an equal copy:\n%s", out)
	}
}

// TestMatchesObservers: several distinct replies list each row with its
// observer and the reply it is a copy of, and the heading counts replies
// and rows apart.
func TestMatchesObservers(t *testing.T) {
	var b bytes.Buffer
	ms := []lookup.Match{
		{EventID: "a-2", SourceKind: "agent", SourceID: "host-a", Reply: 1, Agent: "a", Kind: "quota", MatchedAs: "message_id"},
		{EventID: "c-2", SourceKind: "client", SourceID: "laptop", Reply: 1, Agent: "a", Kind: "quota", MatchedAs: "message_id"},
		{EventID: "a-1", SourceKind: "agent", SourceID: "host-a", Reply: 2, Agent: "a", Kind: "quota", MatchedAs: "message_id"},
	}
	(Printer{W: &b}).Matches(ms, 3, 2)
	out := b.String()
	for _, want := range []string{"2 distinct error replies", "3 stored records", "observer", "agent (host-a)", "client (laptop)", "reply"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(strings.TrimSpace(lines[2]), "1 ") || !strings.HasPrefix(strings.TrimSpace(lines[4]), "2 ") {
		t.Errorf("rows not numbered by reply:\n%s", out)
	}
}

// TestReportSaysWhatWasCounted: a report says which observer's copies it
// counted and how many copies of other observers it left out, for one
// agent and per agent; with none left out it says so.
func TestReportSaysWhatWasCounted(t *testing.T) {
	var b bytes.Buffer
	(Printer{W: &b}).Report(&report.Report{Agent: "research-agent", Replies: 14, Source: "agent", OtherObservations: 14})
	if out := b.String(); !strings.Contains(out, "14 error replies, counted as the agent published them; 14 copies of the same replies published by other observers are left out") {
		t.Errorf("one agent:\n%s", out)
	}
	b.Reset()
	(Printer{W: &b}).Report(&report.Report{Replies: 3, Source: "mixed", OtherObservations: 0,
		Agents: []report.AgentSummary{{Agent: "a1", Replies: 2, Source: "agent"}, {Agent: "a2", Replies: 1, Source: "client", OtherObservations: 0}}})
	out := b.String()
	for _, want := range []string{"3 error replies, counted from each agent's best observer", "no other observer published copies", "counted from", "client"} {
		if !strings.Contains(out, want) {
			t.Errorf("every agent lacks %q:\n%s", want, out)
		}
	}
}

// TestStoryTextTrace: the record's trace fields are printed, and the trace
// link only with a template and a well-formed trace id.
func TestStoryTextTrace(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	s := story()
	s.Record.TraceID, s.Record.SpanID, s.Record.Origin, s.Record.Inferred = tid, sid, "otlp", []string{"jsonrpc_code", "method"}
	tp, err := tracelink.Parse("links.trace-url", "https://tempo.example/trace/{trace_id}")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (Printer{W: &b, Trace: tp}).Story(s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{"trace_id " + tid, "span_id " + sid, "origin otlp", "inferred jsonrpc_code, method", "trace https://tempo.example/trace/" + tid} {
		if !lines[want] {
			t.Errorf("lacks the line %q:\n%s", want, out)
		}
	}
	b.Reset()
	_ = (Printer{W: &b}).Story(s)
	if strings.Contains(b.String(), "tempo.example") || !strings.Contains(b.String(), tid) {
		t.Errorf("without a template: the id and no link:\n%s", b.String())
	}
	b.Reset()
	s.Record.TraceID = "not-a-trace-id"
	_ = (Printer{W: &b, Trace: tp}).Story(s)
	if strings.Contains(b.String(), "tempo.example") {
		t.Errorf("a malformed trace id got a link:\n%s", b.String())
	}
}
