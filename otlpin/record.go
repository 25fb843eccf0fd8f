package otlpin

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/errtrail/errtrail/parse"
)

type outcome int

const (
	outOther outcome = iota // no protocol reply
	outOK                   // a protocol reply that succeeded
	outError                // a record
	outDead                 // a record whose attached reply did not decode (builder.derr)
)

// builder turns one item into a record; its buffers are reused.
type builder struct {
	trace, span [32]byte
	ev          []byte
	body        []byte
	hdrs        []parse.Header
	msg         string
	derr        *parse.DecodeError
	// The message's Kafka headers (Decode).
	hdrAgent, hdrCaller, hdrSourceKind, hdrSourceID string
}

// Severity ERROR (17) and above mark a failed log record.
const severityError = 17

// build fills rec from it and says what it was.
func (b *builder) build(d *Decoder, it *item, kafkaTimeMS int64, rec *parse.Record) outcome {
	a := it.a
	body := a.strKey(AttrReplyBody)
	mcp := a.hasPrefix("mcp.") || a.strKey("error.type") == "tool_error"
	a2a := a.hasPrefix("a2a.")
	rpcSystem := a.str(fBinding)
	jsonrpcID := a.str(fJSONRPCID)
	if body == "" && !mcp && !a2a && jsonrpcID == "" && rpcSystem != "jsonrpc" && rpcSystem != "grpc" && a.strKey(attrs(fAgent)[0]) == "" {
		return outOther
	}

	// What the attributes say of the outcome.
	httpStatus, _, hasHTTP := a.integer(attrs(fHTTPStatus)...)
	grpcCode, hasGRPC := b.grpcCode(a, rpcSystem)
	errType := a.strKey("error.type")
	jcode, hasJSONRPC := jsonrpcCode(a, rpcSystem, mcp, httpStatus)
	taskState := strings.ToLower(a.strKey("a2a.task.state"))
	taskFailed := taskState == "failed" || taskState == "task_state_failed"
	failed := it.statusErr || errType != "" || (hasHTTP && httpStatus >= 400) || (hasGRPC && grpcCode != 0) || hasJSONRPC || taskFailed
	if it.isLog {
		failed = failed || it.severity >= severityError
	}
	if !failed && body == "" {
		return outOK
	}

	// The context, from attributes.
	*rec = parse.Record{GRPCCode: -1, RetryAfterMS: -1, FieldViolations: rec.FieldViolations[:0], Findings: rec.Findings[:0], Inferred: rec.Inferred[:0]}
	inf := func(f Field) { rec.Inferred = append(rec.Inferred, fieldName(f)) }
	set := func(dst *string, f Field, v string) {
		if v != "" {
			*dst = v
			inf(f)
		}
	}
	rec.Origin = parse.OriginOTLP
	rec.TraceID = b.hexID(b.trace[:], it.traceID, 16)
	rec.SpanID = b.hexID(b.span[:16], it.spanID, 8)
	rec.ObservedAtMS = int64(it.timeNS / 1e6)
	if rec.ObservedAtMS == 0 {
		rec.ObservedAtMS = kafkaTimeMS
	}
	set(&rec.SourceKind, fSourceKind, a.str(fSourceKind))
	if rec.SourceKind == "" {
		rec.SourceKind = b.hdrSourceKind
	}
	if rec.SourceKind == "" {
		switch {
		case it.isLog || it.kind == tracepb.Span_SPAN_KIND_SERVER:
			rec.SourceKind = "agent"
		case it.kind == tracepb.Span_SPAN_KIND_CLIENT:
			rec.SourceKind = "client"
		}
	}
	set(&rec.SourceID, fSourceID, text(a.findRes(attrs(fSourceID)[0])))
	if rec.SourceID == "" {
		rec.SourceID = b.hdrSourceID
	}
	set(&rec.SourceVersion, fSourceVersion, text(a.findRes(attrs(fSourceVersion)[0])))
	agentKeys := attrs(fAgent) // gen_ai.agent.name, service.name
	agent := a.strKey(agentKeys[0])
	if agent == "" && it.kind == tracepb.Span_SPAN_KIND_CLIENT {
		agent = a.strKey("server.address") // the peer: service.name is the caller here
	}
	if agent == "" {
		agent = a.strKey(agentKeys[1])
	}
	set(&rec.Agent, fAgent, agent)
	if rec.Agent == "" {
		rec.Agent = b.hdrAgent
	}
	set(&rec.Endpoint, fEndpoint, a.str(fEndpoint))
	set(&rec.Caller, fCaller, a.strKey(d.cfg.CallerAttribute))
	if rec.Caller == "" {
		rec.Caller = b.hdrCaller
	}
	set(&rec.Method, fMethod, a.str(fMethod))
	if n, _, ok := a.integer(attrs(fAttempt)...); ok && n >= 0 && n < 1<<16-1 {
		rec.Attempt = int(n) + 1
		inf(fAttempt)
	}
	set(&rec.JSONRPCID, fJSONRPCID, jsonrpcID)
	set(&rec.MessageID, fMessageID, a.str(fMessageID))
	set(&rec.TaskID, fTaskID, a.str(fTaskID))
	set(&rec.IdempotencyKey, fIdempotency, a.str(fIdempotency))
	rec.EventID = a.strKey(AttrEventID)
	if rec.EventID == "" {
		rec.EventID = b.eventID(rec, it)
	}

	// The reply: attached, or inferred from the codes.
	rep := parse.Reply{GRPCStatus: -1, ObservedAtMS: rec.ObservedAtMS}
	b.hdrs = b.hdrs[:0]
	for _, h := range textList(a.find(AttrReplyHeaders)) {
		if name, v, ok := strings.Cut(h, ":"); ok {
			b.hdrs = append(b.hdrs, parse.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(v)})
		}
	}
	inferred := body == ""
	if hasHTTP {
		rep.HTTPStatus = int(httpStatus)
	}
	if hasGRPC {
		rep.GRPCStatus = grpcCode
	}
	if ra := a.str(fRetryAfter); ra != "" && !hasHeader(b.hdrs, "Retry-After") {
		b.hdrs = append(b.hdrs, parse.Header{Name: "Retry-After", Value: ra})
		if inferred {
			inf(fRetryAfter)
		}
	}
	rep.Headers = b.hdrs
	switch {
	case !inferred:
		rep.Body = []byte(body)
		rep.Binding = bindingOf(rpcSystem, hasHTTP)
	case hasGRPC:
		rep.Binding = parse.BindingGRPC
		rep.GRPCMessage = it.message
		inf(fGRPCStatus)
	case errType == "tool_error":
		rep.Binding = parse.BindingJSONRPC
		rep.Body = b.synth(`{"jsonrpc":"2.0","id":null,"result":{"isError":true,"content":[{"type":"text","text":`, it.message, `}]}}`)
	case hasJSONRPC:
		rep.Binding = parse.BindingJSONRPC
		rep.Body = b.synth(`{"jsonrpc":"2.0","id":null,"error":{"code":`+strconv.FormatInt(jcode, 10)+`,"message":`, it.message, `}}`)
		inf(fJSONRPCCode)
	case taskFailed:
		rep.Binding = parse.BindingJSONRPC
		rep.Body = []byte(`{"jsonrpc":"2.0","id":null,"result":{"status":{"state":"TASK_STATE_FAILED"}}}`)
	case hasHTTP:
		rep.Binding = parse.BindingHTTP
	}
	if hasHTTP && inferred {
		inf(fHTTPStatus)
	}
	err := d.pd.DecodeReply(&rep, rec)
	b.derr = nil
	if err != nil {
		var de *parse.DecodeError
		if !errors.As(err, &de) {
			de = &parse.DecodeError{Reason: parse.ErrBadEvent, Path: "otlp", Offset: -1, Detail: "decoder returned an untyped error"}
		}
		if de.Reason == parse.ErrNotAnError {
			if inferred {
				// The codes were no error after all (a 2xx with an ERROR
				// status for another reason): not a failed reply.
				if !it.statusErr && errType == "" {
					return outOK
				}
			} else {
				return outOK // the attached body says success
			}
		}
		if !inferred || de.Reason != parse.ErrNotAnError {
			b.derr = de
			return outDead
		}
		// An ERROR status or error.type without a failing code: a
		// record of kind unknown, from the span alone.
		rep = parse.Reply{GRPCStatus: -1, ObservedAtMS: rec.ObservedAtMS}
		_ = d.pd.DecodeReply(&rep, rec)
	}
	if inferred {
		if !hasGRPC && !hasJSONRPC && errType != "tool_error" {
			// Nothing the attributes said names a binding but what
			// bindingOf reads: the decoder's guess from the made-up reply
			// is no evidence. MCP is JSON-RPC whatever the transport.
			rec.Binding = bindingOf(rpcSystem, hasHTTP)
			if mcp && rec.Binding == parse.BindingUnknown {
				rec.Binding = parse.BindingJSONRPC
			}
		}
		rec.Envelope = parse.EnvNone
		rec.Findings = rec.Findings[:0]
		if rec.Message == "" && it.message != "" {
			b.msg = parse.RedactString(it.message)
			rec.Message = b.msg
			inf(fMessage)
		}
	}
	if rec.Protocol == parse.ProtocolUnknown || rec.Protocol == "" {
		switch {
		case mcp:
			rec.Protocol = parse.ProtocolMCP
			inf(fProtocol)
		case a2a:
			rec.Protocol = parse.ProtocolA2A
			inf(fProtocol)
		}
	}
	return outError
}

