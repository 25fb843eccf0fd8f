package parse

import "github.com/errtrail/errtrail/redact"

// sanitize checks every string of a finished record by what it is, so that
// no value reaches a row as it arrived unless its kind allows it:
// identifiers (ids, caller, agent, method, codes, limit and scope names)
// keep values that fit their grammar and that no detector flags, and get a
// keyed hash otherwise; the endpoint keeps scheme, host and route; field
// paths keep their structure. Message texts and violation descriptions were
// redacted as they were decoded. It runs on decoded and on dead-lettered
// records alike: a dead-letter row keeps the context that could be read.
func (d *Decoder) sanitize(r *Record) {
	// Values that repeat from reply to reply are remembered: the field's
	// last value first, then the redactor's memo. Ids that are new with
	// every reply are checked directly.
	reasonIsCode := r.Reason != "" && r.Reason == r.Code // the ErrorInfo reason is often the code
	// One test per field before any call: most are empty in most replies.
	if r.SourceKind != "" {
		d.identLast(fSourceKind, &r.SourceKind, redact.ID)
	}
	if r.SourceID != "" {
		d.identLast(fSourceID, &r.SourceID, redact.ID)
	}
	if r.SourceVersion != "" {
		d.identLast(fSourceVersion, &r.SourceVersion, redact.ID)
	}
	if r.Agent != "" {
		d.identLast(fAgent, &r.Agent, redact.ID)
	}
	if r.Caller != "" {
		d.identLast(fCaller, &r.Caller, redact.ID)
	}
	if r.Method != "" {
		d.identLast(fMethod, &r.Method, redact.ID)
	}
	if r.Code != "" {
		d.identLast(fCode, &r.Code, redact.ID)
	}
	if r.Reason != "" && !reasonIsCode {
		d.identLast(fReason, &r.Reason, redact.ID)
	}
	if r.Domain != "" {
		d.identLast(fDomain, &r.Domain, redact.ID)
	}
	if r.Limit != "" {
		d.identLast(fLimit, &r.Limit, redact.Name)
	}
	if r.Scope != "" {
		d.identLast(fScope, &r.Scope, redact.Name)
	}
	if reasonIsCode {
		r.Reason = r.Code
	}
	for _, p := range [...]*string{&r.EventID, &r.HTTPRequestID, &r.JSONRPCID, &r.MessageID, &r.TaskID, &r.ErrorID} {
		if *p != "" {
			d.identOnce(p)
		}
	}
	// The request id is often the HTTP request id, from the header and the
	// body: equal to its kept value, it was checked already.
	if r.RequestID != "" && r.RequestID != r.HTTPRequestID {
		d.identOnce(&r.RequestID)
	}
	// A trace context is kept only in its W3C form; anything else (a
	// customer value in the wrong field) is dropped, never stored.
	if r.TraceID != "" && !ValidTraceID(r.TraceID) {
		r.TraceID = ""
	}
	if r.SpanID != "" && !ValidSpanID(r.SpanID) {
		r.SpanID = ""
	}
	if r.IdempotencyKey != "" {
		// Only ever compared (attempts of one request): a keyed hash, and
		// the key a client chose goes no further.
		r.IdempotencyHash = d.rd.Hash64(r.IdempotencyKey)
		r.IdempotencyKey = ""
	}
	if r.Endpoint != "" {
		r.Endpoint = d.saveIfChanged(r.Endpoint, d.rd.EndpointView(r.Endpoint))
	}
	for i := range r.FieldViolations {
		v := &r.FieldViolations[i]
		v.Field = d.saveIfChanged(v.Field, d.rd.PathView(v.Field))
	}
}

// Fields with a remembered last value.
const (
	fSourceKind = iota
	fSourceID
	fSourceVersion
	fAgent
	fCaller
	fMethod
	fCode
	fReason
	fDomain
	fLimit
	fScope
	nLastFields
)

// lastValue is a field's last value and what was stored for it.
type lastValue struct {
	in, out []byte
	keep    bool
}

// identLast is ident with the field's last value remembered: the same
// agent, method or code as in the previous reply costs one comparison.
func (d *Decoder) identLast(f int, p *string, g redact.Grammar) {
	s := *p
	if s == "" {
		return
	}
	l := &d.last[f]
	if bytesToString(l.in) == s {
		if !l.keep {
			*p = d.sc.ar.save(l.out)
		}
		return
	}
	out, keep := d.rd.Ident(s, g)
	if len(s) <= 96 {
		l.in = append(l.in[:0], s...)
		l.out = append(l.out[:0], out...)
		l.keep = keep
	}
	if !keep {
		*p = d.sc.ar.save(stringBytes(out))
	}
}

// identOnce is ident for ids that do not repeat.
func (d *Decoder) identOnce(p *string) {
	if out, keep := d.rd.IdentOnce(*p, redact.ID); !keep {
		*p = d.sc.ar.save(stringBytes(out))
	}
}

// ident replaces *p with its keyed hash unless it may be kept.
func (d *Decoder) ident(p *string, g redact.Grammar) {
	if out, keep := d.rd.Ident(*p, g); !keep {
		*p = d.sc.ar.save(stringBytes(out))
	}
}

// saveIfChanged keeps s when out is s itself, else copies out (a view of
// the redactor's memory) into the arena.
func (d *Decoder) saveIfChanged(s, out string) string {
	if out == s {
		return s
	}
	return d.sc.ar.save(stringBytes(out))
}
