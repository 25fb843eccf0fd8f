package web

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/lookup"
)

// storyPage is the story of one record, arranged for the template.
type storyPage struct {
	S        *lookup.Story
	Record   []field // every field of the record, in docs/record.md's order
	Attempts []lookup.Attempt
	Kinds    []string // the context table's columns
	Minutes  []minuteRow
	Totals   []int64 // per kind over the context
	Verdicts []verdict
	Chart    chart // the context's minutes, stacked by kind

	Report, API, Dashboard, Recent, Group string // links
	Trace                                 string // the trace in the operator's tracing system, "" without --links.trace-url or a trace id
}

func (p storyPage) PageTitle() string {
	if p.S.Meaning.Headline != "" {
		return p.S.Meaning.Headline
	}
	return "The story of an error reply"
}

// field is one row of the record's definition list.
type field struct {
	Name  string   // the record's JSON key
	Value string   // "" when List holds the value
	List  []string // several values (field violations, findings)
	Empty bool     // no value: printed as "none" or "unknown"
}

type minuteRow struct {
	Minute time.Time
	Counts []int64 // in Kinds' order
	This   bool    // the record's own minute
	SoFar  bool    // the minute had not ended when the story was told
}

// verdict is one of the alerter's verdicts with what it means for the
// person reading the story.
type verdict struct {
	Name, Meaning string
	Set           bool
	Reasons       []string // the alerter's reasons, when it gives them
}

func (h *handler) storyPage(s *lookup.Story) storyPage {
	rec := &s.Record
	p := storyPage{S: s, Record: recordFields(rec)}
	p.Attempts = s.Attempts.Attempts
	p.Kinds, p.Minutes, p.Totals = contextTable(s.Context, rec.ObservedAt)
	p.Chart = contextChart(p.Kinds, p.Minutes, rec.ObservedAt)
	c := s.Context
	p.Verdicts = []verdict{
		{Name: "Agent overloaded", Meaning: "The agent fails for every caller: an incident on the agent's side, whatever this caller does.", Set: c.AgentOverloaded},
		{Name: "Caller runaway", Meaning: "This caller sends far more calls than it usually does.", Set: c.CallerRunaway},
		{Name: "Limit too low", Meaning: "Callers that behave as usual hit this limit: the limit may be set too low for them.", Set: c.LimitTooLow},
		{Name: "Undecided", Meaning: "There is too little history to judge this caller yet.", Set: c.Undecided},
	}
	if c.RetryStormChecked {
		p.Verdicts = append(p.Verdicts[:3:3], append([]verdict{{Name: "Retry storm", Meaning: "This caller retries sooner than it was asked to, or retries with new ids.", Set: c.RetryStorm, Reasons: c.RetryStormReasons}}, p.Verdicts[3:]...)...)
	}
	l := h.links
	p.Report = ReportURL(l.base, rec.Agent, time.Time{}, time.Time{})
	p.API = l.api(rec.EventID)
	if s.Group != "" {
		p.Group = GroupsURL(l.base, rec.Agent, s.Group, false)
	}
	p.Dashboard = l.dashboard(rec.Agent, rec.Caller, c.From, c.To)
	p.Trace = h.cfg.TraceURL.URL(rec.TraceID, rec.SpanID)
	if rec.Caller != "" {
		from, to := rec.ObservedAt.Add(-DefaultListRange/2), rec.ObservedAt.Add(DefaultListRange/2)
		p.Recent = ListURL(l.base, lookup.ListQuery{Agent: rec.Agent, Caller: rec.Caller, From: from.Truncate(time.Minute), To: to.Truncate(time.Minute)})
	}
	return p
}

