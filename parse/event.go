package parse

import (
	"bytes"
	"encoding/base64"
	"strconv"

	"github.com/errtrail/errtrail/redact"
)

// This file reads the event JSON of the contract (docs/event-contract.md)
// and the context a tap sends as Kafka headers.

func (d *Decoder) event(value []byte, rep *Reply, out *Record) *DecodeError {
	ev, err := d.parseJSON(value, "event")
	if err != nil {
		return err
	}
	if ev.kind != jObject {
		return errAt(ErrBadEvent, "event", 0, "event is not a JSON object")
	}
	a := &d.sc.ar
	var haveV, haveObserved, haveReply bool
	it := ev.object()
	for {
		k, v, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
		case "v":
			n, ok := v.int()
			if !ok || v.kind != jNumber {
				return errAt(ErrWrongType, "event.v", -1, "v is not a number")
			}
			if n != 1 {
				return errAt(ErrBadVersion, "event.v", -1, "unknown event contract version")
			}
			haveV = true
		case "event_id":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.event_id", -1, "event_id is not a string")
			}
			out.EventID = a.str(v)
		case "observed_at":
			n, ok := v.int()
			if !ok || v.kind != jNumber {
				return errAt(ErrWrongType, "event.observed_at", -1, "observed_at is not a number of milliseconds")
			}
			rep.ObservedAtMS, haveObserved = n, true
		case "source":
			if v.kind == jObject {
				out.SourceKind = a.str(v.get("kind"))
				out.SourceID = a.str(v.get("id"))
				// Optional (contract v1 without it still decodes); a
				// version that is not a string is ignored, not fatal.
				if sv := v.get("version"); sv.kind == jString {
					out.SourceVersion = a.str(sv)
				}
			} else if !isNull(v) {
				return errAt(ErrWrongType, "event.source", -1, "source is not an object")
			}
		case "agent":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.agent", -1, "agent is not a string")
			}
			out.Agent = a.str(v)
		case "endpoint":
			out.Endpoint = a.str(v) // sanitize keeps only scheme, host and route
		case "caller":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.caller", -1, "caller is not a string")
			}
			out.Caller = a.str(v)
		case "method":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.method", -1, "method is not a string")
			}
			out.Method = a.str(v)
		case "trace_id":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.trace_id", -1, "trace_id is not a string")
			}
			out.TraceID = a.str(v) // sanitize keeps it only when it fits the W3C grammar
		case "span_id":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.span_id", -1, "span_id is not a string")
			}
			out.SpanID = a.str(v)
		case "attempt":
			if n, ok := v.int(); ok && n >= 0 && n < 1<<16 {
				out.Attempt = int(n)
			} else if !isNull(v) {
				return errAt(ErrWrongType, "event.attempt", -1, "attempt is not a small number")
			}
		case "request":
			if v.kind == jObject {
				out.HTTPRequestID = a.str(v.get("http_request_id"))
				out.MessageID = a.str(v.get("message_id"))
				out.TaskID = a.str(v.get("task_id"))
				out.IdempotencyKey = a.str(v.get("idempotency_key"))
				switch id := v.get("jsonrpc_id"); id.kind {
				case jString:
					out.JSONRPCID = a.str(id)
				case jNumber:
					out.JSONRPCID = bytesToString(id.bytes())
				}
			} else if !isNull(v) {
				return errAt(ErrWrongType, "event.request", -1, "request is not an object")
			}
		case "reply":
			if v.kind != jObject {
				return errAt(ErrWrongType, "event.reply", -1, "reply is not an object")
			}
			if err := d.eventReply(v, rep); err != nil {
				return err
			}
			haveReply = true
		}
	}
	switch {
	case !haveV:
		return errAt(ErrBadEvent, "event.v", -1, "missing contract version v")
	case !haveReply:
		return errAt(ErrBadEvent, "event.reply", -1, "missing reply")
	case !haveObserved:
		// Required by the contract whatever the Kafka timestamp says, so that
		// `ingest decode` (no Kafka time) and the pipeline agree; only the raw
		// forms fall back to the header or the Kafka time.
		return errAt(ErrBadEvent, "event.observed_at", -1, "missing observed_at")
	}
	return nil
}

func isNull(v jval) bool { return v.kind == jNull }

func isStrOrNull(v jval) bool { return v.kind == jString || v.kind == jNull }

func isObjOrArray(v jval) bool { return v.kind == jObject || v.kind == jArray }

