package parse

import (
	"bytes"
	"strings"
)

// decodeReply decodes one reply into the reply part of rec.
func (d *Decoder) decodeReplyInto(rep *Reply, rec *Record) error {
	f := &d.sc.f
	f.reset()
	d.sc.echoed = false
	d.sc.raw = d.sc.raw[:0]
	h := readHeaders(rep.Headers)
	if rec.HTTPRequestID == "" && h.requestID != "" {
		rec.HTTPRequestID = h.requestID
	}
	rec.HTTPStatus = rep.HTTPStatus
	var err *DecodeError
	if rep.GRPCStatus >= 0 {
		err = d.grpcReply(rep, f, rec)
	} else {
		rec.Binding = BindingHTTP
		err = d.body(rep.Body, &h, f, rec)
	}
	if err != nil {
		rec.Kind = KindUnknown
		return err
	}
	if rep.Binding != BindingUnknown && rec.Binding == BindingHTTP && rep.Binding == BindingJSONRPC && rec.Envelope == EnvNone {
		rec.Binding = BindingJSONRPC // a JSON-RPC call answered by a proxy page
	}
	d.classify(rep, &h, f, rec)
	if d.opt.KeepRaw > 0 && len(rep.Body) > 0 {
		d.sc.raw = RedactRaw(d.sc.raw[:0], rep.Body, d.opt.KeepRaw)
	}
	return nil
}

// body decodes an HTTP body of any binding.
func (d *Decoder) body(body []byte, h *hdrInfo, f *facts, rec *Record) *DecodeError {
	if v := d.sc.bodyJSON; v.ok() && v.kind != jNull {
		return d.jsonBody(v, h, f, rec)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		rec.Envelope = EnvNone
		return nil
	}
	if isSSEMedia(h.contentType) || looksSSE(body) {
		return d.sse(body, h, f, rec)
	}
	switch body[0] {
	case '{', '[', '"':
	default:
		// HTML from a proxy, plain text: no usable body, decide from the status.
		rec.Envelope = EnvNone
		return nil
	}
	v, err := d.parseJSON(body, "reply.body")
	if err != nil {
		if bytes.HasPrefix(body, []byte(`{"error":"`)) {
			if lerr := d.legacyJavaInvalid(body, rec); lerr == nil {
				return nil
			}
		}
		return err
	}
	return d.jsonBody(v, h, f, rec)
}

// Top-level members the envelope detector looks at.
const (
	mJSONRPC = 1 << iota
	mError
	mResult
	mType
	mCode
	mMessage
	mStatus
	mTitle
	mDetail
	mData
	mRequestID
	mDetails
	mTask
	mStatusUpdate
	mErrorID
	mRetryable
	mPayload
)

type topMembers struct {
	seen                                                  int
	jsonrpc, err, result, typ, code, message, status      jval
	title, detail, data, requestID, details, task, update jval
	errorID, retryable, payload                           jval
}

func (t *topMembers) set(bit int, dst *jval, v jval, rec *Record) {
	if t.seen&bit != 0 {
		rec.addFinding(FindDuplicateKey)
	}
	t.seen |= bit
	*dst = v
}

