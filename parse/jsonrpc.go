package parse

// This file decodes JSON-RPC envelopes: error objects (A2A, AAP, MCP,
// AgentRelay) and results that still carry a failure (MCP tool errors,
// tasks that ended FAILED).

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
	if (!ok || cv.kind != jNumber) && cv.kind == jString && isAAPObject(e) {
		// The error object is an aap.error itself (a string code, no
		// number): a skill failure in the wrong place, decoded so that the
		// binding's rules can say so.
		d.jsonAAP(e, viaData, f, rec)
		rec.Message = d.redactStr(f.aap.message)
		return nil
	}
	if !ok || cv.kind != jNumber {
		return errAt(ErrWrongType, "reply.body.error.code", -1, "JSON-RPC error code is not a number")
	}
	rec.JSONRPCCode, rec.HasJSONRPC = int(c), true
	rec.Message = d.redactStr(a.str(msg))
	switch data.kind {
	case jArray:
		d.jsonDetails(data, f, rec)
	case jObject:
		if isAAPObject(data) {
			d.jsonAAP(data, viaData, f, rec)
			break
		}
		if sym := data.get("code"); sym.kind == jString ||
			(data.get("request_id").kind == jString && data.get("details").kind == jObject) {
			// AgentRelay: data is {code: "<symbol>", request_id, details}
			// (seed 004); request_id and a details object without the
			// symbol are the same envelope, incomplete.
			f.form.relay = true
			f.relayCode = a.str(sym)
			f.relayRequestID = a.str(data.get("request_id"))
			d.relayDetails(data.get("details"), f, rec)
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
// failure: an MCP tool result with isError, a result that carries an
// aap.error without isError (seed 000: "Do not treat an HTTP 200 containing
// an MCP tool error as success"; aap_mcp_not_is_error), or a streamed task
// that failed.
func (d *Decoder) jsonrpcResult(res jval, f *facts, rec *Record) *DecodeError {
	rec.Binding = BindingJSONRPC
	if res.kind != jObject {
		return errAt(ErrNotAnError, "reply.body.result", -1, "JSON-RPC result without error")
	}
	isErr, _ := res.get("isError").boolean()
	var text string
	if isErr || res.get("structuredContent").ok() || res.get("content").ok() || res.get("type").ok() {
		text = d.toolResult(res, f, rec)
	}
	if isErr || f.aap.found {
		rec.Envelope = EnvMCPToolResult
		f.mcp.notIsError = !isErr
		if rt := res.get("resultType"); rt.kind == jString && string(rt.rawStr()) != "complete" {
			f.mcp.notComplete = true // MCP 2026-07-28: input_required is not a completed result
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

// toolResult reads the typed error of an MCP tool result (seed 000: "typed
// error in structuredContent and matching serialized JSON text in content")
// into f.aap and notes in f.mcp whether the two copies agree. It returns
// the first text content, which repeats the error in words when nothing is
// typed.
func (d *Decoder) toolResult(res jval, f *facts, rec *Record) string {
	a := &d.sc.ar
	sc := res.get("structuredContent")
	structured := isAAPObject(sc)
	if structured {
		d.jsonAAP(sc, viaOther, f, rec)
	} else if isAAPObject(res) { // the aap.error as the result itself
		d.jsonAAP(res, viaOther, f, rec)
	}
	// The first text content is the words of the error; the JSON copy may
	// be any of the text contents (a sentence may come first).
	var text string
	var tv jval // the text content holding the aap.error as JSON
	matched := false
	cit := res.get("content").array()
	for {
		c, ok := cit.next()
		if !ok {
			break
		}
		if c.kind != jObject || string(c.get("type").rawStr()) != "text" {
			continue
		}
		s := a.str(c.get("text"))
		if text == "" {
			text = s
		}
		t := trimSpace(stringBytes(s))
		if len(t) == 0 || t[0] != '{' {
			continue
		}
		mark := d.sc.ntape
		pv, err := d.parseJSON(t, "reply.body.result.content")
		if err != nil || !isAAPObject(pv) {
			d.sc.ntape = mark // nothing refers to that tape: reuse it
			continue
		}
		tv = pv
		if !structured || d.jsonEqual(sc, pv, 16*len(s)+256) {
			matched = structured
			break
		}
	}
	textAAP := tv.ok()
	if !f.aap.found && textAAP {
		// Seed 000: the typed error may arrive only as serialized JSON text.
		d.jsonAAP(tv, viaOther, f, rec)
	}
	if f.aap.found {
		// Both copies present and equal, or a finding.
		f.mcp.mismatch = !matched
		switch {
		case !matched && structured && textAAP:
			d.scanAAPTexts(tv, f) // the same texts when the copies agree
		case !textAAP:
			d.scanText(text) // words instead of the JSON copy: the caller reads them too
		}
	}
	return text
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
