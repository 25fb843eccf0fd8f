package parse

import "strings"

// This file checks the form of an error object against seed 003 (the A2A
// error in each binding: a google.rpc.Status under "error" with the HTTP
// status in code and its name in status, the binding's status of each A2A
// error, a message on every error, a BadRequest that names its fields, the
// accepted media types) and seed 004 (the AgentRelay envelope and its code
// table). The rules' rows are in rules.go.

// formFacts is what the decoder noted about the form of the error object
// while reading it; the zero value is "nothing seen".
type formFacts struct {
	// stream: the error was read from an event stream, whose status line
	// (200) is the stream's, not the error's.
	stream bool
	// topStatus: google.rpc.Status members (a numeric code with status or
	// details) at the top level of the body instead of under "error".
	topStatus bool
	// badRequestFields counts the field violations of BadRequest details;
	// badRequestNoField: one of them names no field.
	badRequestFields  int
	badRequestNoField bool

	// AgentRelay (seed 004): relay is set for the envelope of the relay's
	// flat REST error or of its JSON-RPC error.data, symbol or not.
	relay bool
	// relayDetails: the kind of the details member (jNone when absent);
	// relayDetailsN its member count; relayIssues: it holds a non-empty
	// array of objects (the zod issue list of invalid_params).
	relayDetails  byte
	relayDetailsN int
	relayIssues   bool
}

func (ff *formFacts) badRequestField(field string) {
	ff.badRequestFields++
	if strings.TrimSpace(field) == "" {
		ff.badRequestNoField = true
	}
}

// relayDetails reads an AgentRelay envelope's details member: its shape for
// the seed 004 rules, the retry delay it may carry, and the field
// violations of a zod issue list ({code, path: [...], message} items).
func (d *Decoder) relayDetails(det jval, f *facts, rec *Record) {
	f.form.relayDetails = det.kind
	if det.kind != jObject {
		return
	}
	if ms, ok := det.get("retry_after_ms").int(); ok {
		f.relayRetryMS = ms
	}
	it := det.object()
	for {
		_, v, ok := it.next()
		if !ok {
			return
		}
		f.form.relayDetailsN++
		if v.kind != jArray {
			continue
		}
		items := v.array()
		for {
			x, ok := items.next()
			if !ok || x.kind != jObject {
				break
			}
			f.form.relayIssues = true
			if p := x.get("path"); p.kind == jArray {
				// The issue's code (invalid_type, too_small), not its message:
				// zod's messages can quote the value received.
				d.addViolation(rec, d.issuePath(p), d.sc.ar.str(x.get("code")))
			}
		}
	}
}

// issuePath joins a zod issue's path (["message", "parts", 0, "text"]) into
// a field path ("message.parts.0.text"), in the arena. Escaped names keep
// their escapes: a path names a parameter, not a value.
func (d *Decoder) issuePath(p jval) string {
	a := &d.sc.ar
	a.grow(len(p.bytes()))
	start := len(a.buf)
	it := p.array()
	for {
		x, ok := it.next()
		if !ok {
			break
		}
		var part []byte
		switch x.kind {
		case jString:
			part = x.inner()
		case jNumber:
			part = x.bytes()
		default:
			continue
		}
		if len(a.buf) > start {
			a.buf = append(a.buf, '.')
		}
		a.buf = append(a.buf, part...)
	}
	return bytesToString(a.buf[start:])
}

// acceptedMedia reports whether a Content-Type is one seed 003 lists for
// A2A error replies ("accept all three types when you read").
func acceptedMedia(ct string) bool {
	switch ct { // the common spellings, without the work of mediaType
	case "application/json", "application/a2a+json", "application/json; charset=utf-8":
		return true
	}
	mt := mediaType(ct)
	return equalFoldASCII(mt, "application/json") || equalFoldASCII(mt, "application/a2a+json") ||
		equalFoldASCII(mt, "application/problem+json")
}

// blank reports whether s is empty or white space only, as
// strings.TrimSpace(s) == "" does, without the call for a text that starts
// with a printable ASCII byte.
func blank(s string) bool {
	if s != "" && s[0] > ' ' && s[0] < 0x80 {
		return false
	}
	return strings.TrimSpace(s) == ""
}

// httpStatusCode reports whether n can be an HTTP status (a Status body's
// code must be one; a google.rpc.Code number such as 5 cannot).
func httpStatusCode(n int) bool { return n >= 100 && n <= 599 }

// formFindings raises the seed 003 and seed 004 findings.
func (d *Decoder) formFindings(rep *Reply, h *hdrInfo, f *facts, rec *Record) {
	if rec.Protocol == ProtocolAgentRelay {
		d.relayFindings(f, rec)
	} else {
		d.a2aFormFindings(rep, h, f, rec)
	}
	// Seed 003: "a google.rpc.BadRequest that names the field".
	if f.badRequest && (f.form.badRequestFields == 0 || f.form.badRequestNoField) {
		rec.addFinding(FindBadRequestWithoutFields)
	}
}