func (d *Decoder) jsonBody(v jval, h *hdrInfo, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	switch v.kind {
	case jObject:
	case jString:
		rec.Envelope = EnvJSONString
		rec.Message = d.redactStr(a.str(v))
		return nil
	default:
		rec.Envelope = EnvUnrecognized
		return nil
	}
	var t topMembers
	it := v.object()
	for {
		k, val, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
		case "jsonrpc":
			t.set(mJSONRPC, &t.jsonrpc, val, rec)
		case "error":
			t.set(mError, &t.err, val, rec)
		case "result":
			t.set(mResult, &t.result, val, rec)
		case "type":
			t.set(mType, &t.typ, val, rec)
		case "code":
			t.set(mCode, &t.code, val, rec)
		case "message":
			t.set(mMessage, &t.message, val, rec)
		case "status":
			t.set(mStatus, &t.status, val, rec)
		case "title":
			t.set(mTitle, &t.title, val, rec)
		case "detail":
			t.set(mDetail, &t.detail, val, rec)
		case "data":
			t.set(mData, &t.data, val, rec)
		case "request_id":
			t.set(mRequestID, &t.requestID, val, rec)
		case "details":
			t.set(mDetails, &t.details, val, rec)
		case "task":
			t.set(mTask, &t.task, val, rec)
		case "statusUpdate":
			t.set(mStatusUpdate, &t.update, val, rec)
		case "error_id":
			t.set(mErrorID, &t.errorID, val, rec)
		case "retryable":
			t.set(mRetryable, &t.retryable, val, rec)
		case "payload":
			t.set(mPayload, &t.payload, val, rec)
		}
	}

	switch {
	case t.err.kind == jObject && (t.jsonrpc.ok() || isJSONRPCErrorObject(t.err)):
		return d.jsonrpcError(t.err, f, rec)
	case t.err.kind == jObject:
		return d.rpcStatus(t.err, f, rec)
	case t.err.kind == jString:
		// a2a-java v0.3 legacy REST: {"error":"<FQCN>","message":"…"}
		rec.Envelope = EnvLegacyFlat
		rec.Code = d.javaErrorName(a.str(t.err))
		rec.Message = d.redactStr(a.str(t.message))
		return nil
	case t.result.ok():
		return d.jsonrpcResult(t.result, f, rec)
	case t.payload.kind == jObject && t.typ.kind == jString && relayFrameType(t.typ.rawStr()):
		return d.relayFrame(t.typ, t.payload, f, rec)
	case t.typ.kind == jString && string(t.typ.rawStr()) == tAAPError:
		rec.Envelope = EnvAAPError
		d.jsonAAP(v, f, rec)
		rec.Message = d.redactStr(f.aap.message)
		return nil
	case isProblem(h, &t):
		return d.problem(v, &t, f, rec)
	case t.code.kind == jString:
		// AgentRelay flat REST error {code, message, request_id, details}.
		rec.Envelope = EnvRelayFlat
		f.relayCode = a.str(t.code)
		f.relayRequestID = a.str(t.requestID)
		if t.details.kind == jObject {
			if ms, ok := t.details.get("retry_after_ms").int(); ok {
				f.relayRetryMS = ms
			}
		}
		rec.Message = d.redactStr(a.str(t.message))
		return nil
	case t.code.kind == jNumber && t.message.ok():
		// a2a-js v0.3 legacy REST: flat {code, message, data} with the JSON-RPC code.
		rec.Envelope = EnvLegacyFlat
		c, _ := t.code.int()
		rec.JSONRPCCode, rec.HasJSONRPC = int(c), true
		rec.Message = d.redactStr(a.str(t.message))
		if t.data.kind == jArray {
			d.jsonDetails(t.data, f, rec)
		}
		return nil
	case t.task.kind == jObject || t.update.kind == jObject || t.status.kind == jObject:
		if d.taskFailed(v, rec) {
			return nil
		}
		return errAt(ErrNotAnError, "reply.body", -1, "task update that is not a failure")
	}
	rec.Envelope = EnvUnrecognized
	if t.message.kind == jString {
		rec.Message = d.redactStr(a.str(t.message))
	}
	return nil
}

// isJSONRPCErrorObject tells a JSON-RPC error member that lost its "jsonrpc"
// sibling from a google.rpc.Status: JSON-RPC codes are negative, Status
// codes are HTTP statuses or gRPC code numbers, and Status has "status".
func isJSONRPCErrorObject(e jval) bool {
	if e.get("status").ok() || e.get("details").ok() {
		return false
	}
	c, ok := e.get("code").int()
	return ok && c < 0
}

func isProblem(h *hdrInfo, t *topMembers) bool {
	if strings.EqualFold(mediaType(h.contentType), "application/problem+json") {
		return true
	}
	return (t.title.kind == jString || t.detail.kind == jString) && (t.status.kind == jNumber || t.typ.kind == jString)
}

func (d *Decoder) jsonrpcError(e jval, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	rec.Envelope = EnvJSONRPCError
	rec.Binding = BindingJSONRPC
	var cv, msg, data jval
	it := e.object()
	for {
		k, v, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
		case "code":
			cv = v
		case "message":
			msg = v
		case "data":
			data = v
		}
	}
	c, ok := cv.int()
	if !ok || cv.kind != jNumber {
		return errAt(ErrWrongType, "reply.body.error.code", -1, "JSON-RPC error code is not a number")
	}
	rec.JSONRPCCode, rec.HasJSONRPC = int(c), true
	rec.Message = d.redactStr(a.str(msg))
	switch data.kind {
	case jArray:
		d.jsonDetails(data, f, rec)
	case jObject:
		if typ := data.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
			d.jsonAAP(data, f, rec)
			break
		}
		if sym := data.get("code"); sym.kind == jString {
			// AgentRelay: data is {code: "<symbol>", request_id, details}.
			f.relayCode = a.str(sym)
			f.relayRequestID = a.str(data.get("request_id"))
			if det := data.get("details"); det.kind == jObject {
				if ms, ok := det.get("retry_after_ms").int(); ok {
					f.relayRetryMS = ms
				}
			}
			break
		}
		if data.get("uri").kind == jString {
			d.sc.mcpURI = true
		}
		if det := data.get("details"); det.kind == jArray {
			d.jsonDetails(det, f, rec)
		}
	}
	return nil
}

