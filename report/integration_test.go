package report

// These tests run the report on a real ClickHouse (internal/testenv: skipped
// outside CI, failed in CI when it is missing), each in a fresh database
// with the production schema. Rows go in the way production writes them:
// real replies (the seeds under parse/testdata/seeds, some with one header
// or detail removed) decoded by parse, turned into landing columns as
// ingest's column builder does, inserted as one landing batch with
// schema.LandingInsert so the materialized views fill errors.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

var dbSeq atomic.Int64

// openDB returns a connection and a migrated fresh database, dropped when
// the test ends.
func openDB(t *testing.T) (driver.Conn, schema.Options) {
	t.Helper()
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), DialTimeout: testenv.CHDialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	opts := schema.Options{Database: fmt.Sprintf("errtrail_report_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, dbSeq.Add(1))}
	t.Cleanup(func() {
		if err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database); err != nil {
			t.Errorf("drop %s: %v", opts.Database, err)
		}
		conn.Close()
	})
	if _, err := schema.Migrate(context.Background(), conn, opts); err != nil {
		t.Fatal(err)
	}
	return conn, opts
}

// reply is a real reply, by the edit made to a seed.
type reply struct {
	name     string
	findings []string // what parse says about it (checked when it is decoded)
	raw      func(n int) []byte
}

