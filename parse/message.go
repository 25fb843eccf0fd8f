package parse

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
)

// scratch is the Decoder's reusable memory. Everything a Record borrows
// lives here or in the input.
type scratch struct {
	ar       arena
	raw      []byte // redacted, capped body for RawBody
	body     []byte // de-chunked or base64-decoded body
	bin      []byte // decoded grpc-status-details-bin
	tmp      []byte // redaction output before it is saved
	tapes    [4]tape
	ntape    int
	sse      []byte
	sseBest  []byte
	hdrs     []Header
	trailers []Header
	rep      Reply
	f        facts

	echoed      bool   // redaction replaced something
	mcpURI      bool   // JSON-RPC data named a resource uri (MCP resource not found)
	bodyStatus  int    // HTTP status stated inside the body (Status code, problem status)
	bodyJSON    jval   // the reply body when the event embedded it as JSON
	problemType string // A2A problem type slug
}

func (s *scratch) reset() {
	s.ar.reset()
	s.ntape = 0
	s.raw = s.raw[:0]
	s.body = s.body[:0]
	s.bin = s.bin[:0]
	s.hdrs = s.hdrs[:0]
	s.trailers = s.trailers[:0]
	s.rep = Reply{GRPCStatus: -1}
	s.echoed, s.mcpURI, s.bodyStatus, s.problemType = false, false, 0, ""
	s.bodyJSON = jval{}
}

func (d *Decoder) decodeMessage(value []byte, headers []MsgHeader, kafkaTimeMS int64, out *Record) error {
	out.reset()
	d.sc.reset()
	if len(value) == 0 {
		return errAt(ErrEmpty, "message", -1, "empty message value")
	}
	if len(value) > d.opt.MaxBytes {
		return errAt(ErrTooLarge, "message", d.opt.MaxBytes, "message larger than the limit")
	}
	rep := &d.sc.rep
	rep.ObservedAtMS = kafkaTimeMS
	var err *DecodeError
	switch {
	case value[0] == '{' || isWS(value[0]):
		err = d.event(value, rep, out)
	case bytes.HasPrefix(value, []byte("HTTP/1.")):
		d.contextFromHeaders(headers, rep, out)
		err = d.rawHTTP(value, rep)
	case bytes.HasPrefix(value, []byte("GRPC")):
		d.contextFromHeaders(headers, rep, out)
		err = d.grpcText(value, rep)
	default:
		return errAt(ErrBadEvent, "message", 0, "message is neither event JSON, an HTTP/1.1 response nor a gRPC reply")
	}
	if err != nil {
		return err
	}
	out.ObservedAtMS = rep.ObservedAtMS
	if err := d.decodeReplyInto(rep, out); err != nil {
		return err
	}
	return nil
}

func (d *Decoder) decodeReply(rep *Reply, out *Record) error {
	ctx := *out
	out.reset()
	d.sc.reset()
	copyContext(out, &ctx)
	if len(rep.Body) > d.opt.MaxBytes {
		return errAt(ErrTooLarge, "reply.body", d.opt.MaxBytes, "reply larger than the limit")
	}
	if err := d.decodeReplyInto(rep, out); err != nil {
		return err
	}
	return nil
}

func copyContext(dst, src *Record) {
	dst.EventID, dst.ObservedAtMS, dst.SourceKind, dst.SourceID = src.EventID, src.ObservedAtMS, src.SourceKind, src.SourceID
	dst.Agent, dst.Endpoint, dst.Caller, dst.Method, dst.Attempt = src.Agent, src.Endpoint, src.Caller, src.Method, src.Attempt
	dst.HTTPRequestID, dst.JSONRPCID, dst.MessageID, dst.TaskID, dst.IdempotencyKey =
		src.HTTPRequestID, src.JSONRPCID, src.MessageID, src.TaskID, src.IdempotencyKey
}

// --- event JSON ---

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
			} else if !isNull(v) {
				return errAt(ErrWrongType, "event.source", -1, "source is not an object")
			}
		case "agent":
			if !isStrOrNull(v) {
				return errAt(ErrWrongType, "event.agent", -1, "agent is not a string")
			}
			out.Agent = a.str(v)
		case "endpoint":
			out.Endpoint = d.cleanEndpoint(a.str(v))
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
	case !haveObserved && rep.ObservedAtMS == 0:
		return errAt(ErrBadEvent, "event.observed_at", -1, "missing observed_at")
	}
	return nil
}