// jsonrpcResult handles a JSON-RPC success envelope that still carries a
// failure: an MCP tool result with isError, or a streamed task that failed.
func (d *Decoder) jsonrpcResult(res jval, f *facts, rec *Record) *DecodeError {
	rec.Binding = BindingJSONRPC
	if res.kind != jObject {
		return errAt(ErrNotAnError, "reply.body.result", -1, "JSON-RPC result without error")
	}
	if b, _ := res.get("isError").boolean(); b {
		rec.Envelope = EnvMCPToolResult
		a := &d.sc.ar
		sc := res.get("structuredContent")
		if sc.kind == jObject {
			if typ := sc.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
				d.jsonAAP(sc, f, rec)
			}
		}
		// The text content repeats the error; use it when nothing structured was given.
		var text string
		cit := res.get("content").array()
		for {
			c, ok := cit.next()
			if !ok {
				break
			}
			if c.kind == jObject && string(c.get("type").rawStr()) == "text" {
				text = a.str(c.get("text"))
				break
			}
		}
		if !f.aap.found && len(text) > 0 && text[0] == '{' {
			// Seed 000: the typed error may arrive only as serialized JSON text.
			tb := []byte(text)
			if pv, err := d.parseJSON(tb, "reply.body.result.content"); err == nil {
				if pv.kind == jObject {
					if typ := pv.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
						d.jsonAAP(pv, f, rec)
					}
				}
			}
		}
		if f.aap.found {
			rec.Message = d.redactStr(f.aap.message)
		} else {
			rec.Message = d.redactStr(text)
		}
		return nil
	}
	if d.taskFailed(res, rec) {
		return nil
	}
	return errAt(ErrNotAnError, "reply.body.result", -1, "JSON-RPC result is not an error")
}

// taskFailed recognises a task or status update that ended FAILED, in the
// v0.3 ("failed", kind status-update) and v1 (TASK_STATE_FAILED,
// statusUpdate/task wrappers) shapes.
func (d *Decoder) taskFailed(v jval, rec *Record) bool {
	for depth := 0; depth < 3 && v.kind == jObject; depth++ {
		if st := v.get("status"); st.kind == jObject {
			state := st.get("state").rawStr()
			if string(state) == "failed" || string(state) == "TASK_STATE_FAILED" {
				rec.Envelope = EnvTaskFailed
				rec.Code = "TASK_FAILED"
				if id := v.get("taskId"); id.kind == jString && rec.TaskID == "" {
					rec.TaskID = d.sc.ar.str(id)
				} else if id := v.get("id"); id.kind == jString && rec.TaskID == "" {
					rec.TaskID = d.sc.ar.str(id)
				}
				rec.Message = d.redactStr(d.firstText(st.get("message")))
				return true
			}
			return false
		}
		next := v.get("statusUpdate")
		if !next.ok() {
			next = v.get("task")
		}
		if !next.ok() {
			next = v.get("result")
		}
		v = next
	}
	return false
}

// firstText returns the text of the first text part of an A2A message.
func (d *Decoder) firstText(msg jval) string {
	it := msg.get("parts").array()
	for {
		p, ok := it.next()
		if !ok {
			return ""
		}
		if t := p.get("text"); t.kind == jString {
			return d.sc.ar.str(t)
		}
	}
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

// javaErrorName turns a Java class name such as
// io.a2a.spec.TaskNotFoundError into the reason form TASK_NOT_FOUND.
func (d *Decoder) javaErrorName(fqcn string) string {
	name := fqcn
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '$'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, "Error")
	name = strings.TrimSuffix(name, "Exception")
	if name == "" {
		return ""
	}
	ar := &d.sc.ar
	ar.grow(2 * len(name))
	start := len(ar.buf)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 && (name[i-1] >= 'a' && name[i-1] <= 'z' || name[i-1] >= '0' && name[i-1] <= '9') {
				ar.buf = append(ar.buf, '_')
			}
			ar.buf = append(ar.buf, c)
		} else if c >= 'a' && c <= 'z' {
			ar.buf = append(ar.buf, c-'a'+'A')
		} else if c >= '0' && c <= '9' || c == '_' {
			ar.buf = append(ar.buf, c)
		}
	}
	s := bytesToString(ar.buf[start:])
	// Legacy names for the same errors.
	switch s {
	case "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED":
		return "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
	case "JSONPARSE", "JSON_PARSE":
		return "PARSE_ERROR"
	case "INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INTERNAL":
	}
	return s
}