// recordFields lists every field of the record; a test checks that none is
// missing.
func recordFields(r *lookup.Row) []field {
	var fs []field
	str := func(name, v string) {
		fs = append(fs, field{Name: name, Value: v, Empty: v == ""})
	}
	num := func(name string, v int64) { str(name, strconv.FormatInt(v, 10)) }
	opt := func(name string, v string, known bool) {
		if !known {
			fs = append(fs, field{Name: name, Empty: true})
			return
		}
		str(name, v)
	}
	str("event_id", r.EventID)
	str("observed_at", when(r.ObservedAt))
	str("ingested_at", when(r.IngestedAt))
	str("kafka_topic", r.KafkaTopic)
	num("kafka_partition", int64(r.KafkaPartition))
	num("kafka_offset", r.KafkaOffset)
	str("source_kind", r.SourceKind)
	str("source_id", r.SourceID)
	str("source_version", r.SourceVersion)
	str("agent", r.Agent)
	str("endpoint", r.Endpoint)
	str("caller", r.Caller)
	str("method", r.Method)
	opt("attempt", strconv.Itoa(r.Attempt), r.Attempt > 0)
	str("http_request_id", r.HTTPRequestID)
	str("jsonrpc_id", r.JSONRPCID)
	str("message_id", r.MessageID)
	str("task_id", r.TaskID)
	str("trace_id", r.TraceID)
	str("span_id", r.SpanID)
	str("origin", r.Origin)
	str("inferred", strings.Join(r.Inferred, ", "))
	str("idempotency_key_hash", r.IdempotencyKey)
	str("protocol", r.Protocol)
	str("binding", r.Binding)
	str("envelope", r.Envelope)
	opt("http_status", optInt(r.HTTPStatus), r.HTTPStatus != nil)
	str("grpc_status", r.GRPCStatus)
	opt("jsonrpc_code", optInt(r.JSONRPCCode), r.JSONRPCCode != nil)
	str("code", r.Code)
	str("reason", r.Reason)
	str("domain", r.Domain)
	str("kind", r.Kind)
	str("typed", yesNo(r.Typed))
	opt("retryable", optBool(r.Retryable), r.Retryable != nil)
	str("retryable_source", r.RetryableSource)
	opt("retry_after_ms", millis(r.RetryAfterMS), r.RetryAfterMS != nil)
	str("retry_after_source", r.RetryAfterSource)
	str("limit", r.Limit)
	str("scope", r.Scope)
	str("error_id", r.ErrorID)
	str("request_id", r.RequestID)
	str("message", r.Message)
	var fv []string
	for _, v := range r.FieldViolations {
		fv = append(fv, v.Field+": "+v.Description)
	}
	fs = append(fs, field{Name: "field_violations", List: fv, Empty: len(fv) == 0})
	fs = append(fs, field{Name: "findings", List: r.Findings, Empty: len(r.Findings) == 0})
	return fs
}

// contextTable turns the per-minute counts into rows and columns: the kinds
// seen, sorted, and one row per minute, oldest first.
func contextTable(c lookup.Context, at time.Time) (kinds []string, rows []minuteRow, totals []int64) {
	seen := map[string]bool{}
	for _, m := range c.Minutes {
		for k := range m.ByKind {
			if !seen[k] {
				seen[k] = true
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	totals = make([]int64, len(kinds))
	mins := slices.Clone(c.Minutes)
	slices.SortFunc(mins, func(a, b lookup.Minute) int { return a.Minute.Compare(b.Minute) })
	this := at.UTC().Truncate(time.Minute)
	for _, m := range mins {
		row := minuteRow{Minute: m.Minute, Counts: make([]int64, len(kinds)), This: m.Minute.UTC().Equal(this), SoFar: c.SoFar(m.Minute)}
		for i, k := range kinds {
			row.Counts[i] = m.ByKind[k]
			totals[i] += m.ByKind[k]
		}
		rows = append(rows, row)
	}
	return kinds, rows, totals
}

// contextChart draws the context table: the caller's errors per minute,
// stacked by kind, the record's minute marked.
func contextChart(kinds []string, rows []minuteRow, at time.Time) chart {
	d := chartData{Title: "Errors of this caller per minute, by kind, around this reply", Step: time.Minute,
		Mark: at, MarkLabel: "the minute of this reply", Unit: "errors"}
	for _, r := range rows {
		d.Starts = append(d.Starts, r.Minute)
	}
	for k, kind := range kinds {
		s := chartSeries{Name: kind, Values: make([]int64, len(rows))}
		for i, r := range rows {
			s.Values[i] = r.Counts[k]
		}
		d.Stacked = append(d.Stacked, s)
	}
	return drawChart(d)
}
