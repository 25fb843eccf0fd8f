package parse

import "strings"

// This file decodes HTTP+JSON bodies: google.rpc.Status under "error"
// (A2A, AIP-193) and RFC 9457 problem details.

func isProblem(h *hdrInfo, t *topMembers) bool {
	if strings.EqualFold(mediaType(h.contentType), "application/problem+json") {
		return true
	}
	return (t.title.kind == jString || t.detail.kind == jString) && (t.status.kind == jNumber || t.typ.kind == jString)
}

// rpcStatus decodes the HTTP+JSON google.rpc.Status form:
// {"error":{"code":<HTTP status>,"status":"<Code name>","message","details":[…]}}.
func (d *Decoder) rpcStatus(e jval, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	rec.Envelope = EnvRPCStatus
	rec.Binding = BindingHTTP
	rec.Message = d.redactStr(a.str(e.get("message")))
	if st := e.get("status"); st.kind == jString {
		rec.GRPCCode = grpcCodeByName(st.rawStr())
	}
	if c, ok := e.get("code").int(); ok {
		d.sc.bodyStatus = int(c)
	}
	det := e.get("details")
	if det.kind == jArray {
		d.jsonDetails(det, f, rec)
	}
	return nil
}

// problem decodes RFC 9457 problem details, including the A2A spec's §6.4/§6.5
// samples (supportedVersions, errors[{field,message}]) and ASP.NET's.
func (d *Decoder) problem(v jval, t *topMembers, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	rec.Envelope = EnvProblem
	if s, ok := t.status.int(); ok && t.status.kind == jNumber {
		d.sc.bodyStatus = int(s)
	}
	msg := a.str(t.detail)
	if msg == "" {
		msg = a.str(t.title)
	} else {
		d.scanText(a.str(t.title)) // not kept, but the caller reads it
	}
	rec.Message = d.redactStr(msg)
	typ := a.str(t.typ)
	// The A2A spec's problem type URIs end in the error's kebab-case name.
	if i := strings.LastIndexByte(typ, '/'); i >= 0 && strings.Contains(typ, "a2a-protocol.org") {
		d.sc.problemType = typ[i+1:]
	}
	it := v.get("errors").array()
	for {
		x, ok := it.next()
		if !ok {
			break
		}
		d.addViolation(rec, a.str(x.get("field")), a.str(x.get("message")))
	}
	if t.details.kind == jArray {
		d.jsonDetails(t.details, f, rec)
	}
	return nil
}

// isStatusCode tells a google.rpc.Status code (an HTTP status in the
// HTTP+JSON form, or a google.rpc.Code number) from a JSON-RPC code, which
// is negative.
func isStatusCode(c jval) bool {
	n, ok := c.int()
	return ok && n > 0 && n < 600
}
