// Package textout prints lookup stories, match lists and conformance reports
// for people at a terminal: aligned sections, colour only when asked (the
// command decides: a terminal and no NO_COLOR). Everything printed comes from
// the answer, which holds redacted values only; nothing here adds the id the
// person asked with.
package textout

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/errtrail/errtrail/internal/tracelink"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// Printer writes to W; Color adds ANSI emphasis to headings and broken rules.
type Printer struct {
	W     io.Writer
	Color bool
	// Trace builds the story's link to its trace (--links.trace-url);
	// the zero value prints none.
	Trace tracelink.Template
}

func (p Printer) heading(s string) string {
	if p.Color {
		return "\x1b[1m" + s + "\x1b[0m"
	}
	return s
}

func (p Printer) alert(s string) string {
	if p.Color && s != "" {
		return "\x1b[31m" + s + "\x1b[0m"
	}
	return s
}

// clean removes control bytes from a stored value before it reaches a
// terminal: a value is redacted, but it may still hold an escape sequence.
func clean(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return '?'
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

func millis(p *int64) string {
	if p == nil {
		return "-"
	}
	return (time.Duration(*p) * time.Millisecond).String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Story prints one story: what happened, the record, the attempts, the
// context and the findings.
func (p Printer) Story(s *lookup.Story) error {
	w := &errWriter{w: p.W}
	r := &s.Record
	fmt.Fprintf(w, "%s  %s · %s", p.heading(strings.ToUpper(clean(r.Kind))), clean(r.Protocol), clean(r.Binding))
	if r.Agent != "" {
		fmt.Fprintf(w, " · agent %s", clean(r.Agent))
	}
	if r.Caller != "" {
		fmt.Fprintf(w, " · caller %s", clean(r.Caller))
	}
	fmt.Fprintf(w, " · %s (matched by %s)\n\n", stamp(r.ObservedAt), clean(s.MatchedAs))
	fmt.Fprintf(w, "%s\n", clean(s.Meaning.Headline))
	for _, d := range s.Meaning.Details {
		fmt.Fprintf(w, "  %s\n", clean(d))
	}
	if s.Meaning.Advice != "" {
		fmt.Fprintf(w, "What the caller should do: %s\n", clean(s.Meaning.Advice))
	}
	if s.Group != "" {
		fmt.Fprintf(w, "Error group %s: errtrail groups %s\n", clean(s.Group), clean(r.Agent))
	}
	p.observers(w, &s.Observers)

	fmt.Fprintf(w, "\n%s\n", p.heading("RECORD"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range recordFields(r) {
		if kv[1] != "" {
			fmt.Fprintf(tw, "  %s\t%s\n", kv[0], clean(kv[1]))
		}
	}
	if u := p.Trace.URL(r.TraceID, r.SpanID); u != "" {
		fmt.Fprintf(tw, "  %s\t%s\n", "trace", clean(u))
	}
	tw.Flush()

	p.attempts(w, &s.Attempts)
	p.context(w, r, &s.Context)

	fmt.Fprintf(w, "\n%s\n", p.heading("FINDINGS"))
	if len(s.Findings) == 0 {
		fmt.Fprintln(w, "  none: this reply follows every rule errtrail checks")
	}
	for _, f := range s.Findings {
		fmt.Fprintf(w, "  %s%s\n", p.alert(clean(f.Code)), levelWords(f.Level))
		if f.Checks != "" {
			fmt.Fprintf(w, "    checks: %s\n", clean(f.Checks))
		}
		if f.Change != "" {
			fmt.Fprintf(w, "    change: %s\n", clean(f.Change))
		}
	}
	return w.err
}

// observers prints who observed the reply and what each copy saw
// differently.
func (p Printer) observers(w io.Writer, o *lookup.Observers) {
	if len(o.Copies) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", p.heading("SEEN BY"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   \tobserver\tsource id\tobserved_at\tevent_id\tsaw")
	for _, c := range o.Copies {
		mark, saw := " ", "the same reply"
		switch {
		case c.This:
			mark, saw = ">", "this record"
		case len(c.Differs) > 0:
			saw = p.alert(fmt.Sprintf("a different reply (%d fields)", len(c.Differs)))
		}
		kind := c.SourceKind
		if kind == "" {
			kind = "?"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", mark, clean(kind), clean(c.SourceID), stamp(c.ObservedAt), clean(c.EventID), saw)
	}
	tw.Flush()
	for _, c := range o.Copies {
		for _, d := range c.Differs {
			fmt.Fprintf(w, "  %s differs on %s: %s here, %s in this record\n", clean(c.SourceKind), clean(d.Field), clean(orNone(d.Copy)), clean(orNone(d.Record)))
		}
	}
	fmt.Fprintf(w, "  %s\n", clean(o.Summary))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (p Printer) attempts(w io.Writer, a *lookup.Attempts) {
	title := "ATTEMPTS"
	if a.Key != "" {
		title += " (same " + clean(a.Key) + ")"
	}
	fmt.Fprintf(w, "\n%s\n", p.heading(title))
	if len(a.Attempts) == 0 {
		fmt.Fprintln(w, "  no other reply shares an id with this one")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "   \tattempt\ttime\tkind\tasked delay\twaited\tnext\trules broken")
		for _, at := range a.Attempts {
			mark := " "
			if at.This {
				mark = ">"
			}
			n := "?"
			if at.Attempt > 0 {
				n = strconv.Itoa(at.Attempt)
			}
			next := "no further error seen"
			if at.Next == "error" {
				next = "another error"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, n, stamp(at.ObservedAt), clean(at.Kind),
				millis(at.AskedDelayMS), millis(at.WaitedMS), next, p.alert(clean(strings.Join(at.Violations, ", "))))
		}
		tw.Flush()
		if a.Truncated {
			fmt.Fprintln(w, "  (more replies exist than were read)")
		}
	}
	if len(a.Violations) > 0 {
		fmt.Fprintf(w, "  retry rules broken: %s\n", p.alert(clean(strings.Join(a.Violations, ", "))))
	}
}

func (p Printer) context(w io.Writer, r *lookup.Row, c *lookup.Context) {
	fmt.Fprintf(w, "\n%s\n", p.heading("CONTEXT"))
	who := "this caller"
	if r.Caller != "" {
		who = "caller " + clean(r.Caller)
	}
	to := c.To.UTC().Format("15:04 MST")
	if !c.To.Equal(c.To.Truncate(time.Minute)) {
		to = c.To.UTC().Format("15:04:05 MST") // the window ends at the moment of the answer
	}
	fmt.Fprintf(w, "  %s's errors on %s, %s to %s\n", who, clean(r.Agent), c.From.UTC().Format("15:04"), to)
	kinds := map[string]bool{}
	for _, m := range c.Minutes {
		for k := range m.ByKind {
			kinds[k] = true
		}
	}
	cols := make([]string, 0, len(kinds))
	for k := range kinds {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	if len(c.Minutes) == 0 {
		fmt.Fprintln(w, "  no errors in these minutes")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "  minute\t")
		for _, k := range cols {
			fmt.Fprintf(tw, "%s\t", clean(k))
		}
		fmt.Fprintln(tw)
		for _, m := range c.Minutes {
			label := m.Minute.UTC().Format("15:04")
			if c.SoFar(m.Minute) {
				label += " so far"
			}
			fmt.Fprintf(tw, "  %s\t", label)
			for _, k := range cols {
				fmt.Fprintf(tw, "%d\t", m.ByKind[k])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if c.VerdictError != "" {
		fmt.Fprintf(w, "  verdicts: could not be computed (%s)\n", clean(c.VerdictError))
		return
	}
	storm := "not checked"
	if c.RetryStormChecked {
		storm = yesNo(c.RetryStorm)
	}
	fmt.Fprintf(w, "  verdicts at %s: agent overloaded %s · caller runaway %s · limit too low %s · retry storm %s",
		stamp(c.VerdictAt), yesNo(c.AgentOverloaded), yesNo(c.CallerRunaway), yesNo(c.LimitTooLow), storm)
	if c.Undecided {
		fmt.Fprint(w, " · too little history to judge the caller")
	}
	fmt.Fprintln(w)
	switch c.VerdictSource {
	case lookup.VerdictsRecorded:
		fmt.Fprintln(w, "  (as the alerter recorded them then: errtrail incidents)")
	case lookup.VerdictsRecomputed:
		fmt.Fprintln(w, "  (recomputed: no alerter was recording incidents then)")
	}
}

// recordFields lists the record's fields in docs/record.md's order, as
// strings ("" for unset).
func recordFields(r *lookup.Row) [][2]string {
	num := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	var retryable, retryAfter, attempt string
	if r.Retryable != nil {
		retryable = strconv.FormatBool(*r.Retryable)
	}
	if r.RetryAfterMS != nil {
		retryAfter = strconv.FormatInt(*r.RetryAfterMS, 10) + " ms"
	}
	if r.Attempt > 0 {
		attempt = strconv.Itoa(r.Attempt)
	}
	var fields []string
	for _, f := range r.FieldViolations {
		fields = append(fields, f.Field+": "+f.Description)
	}
	join := func(a []string) string { return strings.Join(a, "; ") }
	withSource := func(v, src string) string {
		if v != "" && src != "" {
			return v + " (" + src + ")"
		}
		return v
	}
	return [][2]string{
		{"protocol", r.Protocol}, {"binding", r.Binding}, {"envelope", r.Envelope},
		{"http_status", num(r.HTTPStatus)}, {"grpc_status", r.GRPCStatus}, {"jsonrpc_code", num(r.JSONRPCCode)},
		{"code", r.Code}, {"reason", r.Reason}, {"domain", r.Domain}, {"kind", r.Kind}, {"typed", strconv.FormatBool(r.Typed)},
		{"retryable", withSource(retryable, r.RetryableSource)}, {"retry_after", withSource(retryAfter, r.RetryAfterSource)},
		{"limit", r.Limit}, {"scope", r.Scope},
		{"agent", r.Agent}, {"caller", r.Caller}, {"method", r.Method}, {"endpoint", r.Endpoint},
		{"error_id", r.ErrorID}, {"request_id", r.RequestID}, {"http_request_id", r.HTTPRequestID},
		{"jsonrpc_id", r.JSONRPCID}, {"message_id", r.MessageID}, {"task_id", r.TaskID},
		{"idempotency_key_hash", r.IdempotencyKey}, {"attempt", attempt},
		{"message", r.Message}, {"field_violations", join(fields)}, {"findings", join(r.Findings)},
		{"event_id", r.EventID}, {"observed_at", stamp(r.ObservedAt)}, {"ingested_at", stamp(r.IngestedAt)},
		{"source", withSource(r.SourceKind, r.SourceID)}, {"source_version", r.SourceVersion},
		{"origin", r.Origin}, {"inferred", strings.Join(r.Inferred, ", ")},
		{"trace_id", r.TraceID}, {"span_id", r.SpanID},
		{"kafka", fmt.Sprintf("%s/%d/%d", r.KafkaTopic, r.KafkaPartition, r.KafkaOffset)},
	}
}

// Matches prints the records an id matched when it names several distinct
// replies (total records, replies of them distinct: 0 when not known), with
// the observer of each and the reply it is a copy of.
func (p Printer) Matches(ms []lookup.Match, total, replies int) error {
	w := &errWriter{w: p.W}
	head := fmt.Sprintf("%d stored error replies carry this id; pick one with --event-id:", total)
	if replies > 0 && replies != total {
		head = fmt.Sprintf("%d distinct error replies carry this id (%d stored records: some replies were seen by several observers); pick one with --event-id:", replies, total)
	}
	fmt.Fprintf(w, "%s\n", p.heading(head))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  reply\tevent_id\tobserver\tobserved_at\tmatched by\tagent\tcaller\tkind\tcode")
	for _, m := range ms {
		n, kind := "-", m.SourceKind
		if m.Reply > 0 {
			n = strconv.Itoa(m.Reply)
		}
		if kind == "" {
			kind = "?"
		}
		if m.SourceID != "" {
			kind += " (" + m.SourceID + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, clean(m.EventID), clean(kind), stamp(m.ObservedAt), clean(m.MatchedAs),
			clean(m.Agent), clean(m.Caller), clean(m.Kind), clean(m.Code))
	}
	tw.Flush()
	if total > len(ms) {
		fmt.Fprintf(w, "  … and %d more\n", total-len(ms))
	}
	return w.err
}

// Report prints a conformance report.
func (p Printer) Report(r *report.Report) error {
	w := &errWriter{w: p.W}
	who := "every agent"
	if r.Agent != "" {
		who = "agent " + clean(r.Agent)
	}
	fmt.Fprintf(w, "%s\n", p.heading(fmt.Sprintf("Conformance of %s, %s to %s", who, stamp(r.From), stamp(r.To))))
	fmt.Fprintf(w, "%s\n", countedWords(r.Replies, r.Source, r.OtherObservations))
	if len(r.Rules) == 0 {
		fmt.Fprintln(w, "\nNo reply broke a rule errtrail checks.")
	}
	for _, rule := range r.Rules {
		fmt.Fprintf(w, "\n%s  %s%s\n", p.alert(clean(rule.Code)), clean(rule.Title), levelWords(rule.Level))
		fmt.Fprintf(w, "  %d replies (%.1f%%); example event_id %s", rule.Replies, 100*rule.Share, clean(rule.ExampleEventID))
		if rule.ExampleErrorID != "" {
			fmt.Fprintf(w, ", error_id %s", clean(rule.ExampleErrorID))
		}
		if rule.ExampleGroup != "" {
			fmt.Fprintf(w, ", error group %s", clean(rule.ExampleGroup))
		}
		fmt.Fprintln(w)
		if rule.Checks != "" {
			fmt.Fprintf(w, "  checks: %s\n", clean(rule.Checks))
		}
		if rule.Change != "" {
			fmt.Fprintf(w, "  change: %s\n", clean(rule.Change))
		}
	}
	if len(r.Agents) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.heading("AGENTS"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  agent\treplies\tbreaking a rule\trules broken\tcounted from\tother observers' copies left out")
		for _, a := range r.Agents {
			src := a.Source
			if src == "" {
				src = "-"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t%d\n", clean(a.Agent), a.Replies, a.Breaking, a.Rules, clean(src), a.OtherObservations)
		}
		tw.Flush()
	}
	if len(r.Clean) > 0 {
		fmt.Fprintf(w, "\nNever broken: %s\n", clean(strings.Join(r.Clean, ", ")))
	}
	return w.err
}

// countedWords says what a report counted and what it left out: the
// replies of one observer kind per agent (report.Observer), and the copies
// other observers published of the same replies.
func countedWords(replies int64, source string, left int64) string {
	s := fmt.Sprintf("%d error replies", replies)
	switch source {
	case "":
		return s
	case "agent":
		s += ", counted as the agent published them"
	case "gateway":
		s += ", counted as a gateway in front of the agent saw them (the agent published none itself)"
	case "client":
		s += ", counted as the callers' clients saw them (the agent and gateways published none)"
	case "mixed":
		s += ", counted from each agent's best observer (the agent, else a gateway, else the client)"
	default:
		s += ", counted from the observer " + clean(source)
	}
	if left > 0 {
		return s + fmt.Sprintf("; %d copies of the same replies published by other observers are left out, so each reply counts once", left)
	}
	return s + "; no other observer published copies"
}

// errWriter keeps the first write error, so a closed pipe is reported once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return len(b), nil
	}
	n, err := e.w.Write(b)
	if err != nil {
		e.err = err
	}
	return n, nil
}

// levelWords says what a rule's level means: a broken MUST is a violation,
// a broken SHOULD is advice.
func levelWords(level string) string {
	switch level {
	case "MUST":
		return "  (MUST: a violation)"
	case "SHOULD":
		return "  (SHOULD: advice)"
	}
	return ""
}
