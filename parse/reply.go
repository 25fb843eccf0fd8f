package parse

import (
	"bytes"
)

// decodeReply decodes one reply into the reply part of rec.
func (d *Decoder) decodeReplyInto(rep *Reply, rec *Record) error {
	f := &d.sc.f
	f.reset()
	d.sc.echoed, d.sc.stack = false, false
	d.sc.raw = d.sc.raw[:0]
	h := &d.sc.hdr
	if !d.sc.hdrRead { // rawHTTP reads them while framing
		*h = readHeaders(rep.Headers)
	}
	if rec.HTTPRequestID == "" && h.requestID != "" {
		rec.HTTPRequestID = h.requestID
	}
	rec.HTTPStatus = rep.HTTPStatus
	var err *DecodeError
	if rep.GRPCStatus >= 0 {
		err = d.grpcReply(rep, f, rec)
	} else {
		rec.Binding = BindingHTTP
		err = d.body(rep.Body, h, f, rec)
	}
	if err == nil && rep.GRPCStatus < 0 && rep.HTTPStatus >= 200 && rep.HTTPStatus < 400 && noErrorBody(rec.Envelope, rep.Body) {
		// A success or redirect status and nothing that reads as an error:
		// an empty 200 or 202 (an MCP session DELETE, a notification), an
		// agent card, a result; a 3xx redirect (a2a-sdk 1.3.0 redirects an
		// unknown route with 307 and no body).
		detail := "HTTP 2xx without an error body"
		if rep.HTTPStatus >= 300 {
			detail = "HTTP 3xx redirect without an error body"
		}
		err = errAt(ErrNotAnError, "reply.body", -1, detail)
	}
	if err != nil {
		rec.Kind = KindUnknown
		return err
	}
	if rep.Binding != BindingUnknown && rec.Binding == BindingHTTP && rep.Binding == BindingJSONRPC && rec.Envelope == EnvNone {
		rec.Binding = BindingJSONRPC // a JSON-RPC call answered by a proxy page
	}
	d.classify(rep, h, f, rec)
	if d.opt.KeepRaw > 0 && len(rep.Body) > 0 {
		d.sc.raw = d.rd.Raw(d.sc.raw[:0], rep.Body, d.opt.KeepRaw)
	}
	return nil
}

// noErrorBody reports whether a decoded body shows no error at all: JSON of
// no known shape, or nothing (empty, or a JSON null). A bare JSON string and
// a non-JSON page are not counted: they are error forms (a2a-dotnet previews,
// a proxy's page) whatever the status.
func noErrorBody(env Envelope, body []byte) bool {
	switch env {
	case EnvUnrecognized:
		return true
	case EnvNone:
		b := trimSpace(body)
		return len(b) == 0 || string(b) == "null"
	}
	return false
}

// body decodes an HTTP body of any binding.
func (d *Decoder) body(body []byte, h *hdrInfo, f *facts, rec *Record) *DecodeError {
	if v := d.sc.bodyJSON; v.ok() && v.kind != jNull {
		return d.jsonBody(v, h, f, rec)
	}
	body = trimSpace(body)
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

	// google.rpc.Status members at the top level instead of under "error".
	f.form.topStatus = !t.err.ok() && t.code.kind == jNumber && (t.status.kind == jString || t.details.kind == jArray)
	switch {
	case t.err.kind == jObject && (t.jsonrpc.ok() || isJSONRPCErrorObject(t.err)):
		return d.jsonrpcError(t.err, f, rec)
	case t.err.kind == jObject && isAAPObject(t.err):
		// PAP sends the aap.error as the body itself; some servers wrap it
		// the way HTTP+JSON wraps a Status (pap_body_not_direct).
		rec.Envelope = EnvAAPError
		d.jsonAAP(t.err, viaWrapped, f, rec)
		rec.Message = d.redactStr(f.aap.message)
		return nil
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
	case t.typ.kind == jString && string(t.typ.rawStr()) == tAAPError,
		t.code.kind == jString && isAAPObject(v): // an aap.error that left out its type
		rec.Envelope = EnvAAPError
		d.jsonAAP(v, viaOther, f, rec)
		rec.Message = d.redactStr(f.aap.message)
		return nil
	case isProblem(h, &t):
		return d.problem(v, &t, f, rec)
	case t.code.kind == jString, t.requestID.kind == jString && t.details.kind == jObject:
		// AgentRelay flat REST error {code, message, request_id, details}
		// (seed 004); request_id and a details object without the symbol
		// are the same envelope, incomplete (a gateway's {message,
		// request_id} is not).
		rec.Envelope = EnvRelayFlat
		f.form.relay = true
		f.relayCode = a.str(t.code)
		f.relayRequestID = a.str(t.requestID)
		d.relayDetails(t.details, f, rec)
		rec.Message = d.redactStr(a.str(t.message))
		return nil
	case t.code.kind == jNumber && (t.status.kind == jString || t.details.kind == jArray) && isStatusCode(t.code):
		// google.rpc.Status members at the top level instead of under
		// "error": still a Status, whose code is the HTTP status (or a
		// google.rpc.Code number), never a JSON-RPC code.
		d.sc.statusTopLevel = true
		return d.rpcStatus(v, f, rec)
	case t.code.kind == jNumber && t.message.ok():
		// a2a-js v0.3 legacy REST: flat {code, message, data} with the JSON-RPC code.
		rec.Envelope = EnvLegacyFlat
		c, _ := t.code.int()
		rec.JSONRPCCode, rec.HasJSONRPC = int(c), true
		rec.Message = d.redactStr(a.str(t.message))
		switch t.data.kind {
		case jArray:
			d.jsonDetails(t.data, f, rec)
		case jObject: // an aap.error passed through as the error's data, as in a JSON-RPC error
			if typ := t.data.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
				d.jsonAAP(t.data, viaData, f, rec)
			}
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