// a2aFormFindings checks an A2A error (or an AAP error carried by A2A)
// against seed 003.
func (d *Decoder) a2aFormFindings(rep *Reply, h *hdrInfo, f *facts, rec *Record) {
	stream := f.form.stream
	a2a := rec.Protocol == ProtocolA2A ||
		(rec.Protocol == ProtocolAAP && rec.Envelope != EnvAAPError && rec.Envelope != EnvMCPToolResult)

	// Every error carries a message: the JSON-RPC error, the Status body,
	// the gRPC status.
	switch rec.Envelope {
	case EnvJSONRPCError, EnvRPCStatus, EnvGRPCStatus:
		if rec.Protocol != ProtocolMCP && blank(rec.Message) {
			rec.addFinding(FindMessageMissing)
		}
	}

	// The HTTP+JSON binding: a google.rpc.Status under "error".
	if a2a && rec.Binding == BindingHTTP && rep.Binding != BindingJSONRPC {
		switch rec.Envelope {
		case EnvLegacyFlat, EnvProblem, EnvJSONString, EnvUnrecognized:
			rec.addFinding(FindA2ABodyNotStatus)
		default:
			if f.form.topStatus {
				rec.addFinding(FindA2ABodyNotStatus)
			}
		}
	}
	if rec.Envelope == EnvRPCStatus {
		d.statusFindings(rec, stream)
	}

	// The media type of a JSON error body (an event stream carries its
	// errors inside; a body that is not JSON is decided from the status). A
	// reply without Content-Type is not judged: an event need not carry the
	// header, and the seeds' own examples omit it.
	if a2a && rec.Binding != BindingGRPC && !stream && rec.Envelope != EnvNone &&
		h.contentType != "" && !acceptedMedia(h.contentType) {
		rec.addFinding(FindA2AMediaType)
	}

	// The A2A error the ErrorInfo names, against the code and status of the
	// binding it arrived on.
	if !f.errInfo || f.domain != domainA2A {
		return
	}
	e, ok := a2aByReason[f.reason]
	if !ok {
		return
	}
	switch rec.Envelope {
	case EnvJSONRPCError:
		if rec.HasJSONRPC && rec.JSONRPCCode != e.jsonrpc {
			rec.addFinding(FindA2AReasonCodeMismatch)
		}
		// "A JSON-RPC error is an ordinary response with HTTP 200."
		if e.http != 0 && !stream && rec.HTTPStatus != 0 && rec.HTTPStatus != 200 {
			rec.addFinding(FindA2AStatusNotMapped)
		}
	case EnvRPCStatus:
		status := rec.HTTPStatus
		if stream || status < 400 {
			status = d.sc.bodyStatus
		}
		if e.http != 0 && httpStatusCode(status) && status != e.http {
			rec.addFinding(FindA2AStatusNotMapped)
		}
	case EnvGRPCStatus:
		if e.http != 0 && rec.GRPCCode >= 0 && rec.GRPCCode != e.grpc {
			rec.addFinding(FindA2AStatusNotMapped)
		}
	}
}

// statusFindings checks a google.rpc.Status body under "error": its code
// repeats the HTTP status and its status names the google.rpc.Code whose
// HTTP mapping is that status.
func (d *Decoder) statusFindings(rec *Record, stream bool) {
	code := d.sc.bodyStatus
	// A status line of an event stream is the stream's (200), not the
	// error's; HTTP 4xx/5xx against a different 4xx/5xx is
	// status_body_mismatch (a gateway's rewrite, seed 002).
	if !httpStatusCode(code) ||
		(!stream && rec.HTTPStatus != 0 && code != rec.HTTPStatus && (rec.HTTPStatus < 400 || code < 400)) {
		rec.addFinding(FindStatusCodeNotHTTP)
	}
	want := code
	if !httpStatusCode(want) && !stream && rec.HTTPStatus >= 400 {
		want = rec.HTTPStatus
	}
	g, ok := grpcCodeOf(rec.GRPCCode)
	if !ok || (httpStatusCode(want) && g.http != want) {
		rec.addFinding(FindStatusNameMismatch)
	}
}

// relayFindings checks an AgentRelay error against seed 004: the envelope's
// four fields, the symbol's JSON-RPC code, internal errors redacted,
// invalid_params with its issue list.
func (d *Decoder) relayFindings(f *facts, rec *Record) {
	switch rec.Envelope {
	case EnvRelayFlat, EnvJSONRPCError:
	default:
		return // the Agent Relay protocol's frames are another envelope
	}
	if f.relayCode == "" || blank(rec.Message) || f.relayRequestID == "" || f.form.relayDetails != jObject {
		rec.addFinding(FindRelayEnvelopeIncomplete)
	}
	rs, known := relaySymbols[f.relayCode]
	if known && rec.Envelope == EnvJSONRPCError && rec.HasJSONRPC && rs.jsonrpc != 0 && rs.jsonrpc != rec.JSONRPCCode {
		rec.addFinding(FindRelayCodeMismatch)
	}
	switch f.relayCode {
	case "internal":
		if f.form.relayDetailsN > 0 || internalText(rec.Message) {
			rec.addFinding(FindRelayInternalNotRedacted)
		}
	case "invalid_params":
		if !f.form.relayIssues {
			rec.addFinding(FindRelayIssuesMissing)
		}
	}
}

// internalMarks are fragments that only an internal error's own text holds:
// stack frames, runtime panics, driver and network errors, SQL.
var internalMarks = [...]string{
	"Traceback (most recent call last)", "goroutine ", "panic:", "Exception", "\tat ", ".java:", ".go:", ".py\", line",
	".js:", ".ts:", "node_modules/", "ECONNREFUSED", "ETIMEDOUT", "dial tcp", "connection refused", "SQLSTATE", "pq: ",
	"ORA-", "SELECT ", "INSERT INTO", "DELETE FROM", "stack trace", "Stack trace",
}

// internalText reports whether a message shows the internals that seed 004
// says an internal error's reply has redacted.
func internalText(s string) bool {
	for _, m := range internalMarks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