func (d *Decoder) eventReply(v jval, rep *Reply) *DecodeError {
	a := &d.sc.ar
	it := v.object()
	for {
		k, x, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
		case "binding":
			switch string(x.rawStr()) {
			case "jsonrpc":
				rep.Binding = BindingJSONRPC
			case "http":
				rep.Binding = BindingHTTP
			case "grpc":
				rep.Binding = BindingGRPC
			}
		case "http_status":
			n, ok := x.int()
			if !ok || x.kind != jNumber || n < 0 || n > 999 {
				return errAt(ErrWrongType, "event.reply.http_status", -1, "http_status is not an HTTP status")
			}
			rep.HTTPStatus = int(n)
		case "headers":
			hs, err := d.headerList(x, d.sc.hdrs[:0], "event.reply.headers")
			if err != nil {
				return err
			}
			d.sc.hdrs = hs
			rep.Headers = hs
		case "body":
			if x.kind != jString {
				if x.kind == jNull {
					continue
				}
				return errAt(ErrWrongType, "event.reply.body", -1, "body is not a string")
			}
			// Unescaped while the event was validated (tape.scanUnescape);
			// the bytes stay put until the next message.
			rep.Body = stringBytes(d.sc.ar.str(x))
		case "body_base64":
			if x.kind != jString {
				return errAt(ErrWrongType, "event.reply.body_base64", -1, "body_base64 is not a string")
			}
			b, ok := decodeB64(d.sc.body[:0], x.rawStr())
			if !ok {
				return errAt(ErrWrongType, "event.reply.body_base64", -1, "body_base64 is not base64")
			}
			d.sc.body = b
			rep.Body = b
		case "body_json":
			rep.Body = x.bytes()
			d.sc.bodyJSON = x // already validated with the event: walk it in place
		case "grpc":
			if x.kind != jObject {
				return errAt(ErrWrongType, "event.reply.grpc", -1, "grpc is not an object")
			}
			st := x.get("status")
			n, ok := st.int()
			if !ok || n < 0 || n > 16 {
				return errAt(ErrWrongType, "event.reply.grpc.status", -1, "grpc.status is not a code 0-16")
			}
			rep.GRPCStatus = int(n)
			rep.GRPCMessage = a.str(x.get("message"))
			if tr := x.get("trailers"); tr.ok() {
				ts, err := d.headerList(tr, d.sc.trailers[:0], "event.reply.grpc.trailers")
				if err != nil {
					return err
				}
				d.sc.trailers = ts
				rep.GRPCTrailers = ts
			}
		}
	}
	return nil
}

// headerList reads headers given as an object of strings or [name, value]
// pairs, keeping only what keptHeader allows.
func (d *Decoder) headerList(v jval, dst []Header, path string) ([]Header, *DecodeError) {
	a := &d.sc.ar
	switch v.kind {
	case jObject:
		it := v.object()
		for {
			k, x, ok := it.next()
			if !ok {
				break
			}
			name := a.unescape(k)
			use := keptHeader(name)
			if use == redact.HeaderDrop {
				continue // not on the allow-list: never kept
			}
			if use == redact.HeaderName {
				if x.kind != jNull {
					dst = append(dst, Header{name, ""}) // its presence is what the decoder reads
				}
				continue
			}
			switch x.kind {
			case jString:
				dst = append(dst, Header{name, a.str(x)})
			case jArray: // repeated field
				ai := x.array()
				for {
					e, ok := ai.next()
					if !ok {
						break
					}
					dst = append(dst, Header{name, a.str(e)})
				}
			case jNumber:
				dst = append(dst, Header{name, bytesToString(x.bytes())})
			}
		}
	case jArray:
		it := v.array()
		for {
			p, ok := it.next()
			if !ok {
				break
			}
			pi := p.array()
			n, ok1 := pi.next()
			val, ok2 := pi.next()
			if !ok1 || !ok2 || n.kind != jString {
				return dst, errAt(ErrWrongType, path, -1, "header is not a [name, value] pair")
			}
			name := a.str(n)
			switch keptHeader(name) {
			case redact.HeaderValue:
				dst = append(dst, Header{name, a.str(val)})
			case redact.HeaderName:
				dst = append(dst, Header{name, ""}) // its presence is what the decoder reads
			}
		}
	case jNull:
	default:
		return dst, errAt(ErrWrongType, path, -1, "headers are neither an object nor a list of pairs")
	}
	return dst, nil
}

func decodeB64(dst, s []byte) ([]byte, bool) {
	s = bytes.TrimRight(s, "=")
	n := base64.RawStdEncoding.DecodedLen(len(s))
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	m, err := base64.RawStdEncoding.Decode(dst, s)
	if err != nil {
		// URL-safe alphabet from some taps.
		m, err = base64.RawURLEncoding.Decode(dst, s)
		if err != nil {
			return dst[:0], false
		}
	}
	return dst[:m], true
}

// --- context from Kafka headers ---

func (d *Decoder) contextFromHeaders(hs []MsgHeader, rep *Reply, out *Record) {
	for i := range hs {
		v := bytesToString(hs[i].Value)
		switch hs[i].Key {
		case "errtrail-event-id":
			out.EventID = v
		case "errtrail-observed-at":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				rep.ObservedAtMS = n
			}
		case "errtrail-source-kind":
			out.SourceKind = v
		case "errtrail-source-id":
			out.SourceID = v
		case "errtrail-source-version":
			out.SourceVersion = v
		case "errtrail-agent":
			out.Agent = v
		case "errtrail-endpoint":
			out.Endpoint = v
		case "errtrail-caller":
			out.Caller = v
		case "errtrail-method":
			out.Method = v
		case "errtrail-attempt":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 1<<16 {
				out.Attempt = n
			}
		case "errtrail-http-request-id":
			out.HTTPRequestID = v
		case "errtrail-jsonrpc-id":
			out.JSONRPCID = v
		case "errtrail-message-id":
			out.MessageID = v
		case "errtrail-task-id":
			out.TaskID = v
		case "errtrail-idempotency-key":
			out.IdempotencyKey = v
		case "errtrail-trace-id":
			out.TraceID = v
		case "errtrail-span-id":
			out.SpanID = v
		case "errtrail-binding":
			switch v {
			case "jsonrpc":
				rep.Binding = BindingJSONRPC
			case "http":
				rep.Binding = BindingHTTP
			case "grpc":
				rep.Binding = BindingGRPC
			}
		}
	}
}

// --- raw HTTP/1.1 response ---