// findRes reads a resource attribute only.
func (a attrSet) findRes(key string) *commonpb.AnyValue {
	for _, kv := range a.res {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// grpcCode reads the gRPC status code: rpc.grpc.status_code, or
// rpc.response.status_code (a number or a code name) when the system is grpc.
func (b *builder) grpcCode(a attrSet, system string) (int, bool) {
	keys := attrs(fGRPCStatus)
	if n, _, ok := a.integer(keys[0]); ok && n >= 0 && n <= 16 {
		return int(n), true
	}
	if system != "grpc" {
		return 0, false
	}
	v := a.strKey(keys[1])
	if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 16 {
		return n, true
	}
	for c := 0; c <= 16; c++ {
		if v != "" && parse.GRPCCodeName(c) == v {
			return c, true
		}
	}
	return 0, false
}

func bindingOf(system string, http bool) parse.Binding {
	switch {
	case system == "grpc":
		return parse.BindingGRPC
	case system == "jsonrpc":
		return parse.BindingJSONRPC
	case http:
		return parse.BindingHTTP
	}
	return parse.BindingUnknown
}

func hasHeader(hs []parse.Header, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// synth builds a reply body around msg as a JSON string.
func (b *builder) synth(head, msg, tail string) []byte {
	q, _ := json.Marshal(msg) // a string always marshals
	b.body = append(append(append(b.body[:0], head...), q...), tail...)
	return b.body
}

// hexID renders id (n bytes) as lowercase hex into dst, or "" when id is
// not n bytes or all zero.
func (b *builder) hexID(dst []byte, id []byte, n int) string {
	if len(id) != n {
		return ""
	}
	zero := true
	for _, c := range id {
		zero = zero && c == 0
	}
	if zero {
		return ""
	}
	hex.Encode(dst[:2*n], id)
	return string(dst[:2*n])
}

// eventID is a stable id for an item: the same span re-sent by a Collector
// gets the same one.
func (b *builder) eventID(rec *parse.Record, it *item) string {
	b.ev = append(b.ev[:0], "otlp-"...)
	if it.isLog {
		b.ev = append(b.ev, "log-"...)
	}
	b.ev = append(b.ev, rec.TraceID...)
	if rec.SpanID != "" {
		b.ev = append(b.ev, '-')
		b.ev = append(b.ev, rec.SpanID...)
	}
	if it.isLog || rec.TraceID == "" {
		b.ev = append(b.ev, '-')
		b.ev = strconv.AppendUint(b.ev, it.timeNS, 36)
		b.ev = append(b.ev, '-')
		b.ev = strconv.AppendUint(b.ev, hash64(it.message), 36)
	}
	return string(b.ev)
}

// hash64 is FNV-1a, to tell log records of one moment apart by their text.
func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// jsonrpcCode reads the JSON-RPC error code: rpc.response.status_code
// (unless the rpc system is grpc, where it is the gRPC code),
// rpc.jsonrpc.error_code, or error.type when it holds an integer that is a
// JSON-RPC code (negative, or on an MCP or JSON-RPC span) and not the HTTP
// status repeated.
func jsonrpcCode(a attrSet, system string, mcp bool, httpStatus int64) (int64, bool) {
	keys := attrs(fJSONRPCCode) // rpc.response.status_code, error.type, rpc.jsonrpc.error_code
	if system != "grpc" {
		if n, _, ok := a.integer(keys[0]); ok {
			return n, true
		}
	}
	if n, _, ok := a.integer(keys[2]); ok {
		return n, true
	}
	if n, _, ok := a.integer(keys[1]); ok && n != httpStatus && (n < 0 || mcp || system == "jsonrpc") {
		return n, true
	}
	return 0, false
}

// fieldName is the record field a Field names in Inferred: the first of a
// row that names several (retry_after_ms of "retry_after_ms, retry_after_source").
func fieldName(f Field) string {
	name, _, _ := strings.Cut(Fields[f].Field, ",")
	return name
}