func isNull(v jval) bool       { return v.kind == jNull }
func isStrOrNull(v jval) bool  { return v.kind == jString || v.kind == jNull }
func isObjOrArray(v jval) bool { return v.kind == jObject || v.kind == jArray }

// cleanEndpoint drops userinfo and the query string from an endpoint URL.
func (d *Decoder) cleanEndpoint(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		host := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			ar := &d.sc.ar
			ar.grow(len(s))
			start := len(ar.buf)
			ar.buf = append(ar.buf, s[:i+3]...)
			ar.buf = append(ar.buf, rest[at+1:]...)
			return bytesToString(ar.buf[start:])
		}
	}
	return s
}

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
			s := x.rawStr()
			if bytes.IndexByte(s, '\\') >= 0 {
				d.sc.body = appendUnescaped(d.sc.body[:0], s)
				rep.Body = d.sc.body
			} else {
				rep.Body = s
			}
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
// pairs, dropping credentials.
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
			if sensitiveHeader(name) {
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
			if sensitiveHeader(name) {
				continue
			}
			dst = append(dst, Header{name, a.str(val)})
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
		case "errtrail-agent":
			out.Agent = v
		case "errtrail-endpoint":
			out.Endpoint = d.cleanEndpoint(v)
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

func (d *Decoder) rawHTTP(b []byte, rep *Reply) *DecodeError {
	lineEnd := bytes.IndexByte(b, '\n')
	if lineEnd < 0 {
		return errAt(ErrBadHTTP, "http.status_line", 0, "no end of status line")
	}
	line := bytes.TrimRight(b[:lineEnd], "\r")
	// HTTP/1.1 SP 3DIGIT [SP reason]
	if len(line) < 12 || line[8] != ' ' {
		return errAt(ErrBadHTTP, "http.status_line", 0, "malformed status line")
	}
	code, ok := parseIntPrefix(line[9:12])
	if !ok || code < 100 || code > 999 || (len(line) > 12 && line[12] != ' ') {
		return errAt(ErrBadHTTP, "http.status_line", 9, "malformed status code")
	}
	rep.HTTPStatus = int(code)
	p := lineEnd + 1
	hs := d.sc.hdrs[:0]
	chunked := false
	contentLength := -1
	for {
		if p >= len(b) {
			return errAt(ErrBadHTTP, "http.headers", p, "headers not terminated by a blank line")
		}
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			return errAt(ErrBadHTTP, "http.headers", p, "header line not terminated")
		}
		hl := bytes.TrimRight(b[p:p+e], "\r")
		start := p
		p += e + 1
		if len(hl) == 0 {
			break
		}
		colon := bytes.IndexByte(hl, ':')
		if colon <= 0 {
			return errAt(ErrBadHTTP, "http.headers", start, "header line without a name")
		}
		name := bytesToString(hl[:colon])
		val := bytesToString(bytes.TrimSpace(hl[colon+1:]))
		switch {
		case len(name) == 17 && equalFoldASCII(name, "Transfer-Encoding"):
			chunked = strings.Contains(strings.ToLower(val), "chunked")
		case len(name) == 14 && equalFoldASCII(name, "Content-Length"):
			if n, err := strconv.Atoi(val); err == nil && n >= 0 {
				contentLength = n
			}
		}
		if sensitiveHeader(name) {
			continue
		}
		hs = append(hs, Header{name, val})
	}
	d.sc.hdrs = hs
	rep.Headers = hs
	body := b[p:]
	switch {
	case chunked:
		out, err := dechunk(d.sc.body[:0], body)
		if err != nil {
			err.Offset += p
			return err
		}
		d.sc.body = out
		rep.Body = out
	case contentLength >= 0 && contentLength < len(body):
		rep.Body = body[:contentLength]
	default:
		rep.Body = body
	}
	return nil
}

func dechunk(dst, b []byte) ([]byte, *DecodeError) {
	p := 0
	for {
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			// A capture cut in the middle of a stream: keep what arrived.
			return dst, nil
		}
		sizeLine := bytes.TrimRight(b[p:p+e], "\r")
		if i := bytes.IndexByte(sizeLine, ';'); i >= 0 {
			sizeLine = sizeLine[:i]
		}
		size, err := strconv.ParseInt(strings.TrimSpace(bytesToString(sizeLine)), 16, 64)
		if err != nil || size < 0 {
			return dst, errAt(ErrBadHTTP, "http.body.chunk", p, "malformed chunk size")
		}
		p += e + 1
		if size == 0 {
			return dst, nil
		}
		if int64(len(b)-p) < size {
			return append(dst, b[p:]...), nil
		}
		dst = append(dst, b[p:p+int(size)]...)
		p += int(size)
		if p < len(b) && b[p] == '\r' {
			p++
		}
		if p < len(b) && b[p] == '\n' {
			p++
		}
	}
}