// legacyJavaInvalid reads the a2a-java v0.3 body built by string
// concatenation without escaping, which may not be valid JSON:
// {"error":"<FQCN>","message":"<unescaped text>"}.
func (d *Decoder) legacyJavaInvalid(body []byte, rec *Record) *DecodeError {
	rest := body[len(`{"error":"`):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return errAt(ErrInvalidJSON, "reply.body", 0, "reply body is not valid JSON")
	}
	fqcn := rest[:end]
	for _, c := range fqcn {
		if !(c == '.' || c == '$' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return errAt(ErrInvalidJSON, "reply.body", 0, "reply body is not valid JSON")
		}
	}
	rec.Envelope = EnvLegacyFlat
	rec.Code = d.javaErrorName(bytesToString(fqcn))
	if i := bytes.Index(rest, []byte(`"message":"`)); i >= 0 {
		m := rest[i+len(`"message":"`):]
		if j := bytes.LastIndex(m, []byte(`"}`)); j >= 0 {
			m = m[:j]
		}
		rec.Message = d.redactStr(d.sc.ar.save(m))
	}
	return nil
}

// looksSSE reports whether a body is an event stream without the media type.
func looksSSE(b []byte) bool {
	return bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte("event:")) ||
		bytes.HasPrefix(b, []byte("id:")) || bytes.HasPrefix(b, []byte(": "))
}

// sse finds the last event of a stream that carries an error (an `error`
// event, a JSON-RPC error, a Status, or a task that failed) and decodes it.
func (d *Decoder) sse(body []byte, h *hdrInfo, f *facts, rec *Record) *DecodeError {
	var best []byte
	var name []byte
	buf := d.sc.sse[:0]
	flush := func() {
		if len(buf) > 0 {
			data := bytes.TrimSpace(buf)
			if bytes.Equal(name, []byte("error")) || sseCarriesError(data) {
				best = append(d.sc.sseBest[:0], data...)
				d.sc.sseBest = best
			}
		}
		buf, name = buf[:0], nil
	}
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(buf) > 0 {
				buf = append(buf, '\n')
			}
			buf = append(buf, v...)
		case bytes.HasPrefix(line, []byte("event:")):
			name = bytes.TrimSpace(line[6:])
		}
	}
	flush()
	d.sc.sse = buf[:0]
	if best == nil {
		return errAt(ErrNotAnError, "reply.body", -1, "event stream carries no error event")
	}
	v, err := d.parseJSON(best, "reply.body.event")
	if err != nil {
		return err
	}
	return d.jsonBody(v, h, f, rec)
}

func sseCarriesError(data []byte) bool {
	return bytes.Contains(data, []byte(`"error"`)) || bytes.Contains(data, []byte(`"isError":true`)) ||
		bytes.Contains(data, []byte(`"failed"`)) || bytes.Contains(data, []byte(`TASK_STATE_FAILED`))
}

// relayFrameType reports whether an envelope type is one of the Agent Relay
// protocol's failure frames (REFERENCE §6b): ERROR, NACK or BUSY.
func relayFrameType(t []byte) bool {
	switch string(t) {
	case "ERROR", "NACK", "BUSY":
		return true
	}
	return false
}

// relayFrame decodes an Agent Relay envelope {v, type, id, ts, payload}
// whose type is ERROR ({code, message, fatal}), NACK ({ack_id, code,
// reason, message}) or BUSY ({retry_after_ms, queue_depth}).
func (d *Decoder) relayFrame(typ, p jval, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	rec.Envelope = EnvRelayFrame
	switch string(typ.rawStr()) {
	case "BUSY":
		f.relayCode = "BUSY"
		if ms, ok := p.get("retry_after_ms").int(); ok {
			f.relayRetryMS = ms
		}
	default:
		f.relayCode = a.str(p.get("code"))
		if f.relayCode == "" {
			f.relayCode = string(typ.rawStr())
		}
		msg := p.get("message")
		if !msg.ok() {
			msg = p.get("reason")
		}
		rec.Message = d.redactStr(a.str(msg))
	}
	return nil
}