func seed(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile("../parse/testdata/seeds/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var contentLength = regexp.MustCompile(`(?m)^Content-Length: \d+`)

// httpReply rebuilds a raw HTTP/1.1 response after edits, fixing
// Content-Length.
func httpReply(s string) []byte {
	sep := "\n\n"
	if strings.Contains(s, "\r\n\r\n") {
		sep = "\r\n\r\n"
	}
	head, body, _ := strings.Cut(s, sep)
	head = contentLength.ReplaceAllString(head, "Content-Length: "+strconv.Itoa(len(body)))
	return []byte(head + sep + body)
}

func replies(t *testing.T) map[string]reply {
	rest429 := seed(t, "seed002-rest-429.http")
	var noRetryAfter []string
	for _, l := range strings.SplitAfter(rest429, "\n") {
		if !strings.HasPrefix(l, "Retry-After:") && !strings.HasPrefix(l, "RateLimit") {
			noRetryAfter = append(noRetryAfter, l)
		}
	}
	aap := seed(t, "seed000-a2a-rate-limited.http")
	notFound := seed(t, "seed003-rest-task-not-found.http")
	bare500 := seed(t, "seed002-bare-500.http")
	fixed := func(s string) func(int) []byte { return func(int) []byte { return httpReply(s) } }
	return map[string]reply{
		// Seed 002's REST 429, complete: RetryInfo and Retry-After.
		"clean-429": {"clean-429", nil, fixed(rest429)},
		// Seed 003's task not found: clean.
		"clean-404": {"clean-404", nil, fixed(notFound)},
		// The same 429 without Retry-After and RateLimit headers: the body's
		// RetryInfo still gives the delay, only the header is missing.
		"429-no-retry-after": {"429-no-retry-after", []string{"retry_after_header_missing"}, fixed(strings.Join(noRetryAfter, ""))},
		// Seed 002's bare 500.
		"bare-500": {"bare-500", []string{"untyped_5xx"}, fixed(bare500)},
		// Seed 000's AAP RATE_LIMITED without details.retry_after_ms, each
		// with its own error_id.
		"aap-no-retry-ms": {"aap-no-retry-ms", []string{"retry_delay_missing", "aap_retry_after_ms_missing"}, func(n int) []byte {
			s := strings.ReplaceAll(aap, `,"details":{"retry_after_ms":30000}`, "")
			return httpReply(strings.ReplaceAll(s, "err_01HZ9RATE01", fmt.Sprintf("err_01HZ9RATE%03d", n)))
		}},
		// What a gateway stores after it stripped the body and rewrote the
		// status: seed 002, "Gateways sometimes strip bodies or rewrite 429 to 502".
		"gw-502": {"gw-502", []string{"body_missing", "untyped_5xx"}, fixed("HTTP/1.1 502 Bad Gateway\nContent-Length: 0\n\n")},
	}
}

// stored is one reply as the test wrote it, to check examples against.
type stored struct {
	agent, source, eventID, errorID string
	at                              time.Time
	findings                        []string
	group                           string // its error group's id
}

// fixture decodes and inserts replies.
type fixture struct {
	t       *testing.T
	conn    driver.Conn
	opts    schema.Options
	dec     *parse.Decoder
	replies map[string]reply
	offset  int64
	rows    [][]any
	stored  []stored
}

func newFixture(t *testing.T) *fixture {
	conn, opts := openDB(t)
	return &fixture{t: t, conn: conn, opts: opts, dec: parse.NewDecoder(parse.Options{}), replies: replies(t)}
}

// add decodes n copies of reply kind as source saw them for agent at at,
// and queues them for the next flush. It returns their event ids.
func (f *fixture) add(agent, source, kind string, n int, at time.Time) []string {
	f.t.Helper()
	rp, ok := f.replies[kind]
	if !ok {
		f.t.Fatalf("no reply %q", kind)
	}
	var ids []string
	for i := 0; i < n; i++ {
		f.offset++
		id := fmt.Sprintf("%s-%s-%s-%d", agent, source, kind, f.offset)
		hs := []parse.MsgHeader{
			{Key: "errtrail-v", Value: []byte("1")},
			{Key: "errtrail-event-id", Value: []byte(id)},
			{Key: "errtrail-observed-at", Value: []byte(strconv.FormatInt(at.UnixMilli(), 10))},
			{Key: "errtrail-source-kind", Value: []byte(source)},
			{Key: "errtrail-agent", Value: []byte(agent)},
			{Key: "errtrail-caller", Value: []byte("orchestrator-7")},
			{Key: "errtrail-method", Value: []byte("SendMessage")},
		}
		var rec parse.Record
		if err := f.dec.DecodeMessage(rp.raw(int(f.offset)), hs, at.UnixMilli(), &rec); err != nil {
			f.t.Fatalf("decode %s: %v", kind, err)
		}
		got := make([]string, len(rec.Findings))
		for j, x := range rec.Findings {
			got[j] = string(x)
		}
		if !slices.Equal(got, rp.findings) && !(len(got) == 0 && len(rp.findings) == 0) {
			f.t.Fatalf("reply %s decodes with findings %v; the test expects %v", kind, got, rp.findings)
		}
		f.rows = append(f.rows, landingRow(f.t, rec.Clone(), "replies", f.offset))
		group := groups.KeyOf(rec.Agent, string(rec.Protocol), rec.Code, rec.Reason, string(rec.Kind), rec.Method).ID()
		f.stored = append(f.stored, stored{agent, source, rec.EventID, rec.ErrorID, at, got, group})
		ids = append(ids, rec.EventID)
	}
	return ids
}

// flush inserts the queued rows as one landing batch.
func (f *fixture) flush() {
	f.t.Helper()
	ctx := context.Background()
	b, err := f.conn.PrepareBatch(ctx, schema.LandingInsert(f.opts))
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range f.rows {
		if err := b.Append(r...); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		f.t.Fatal(err)
	}
	f.rows = f.rows[:0]
}

// landingRow is one decoded record as landing columns, the way ingest's
// column builder (ingest/columns.go appendRow, unexported) fills them; the
// Go types are checked against schema.LandingColumns.
func landingRow(t *testing.T, rec *parse.Record, topic string, offset int64) []any {
	t.Helper()
	tri := map[parse.Tri]int8{parse.TriTrue: 1, parse.TriFalse: 0}
	retryable, ok := tri[rec.Retryable]
	if !ok {
		retryable = -1
	}
	ra := rec.RetryAfterMS
	if ra < 0 {
		ra = -1
	}
	var typed uint8
	if rec.Typed {
		typed = 1
	}
	fields, descs := []string{}, []string{}
	for _, v := range rec.FieldViolations {
		fields, descs = append(fields, v.Field), append(descs, v.Description)
	}
	findings := []string{}
	for _, x := range rec.Findings {
		findings = append(findings, string(x))
	}
	obs := time.UnixMilli(rec.ObservedAtMS)
	v := map[string]any{
		"dead": uint8(0), "event_id": rec.EventID, "observed_at": obs.Truncate(time.Second), "observed_at_ms": uint64(rec.ObservedAtMS),
		"ingested_at": time.Now().Truncate(time.Second), "kafka_topic": topic, "kafka_partition": int32(0), "kafka_offset": offset,
		"source_kind": rec.SourceKind, "source_id": rec.SourceID, "agent": rec.Agent, "endpoint": rec.Endpoint,
		"caller": rec.Caller, "method": rec.Method, "attempt": uint16(rec.Attempt), "http_request_id": rec.HTTPRequestID,
		"jsonrpc_id": rec.JSONRPCID, "message_id": rec.MessageID, "task_id": rec.TaskID, "idempotency_key_hash": rec.IdempotencyHash,
		"protocol": string(rec.Protocol), "binding": string(rec.Binding), "envelope": string(rec.Envelope),
		"http_status": uint16(rec.HTTPStatus), "grpc_status": rec.GRPCStatusName(), "jsonrpc_code": int32(rec.JSONRPCCode),
		"code": rec.Code, "reason": rec.Reason, "domain": rec.Domain, "kind": string(rec.Kind), "typed": typed,
		"retryable": retryable, "retryable_source": string(rec.RetryableSource), "retry_after_ms": ra,
		"retry_after_source": string(rec.RetryAfterSource), "limit_name": rec.Limit, "scope": rec.Scope,
		"error_id": rec.ErrorID, "request_id": rec.RequestID, "message": rec.Message,
		"violation_fields": fields, "violation_descriptions": descs, "findings": findings,
		"dl_reason": "", "dl_error": "", "raw": "", "source_version": "",
		"trace_id": rec.TraceID, "span_id": rec.SpanID, "origin": string(rec.Origin), "inferred": []string{}, "kafka_index": uint32(0),
	}
	row := make([]any, len(schema.LandingColumns))
	for i, c := range schema.LandingColumns {
		x, ok := v[c.Name]
		if !ok {
			t.Fatalf("landingRow does not fill column %s", c.Name)
		}
		if reflect.TypeOf(x) != c.Go {
			t.Fatalf("column %s: Go type %T; schema.LandingColumns says %s", c.Name, x, c.Go)
		}
		row[i] = x
	}
	return row
}

// scenario is the shared data set: alpha reports its own replies and sits
// behind a gateway that also reports them (rewritten); beta sends bare 500s;
// gamma is seen only by a gateway. Rows fall just inside and just outside
// the range [from, to), whose ends are not on the hour: the report reads the
// whole hours in between from findings_1h and the ends from errors.
type scenario struct {
	*fixture
	from, to time.Time
}

func newScenario(t *testing.T) *scenario {
	f := newFixture(t)
	to := time.Now().Truncate(time.Hour).Add(-time.Hour + 17*time.Minute).UTC()
	from := to.Add(-6 * time.Hour)
	s := &scenario{fixture: f, from: from, to: to}
	mid := from.Add(3 * time.Hour)

	// alpha, as the agent saw it: 14 replies in the range, in two batches.
	f.add("alpha", "agent", "429-no-retry-after", 2, mid)
	f.add("alpha", "agent", "bare-500", 3, mid.Add(time.Minute))
	f.flush()
	f.add("alpha", "agent", "429-no-retry-after", 2, mid.Add(2*time.Minute))
	f.add("alpha", "agent", "aap-no-retry-ms", 2, mid.Add(2*time.Minute))
	f.add("alpha", "agent", "clean-429", 3, from) // the lower bound is inside
	f.add("alpha", "agent", "clean-404", 2, to.Add(-time.Second))
	// alpha outside the range: before from, and at to (excluded).
	f.add("alpha", "agent", "bare-500", 5, from.Add(-time.Second))
	f.add("alpha", "agent", "aap-no-retry-ms", 4, to)
	// The gateway in front of alpha reports 3 of the same requests after
	// rewriting them: they must not count for alpha.
	f.add("alpha", "gateway", "gw-502", 3, mid)

	// beta: 6 bare 500s and 2 clean replies.
	f.add("beta", "agent", "bare-500", 6, mid)
	f.add("beta", "agent", "clean-404", 2, mid)
	// gamma: only its gateway reports it.
	f.add("gamma", "gateway", "gw-502", 2, mid)
	f.add("gamma", "gateway", "clean-429", 1, mid)
	f.flush()
	// Merge the rollup's parts, so the examples are the ones merges keep.
	if err := f.conn.Exec(context.Background(), "OPTIMIZE TABLE "+f.opts.Database+"."+schema.TableFindings1h+" FINAL"); err != nil {
		t.Fatal(err)
	}
	return s
}

// paths are the two ways a report is read: whole hours from findings_1h
// (the rollup holds everything the tests insert), or everything from errors
// (as before migration 006 was applied).
var paths = []struct {
	name  string
	since time.Time
}{
	{"rollup", time.Unix(1, 0)},
	{"errors", time.Unix(1<<32-1, 0)},
}

// report runs the report on both paths, checks that they count the same,
// and returns the rollup path's report.
func (s *scenario) report(t *testing.T, agent string) *Report {
	t.Helper()
	return s.reportRange(t, agent, s.from, s.to)
}

func (s *scenario) reportRange(t *testing.T, agent string, from, to time.Time) *Report {
	t.Helper()
	var out []*Report
	for _, p := range paths {
		r, err := (&ClickHouse{Conn: s.conn, Database: s.opts.Database, RollupSince: p.since}).Report(context.Background(), agent, from, to)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		out = append(out, r)
	}
	strip := func(r *Report) Report {
		c := *r
		c.Rules = slices.Clone(r.Rules)
		for i := range c.Rules {
			c.Rules[i].ExampleEventID, c.Rules[i].ExampleErrorID = "", ""
		}
		return c
	}
	if a, b := strip(out[0]), strip(out[1]); !reflect.DeepEqual(a, b) {
		t.Errorf("report of %q: the rollup and errors paths differ:\nrollup %+v\nerrors %+v", agent, a, b)
	}
	for i, r := range out {
		checkOverSums(t, paths[i].name, r)
	}
	for _, r := range out[1].Rules {
		// The errors path's examples are checked as well.
		s.checkExample(t, out[1], r, exampleAgents(out[1], r.Code)...)
	}
	for _, r := range out[0].Rules {
		s.checkExample(t, out[0], r, exampleAgents(out[0], r.Code)...)
	}
	return out[0]
}

// exampleAgents are the agents that may give a rule's example.
func exampleAgents(r *Report, code string) []string {
	if r.Agent != "" {
		return []string{r.Agent}
	}
	var out []string
	for _, a := range r.Agents {
		out = append(out, a.Agent)
	}
	return out
}

// checkExample asserts that a rule's example is a real stored reply that
// breaks the rule, in the range, of an agent the report covers, seen by the
// observer the report counts for that agent.
func (s *scenario) checkExample(t *testing.T, rep *Report, r Rule, agents ...string) {
	t.Helper()
	for _, st := range s.stored {
		if st.eventID != r.ExampleEventID {
			continue
		}
		source := rep.Source
		for _, a := range rep.Agents {
			if a.Agent == st.agent {
				source = a.Source
			}
		}
		switch {
		case !slices.Contains(agents, st.agent):
			t.Errorf("rule %s: example %s belongs to agent %s, not %v", r.Code, st.eventID, st.agent, agents)
		case st.source != source:
			t.Errorf("rule %s: example %s was seen by %s, not by the counted %s", r.Code, st.eventID, st.source, source)
		case st.at.Before(rep.From) || !st.at.Before(rep.To):
			t.Errorf("rule %s: example %s at %s is outside [%s, %s)", r.Code, st.eventID, st.at, rep.From, rep.To)
		case !slices.Contains(st.findings, r.Code):
			t.Errorf("rule %s: example %s does not break it (findings %v)", r.Code, st.eventID, st.findings)
		case st.errorID != r.ExampleErrorID:
			t.Errorf("rule %s: example error_id %q; the reply %s has %q", r.Code, r.ExampleErrorID, st.eventID, st.errorID)
		case r.ExampleAgent != st.agent || r.ExampleGroup != st.group:
			t.Errorf("rule %s: example of agent %q in group %q; the reply %s is %s's, in group %s", r.Code, r.ExampleAgent, r.ExampleGroup, st.eventID, st.agent, st.group)
		}
		return
	}
	t.Errorf("rule %s: example event_id %q is not a stored reply", r.Code, r.ExampleEventID)
}

func ruleMap(r *Report) map[string]Rule {
	m := map[string]Rule{}
	for _, x := range r.Rules {
		m[x.Code] = x
	}
	return m
}

func TestReportOneAgent(t *testing.T) {
	s := newScenario(t)
	r := s.report(t, "alpha")

	if r.Agent != "alpha" || !r.From.Equal(s.from) || !r.To.Equal(s.to) {
		t.Errorf("report of %q over [%s, %s); want alpha over [%s, %s)", r.Agent, r.From, r.To, s.from, s.to)
	}
	// 4 + 3 + 2 + 3 + 2 replies seen by alpha itself; the replayed copies,
	// the rows outside the range, the gateway's copies and beta's rows are not.
	if r.Replies != 14 || r.Source != "agent" || r.OtherObservations != 3 {
		t.Errorf("replies %d source %q other %d; want 14 agent 3", r.Replies, r.Source, r.OtherObservations)
	}
	if r.Agents != nil {
		t.Errorf("one agent's report lists agents: %+v", r.Agents)
	}
	// Over the 7 hours the range touches: the 3 clean 429s at from, the 9
	// replies at mid, the 2 clean 404s just before to; the gateway's 3
	// copies and the rows outside the range in no hour.
	if o := r.Over; o == nil || o.Step != "hour" || len(o.Starts) != 7 || !o.Starts[0].Equal(s.from.Truncate(time.Hour)) {
		t.Fatalf("over %+v; want the 7 hours from %s", o, s.from.Truncate(time.Hour))
	}
	if got := fmt.Sprint(r.Over.Replies); got != "[3 0 0 9 0 0 2]" {
		t.Errorf("replies per hour %s; want [3 0 0 9 0 0 2]", got)
	}
	if ro := r.Over.Rules[0]; ro.Code != "retry_after_header_missing" || fmt.Sprint(ro.Replies) != "[0 0 0 4 0 0 0]" {
		t.Errorf("the first rule per hour: %s %v; want retry_after_header_missing [0 0 0 4 0 0 0]", ro.Code, ro.Replies)
	}
	want := []struct {
		code string
		n    int64
	}{
		{"retry_after_header_missing", 4},
		{"untyped_5xx", 3},
		{"retry_delay_missing", 2}, // ties broken in parse.AllFindings order
		{"aap_retry_after_ms_missing", 2},
	}
	if len(r.Rules) != len(want) {
		t.Fatalf("rules %+v; want %v", r.Rules, want)
	}
	for i, w := range want {
		got := r.Rules[i]
		if got.Code != w.code || got.Replies != w.n || got.Share != float64(w.n)/14 {
			t.Errorf("rule %d: %s %d share %v; want %s %d share %v", i, got.Code, got.Replies, got.Share, w.code, w.n, float64(w.n)/14)
		}
		if g, ok := lookup.GuideFor(got.Code); ok {
			if got.Title != g.Title || got.Checks != g.Checks || got.Change != g.Change {
				t.Errorf("rule %s does not carry its guide: %+v", got.Code, got)
			}
		} else if got.Title != got.Code {
			t.Errorf("rule %s without a guide has title %q; want the code", got.Code, got.Title)
		}
	}
	rules := ruleMap(r)
	// The AAP example must be one with an error_id, and that id is the
	// one parse read from the reply's ErrorInfo.
	if ex := rules["aap_retry_after_ms_missing"].ExampleErrorID; !strings.HasPrefix(ex, "err_01HZ9RATE") {
		t.Errorf("aap_retry_after_ms_missing example error_id %q; want one of the replies' err_01HZ9RATE…", ex)
	}
	if ex := rules["untyped_5xx"].ExampleErrorID; ex != "" {
		t.Errorf("bare 500s carry no error_id, got %q", ex)
	}
	// body_missing is only in the gateway's rewritten copies.
	if _, ok := rules["body_missing"]; ok {
		t.Error("the gateway's body_missing is counted against alpha")
	}
	var clean []string
	for _, f := range parse.AllFindings {
		if _, broken := rules[string(f)]; !broken {
			clean = append(clean, string(f))
		}
	}
	if !slices.Equal(r.Clean, clean) || !slices.Contains(r.Clean, "body_missing") || len(r.Clean)+len(r.Rules) != len(parse.AllFindings) {
		t.Errorf("clean %v; want %v", r.Clean, clean)
	}

	// beta's report does not see alpha's rows, and the other way round.
	b := s.report(t, "beta")
	if b.Replies != 8 || len(b.Rules) != 1 || b.Rules[0].Code != "untyped_5xx" || b.Rules[0].Replies != 6 || b.Rules[0].Share != 0.75 {
		t.Errorf("beta: %d replies, rules %+v; want 8, untyped_5xx 6 (0.75)", b.Replies, b.Rules)
	}
	if b.Rules[0].ExampleEventID == "" || !strings.HasPrefix(b.Rules[0].ExampleEventID, "beta-") {
		t.Errorf("beta's example %q is not beta's", b.Rules[0].ExampleEventID)
	}

	// A known agent with nothing in the range: zero replies, every rule clean.
	none := s.reportRange(t, "beta", s.from.Add(-48*time.Hour), s.from.Add(-47*time.Hour))
	if none.Replies != 0 || len(none.Rules) != 0 || len(none.Clean) != len(parse.AllFindings) || none.Source != "" {
		t.Errorf("a known agent's empty range: %+v", none)
	}
	// An agent errtrail holds no row of: ErrUnknownAgent, on either path,
	// and the all-agents report still answers.
	for _, p := range paths {
		c := &ClickHouse{Conn: s.conn, Database: s.opts.Database, RollupSince: p.since}
		if r, err := c.Report(context.Background(), "delta", s.from, s.to); !errors.Is(err, ErrUnknownAgent) || r != nil {
			t.Errorf("%s: unknown agent: %+v, %v; want ErrUnknownAgent", p.name, r, err)
		}
		if _, err := c.Report(context.Background(), "", s.from.Add(-48*time.Hour), s.from.Add(-47*time.Hour)); err != nil {
			t.Errorf("%s: every agent over an empty range: %v", p.name, err)
		}
	}
}

func TestReportTimeRange(t *testing.T) {
	s := newScenario(t)
	// The 5 bare 500s one second before from, and the 4 AAP replies at to.
	before := s.reportRange(t, "alpha", s.from.Add(-time.Second), s.from)
	if before.Replies != 5 || len(before.Rules) != 1 || before.Rules[0].Code != "untyped_5xx" || before.Rules[0].Share != 1 {
		t.Errorf("the second before from: %+v; want the 5 bare 500s only", before)
	}
	// Sub-second bounds widen to whole seconds: [to-0.5s, to+0.5s) reads [to-1s, to+1s).
	at := s.reportRange(t, "alpha", s.to.Add(-500*time.Millisecond), s.to.Add(500*time.Millisecond))
	if !at.From.Equal(s.to.Add(-time.Second)) || !at.To.Equal(s.to.Add(time.Second)) {
		t.Errorf("bounds [%s, %s); want whole seconds around %s", at.From, at.To, s.to)
	}
	if at.Replies != 6 || ruleMap(at)["aap_retry_after_ms_missing"].Replies != 4 || ruleMap(at)["retry_after_header_missing"].Replies != 0 {
		t.Errorf("around to: %d replies, rules %+v; want 2 clean 404s + 4 AAP", at.Replies, at.Rules)
	}
}

func TestReportAllAgents(t *testing.T) {
	s := newScenario(t)
	all := s.report(t, "")
	if all.Agent != "" || all.Source != "mixed" {
		t.Errorf("agent %q source %q; want \"\" and mixed", all.Agent, all.Source)
	}
	// alpha 14 (agent), beta 8 (agent), gamma 3 (gateway: nothing better).
	if all.Replies != 25 || all.OtherObservations != 3 {
		t.Errorf("replies %d other %d; want 25 and 3 (alpha's gateway copies)", all.Replies, all.OtherObservations)
	}
	wantAgents := []AgentSummary{
		{Agent: "alpha", Replies: 14, Breaking: 9, Rules: 4, Source: "agent", OtherObservations: 3},
		{Agent: "beta", Replies: 8, Breaking: 6, Rules: 1, Source: "agent"},
		{Agent: "gamma", Replies: 3, Breaking: 2, Rules: 2, Source: "gateway"},
	}
	if !reflect.DeepEqual(all.Agents, wantAgents) {
		t.Errorf("agents:\n got %+v\nwant %+v", all.Agents, wantAgents)
	}
	rules := ruleMap(all)
	// untyped_5xx: alpha 3 + beta 6 + gamma 2; the example from beta, which breaks it most.
	if u := rules["untyped_5xx"]; u.Replies != 11 || u.Share != 11.0/25 || all.Rules[0].Code != "untyped_5xx" {
		t.Errorf("untyped_5xx %+v first %s; want 11 of 25, first", u, all.Rules[0].Code)
	}
	s.checkExample(t, all, rules["untyped_5xx"], "beta")
	// body_missing comes from gamma's gateway only (alpha's gateway rows are left out).
	if b := rules["body_missing"]; b.Replies != 2 {
		t.Errorf("body_missing %+v; want gamma's 2", b)
	}
	s.checkExample(t, all, rules["body_missing"], "gamma")
	// Every agent's own report adds up to the all-agents one.
	var sum int64
	perRule := map[string]int64{}
	for _, a := range []string{"alpha", "beta", "gamma"} {
		r := s.report(t, a)
		sum += r.Replies
		for _, x := range r.Rules {
			perRule[x.Code] += x.Replies
		}
	}
	if sum != all.Replies {
		t.Errorf("per-agent replies add up to %d; all-agents says %d", sum, all.Replies)
	}
	for code, n := range perRule {
		if rules[code].Replies != n {
			t.Errorf("rule %s: per-agent reports add up to %d; all-agents says %d", code, n, rules[code].Replies)
		}
	}
	if len(all.Clean)+len(all.Rules) != len(parse.AllFindings) {
		t.Errorf("clean %v and rules %d do not cover the %d findings", all.Clean, len(all.Rules), len(parse.AllFindings))
	}
}

// A producer re-sends an event after the ingester's dedup window: the copy
// is stored at a new Kafka offset. Hours read from errors count it once
// (uniqExact(event_id)); whole hours read from findings_1h count stored
// messages, like errors_1m, so there it counts twice. This is the limit the
// rollup buys its speed with (docs/schema.md, "Which queries must account
// for duplicates").
func TestReportResentEvent(t *testing.T) {
	f := newFixture(t)
	h := time.Now().Truncate(time.Hour).Add(-2 * time.Hour).UTC()
	f.add("alpha", "agent", "429-no-retry-after", 3, h.Add(10*time.Minute))
	f.flush()
	first := f.stored[0]
	var rec parse.Record
	hs := []parse.MsgHeader{
		{Key: "errtrail-event-id", Value: []byte(first.eventID)},
		{Key: "errtrail-observed-at", Value: []byte(strconv.FormatInt(first.at.UnixMilli(), 10))},
		{Key: "errtrail-source-kind", Value: []byte("agent")},
		{Key: "errtrail-agent", Value: []byte("alpha")},
	}
	if err := f.dec.DecodeMessage(f.replies["429-no-retry-after"].raw(0), hs, 0, &rec); err != nil {
		t.Fatal(err)
	}
	f.offset++
	f.rows = append(f.rows, landingRow(t, rec.Clone(), "replies", f.offset))
	f.flush()
	for _, c := range []struct {
		path  string
		since time.Time
		want  int64
	}{{"errors", time.Unix(1<<32-1, 0), 3}, {"rollup", time.Unix(1, 0), 4}} {
		r, err := (&ClickHouse{Conn: f.conn, Database: f.opts.Database, RollupSince: c.since}).Report(context.Background(), "alpha", h, h.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if r.Replies != c.want || len(r.Rules) != 1 || r.Rules[0].Replies != c.want || r.Rules[0].Share != 1 {
			t.Errorf("%s path: %d replies, rules %+v; want %d, all breaking retry_after_header_missing", c.path, r.Replies, r.Rules, c.want)
		}
	}
}

// Without RollupSince the report asks schema_migrations when findings_1h
// was created, and reads every earlier hour from errors: a range that ends
// before the migration gives the errors path's answer even though the rollup
// holds the same rows.
func TestReportRollupStartsAtMigration(t *testing.T) {
	// schema_migrations stores whole seconds (the server's clock: the same
	// machine's).
	before := time.Now().Truncate(time.Second)
	s := newScenario(t)
	c := &ClickHouse{Conn: s.conn, Database: s.opts.Database}
	got, err := c.Report(context.Background(), "alpha", s.from, s.to)
	if err != nil {
		t.Fatal(err)
	}
	if after := time.Now(); c.since.Before(before) || c.since.After(after) {
		t.Errorf("rollup start %s; want when this test migrated, between %s and %s", c.since, before, after)
	}
	want, err := (&ClickHouse{Conn: s.conn, Database: s.opts.Database, RollupSince: time.Unix(1<<32-1, 0)}).Report(context.Background(), "alpha", s.from, s.to)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("before the migration the report must read errors:\n got %+v\nwant %+v", got, want)
	}
	// A database without migration 006 (its row removed): everything from errors, no error.
	if err := s.conn.Exec(context.Background(), "ALTER TABLE "+s.opts.Database+".schema_migrations DELETE WHERE version = 6"); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // mutations are asynchronous
		var n uint64
		if err := s.conn.QueryRow(context.Background(), "SELECT count() FROM "+s.opts.Database+".schema_migrations WHERE version = 6").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if i == 100 {
			t.Fatal("the schema_migrations row of 006 is still there after 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fresh := &ClickHouse{Conn: s.conn, Database: s.opts.Database}
	if _, err := fresh.Report(context.Background(), "alpha", s.from, s.to); err != nil || !fresh.since.IsZero() {
		t.Errorf("without migration 006: since %s, err %v; want zero, nil", fresh.since, err)
	}
}

// checkOverSums: the report's steps add up to its totals, rule by rule.
func checkOverSums(t *testing.T, path string, r *Report) {
	t.Helper()
	if r.Over == nil {
		t.Errorf("%s: the report has no Over", path)
		return
	}
	sum := func(xs []int64) (n int64) {
		for _, x := range xs {
			n += x
		}
		return n
	}
	if n := sum(r.Over.Replies); n != r.Replies {
		t.Errorf("%s: the steps hold %d replies; the report counts %d", path, n, r.Replies)
	}
	if len(r.Over.Rules) != len(r.Rules) {
		t.Fatalf("%s: %d rules over time, %d in the report", path, len(r.Over.Rules), len(r.Rules))
	}
	for i, ro := range r.Over.Rules {
		if ro.Code != r.Rules[i].Code || sum(ro.Replies) != r.Rules[i].Replies {
			t.Errorf("%s: %s over time adds up to %d; the report's %s has %d", path, ro.Code, sum(ro.Replies), r.Rules[i].Code, r.Rules[i].Replies)
		}
	}
}