// --- gRPC text form and gRPC replies ---

func (d *Decoder) grpcText(b []byte, rep *Reply) *DecodeError {
	lineEnd := bytes.IndexByte(b, '\n')
	if lineEnd < 0 {
		lineEnd = len(b)
	}
	first := bytes.TrimSpace(b[:lineEnd])
	if len(first) > 4 {
		if n, ok := parseIntPrefix(bytes.TrimSpace(first[4:])); ok {
			rep.HTTPStatus = int(n)
		}
	}
	p := lineEnd + 1
	hs := d.sc.hdrs[:0]
	rep.GRPCStatus = -1
	for p < len(b) {
		e := bytes.IndexByte(b[p:], '\n')
		var hl []byte
		start := p
		if e < 0 {
			hl, p = b[p:], len(b)
		} else {
			hl, p = b[p:p+e], p+e+1
		}
		hl = bytes.TrimRight(hl, "\r")
		if len(hl) == 0 {
			break
		}
		colon := bytes.IndexByte(hl[1:], ':') + 1 // allow ":status"
		if colon <= 0 {
			return errAt(ErrBadGRPC, "grpc.metadata", start, "metadata line without a name")
		}
		name := bytesToString(bytes.TrimSpace(hl[:colon]))
		val := bytesToString(bytes.TrimSpace(hl[colon+1:]))
		switch {
		case name == "grpc-status":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return errAt(ErrBadGRPC, "grpc.grpc-status", start, "grpc-status is not a number")
			}
			rep.GRPCStatus = n
		case name == "grpc-message":
			rep.GRPCMessage = val
		case name == ":status":
			if n, err := strconv.Atoi(val); err == nil {
				rep.HTTPStatus = n
			}
		case sensitiveHeader(name):
		default:
			hs = append(hs, Header{name, val})
		}
	}
	if rep.GRPCStatus < 0 {
		return errAt(ErrBadGRPC, "grpc.grpc-status", -1, "no grpc-status")
	}
	d.sc.hdrs = hs
	rep.Headers = hs
	rep.GRPCTrailers = hs
	if rep.HTTPStatus == 0 {
		rep.HTTPStatus = 200
	}
	return nil
}

func (d *Decoder) grpcReply(rep *Reply, f *facts, rec *Record) *DecodeError {
	if rep.GRPCStatus == grpcOK {
		// A stream that ended OK: any failure travelled inside a message.
		return errAt(ErrNotAnError, "grpc.grpc-status", -1, "grpc-status is OK")
	}
	rec.Binding = BindingGRPC
	rec.Envelope = EnvGRPCStatus
	rec.GRPCCode = rep.GRPCStatus
	rec.Message = d.redactStr(d.percentDecode(rep.GRPCMessage))
	var bin string
	for _, t := range rep.GRPCTrailers {
		if strings.EqualFold(t.Name, "grpc-status-details-bin") {
			bin = t.Value
			break
		}
	}
	if bin == "" {
		return nil
	}
	if i := strings.IndexByte(bin, ','); i >= 0 {
		bin = bin[:i] // repeated values: the first one
	}
	raw, ok := decodeB64(d.sc.bin[:0], []byte(bin))
	if !ok {
		rec.addFinding(FindGRPCDetailsMismatch)
		return nil
	}
	d.sc.bin = raw
	code, _, err := d.pbStatus(raw, f, rec)
	if err != nil {
		// Unparseable details are ignored, as gRPC clients do.
		f.reset()
		rec.FieldViolations = rec.FieldViolations[:0]
		rec.addFinding(FindGRPCDetailsMismatch)
		return nil
	}
	if code != rep.GRPCStatus {
		// A details code that disagrees with grpc-status is not trusted.
		f.reset()
		rec.FieldViolations = rec.FieldViolations[:0]
		rec.addFinding(FindGRPCDetailsMismatch)
	}
	return nil
}

// percentDecode decodes grpc-message leniently: a bad escape is kept as is.
func (d *Decoder) percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	ar := &d.sc.ar
	ar.grow(len(s))
	start := len(ar.buf)
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex4([]byte{s[i+1], s[i+2]}) {
			ar.buf = append(ar.buf, byte(hex4([]byte{s[i+1], s[i+2]})))
			i += 2
			continue
		}
		ar.buf = append(ar.buf, s[i])
	}
	return bytesToString(ar.buf[start:])
}
