package otlpin

// The one declaration of how record fields map to OpenTelemetry: the
// decoder reads attributes through it (attr.go) and docs/otel.md's table is
// generated from it (doctable.go, held equal by TestOTelDocTable).

// Pinned conventions: the attribute names below are those of these
// releases. The GenAI names (mcp.*, a2a.*, gen_ai.*) are at Development
// stability and may still change.
const (
	SemconvVersion      = "v1.45.0" // open-telemetry/semantic-conventions
	SemconvGenAIVersion = "v0.1.0"  // open-telemetry/semantic-conventions-genai
)

// Attributes errtrail defines for producers that can attach the reply
// itself to the span (or log record); docs/otel.md documents them.
const (
	AttrReplyBody    = "errtrail.reply.body"    // string: the reply body as sent on the wire
	AttrReplyHeaders = "errtrail.reply.headers" // string array: "Name: value" reply headers (the allow-list applies)
	AttrEventID      = "errtrail.event_id"      // string: the producer's event id, when it has one
	AttrSourceKind   = "errtrail.source.kind"   // string: agent, gateway or client, overriding the span kind
)

// From says where a field's value comes from in OTLP.
type From string

const (
	FromAttr     From = "attribute"   // span (or log record) attributes, then the resource's, in Attrs' order
	FromResource From = "resource"    // resource attributes only
	FromSpan     From = "span"        // a field of the span or log record itself
	FromEvent    From = "event"       // the span's exception event
	FromReply    From = "reply"       // only from errtrail.reply.body / .headers, decoded as today
	FromDerived  From = "derived"     // computed by the decoder from the fields above
	FromPipeline From = "pipeline"    // set by ingest, not by the message's content
	FromNone     From = "not in OTLP" // OTLP cannot carry it; the record leaves it empty
)

// Mapping is one record field and where the OTLP input reads it.
type Mapping struct {
	Field string   // the record field (docs/record.md)
	From  From     // where the value comes from
	Attrs []string // attribute keys in precedence order (FromAttr, FromResource)
	Note  string   // how the value is read or converted; one line, no '|'
}

// Field indexes into Fields, for the decoder.
type Field int

// The fields the decoder reads from attributes, in Fields' order.
const (
	fEventID Field = iota
	fObservedAt
	fIngestedAt
	fKafka
	fSourceKind
	fSourceID
	fSourceVersion
	fAgent
	fEndpoint
	fCaller
	fMethod
	fAttempt
	fHTTPRequestID
	fJSONRPCID
	fMessageID
	fTaskID
	fTraceID
	fSpanID
	fOrigin
	fInferred
	fIdempotency
	fProtocol
	fBinding
	fEnvelope
	fHTTPStatus
	fGRPCStatus
	fJSONRPCCode
	fCode
	fReason
	fDomain
	fKind
	fTyped
	fRetryable
	fRetryAfter
	fLimit
	fScope
	fErrorID
	fRequestID
	fMessage
	fFieldViolations
	fFindings
	nFields
)

// Fields is the declaration: every record field, in docs/record.md's
// order, with the OpenTelemetry attributes it is read from.
var Fields = [nFields]Mapping{
	fEventID:         {"event_id", FromAttr, []string{AttrEventID}, "else otlp: + trace_id + span_id (a span), or + the log record's time and place; a Collector re-send keeps it, so the dedup window drops it"},
	fObservedAt:      {"observed_at", FromSpan, nil, "the span's end_time_unix_nano; a log record's time_unix_nano, else observed_time_unix_nano; else the Kafka timestamp"},
	fIngestedAt:      {"ingested_at", FromPipeline, nil, "when ingest stored the row"},
	fKafka:           {"kafka_topic, kafka_partition, kafka_offset, kafka_index", FromPipeline, nil, "kafka_index is the record's place among the message's spans (or log records), counting every one"},
	fSourceKind:      {"source_kind", FromAttr, []string{AttrSourceKind}, "else the Kafka header errtrail-source-kind, else the span kind: SERVER is agent, CLIENT is client; log records: agent"},
	fSourceID:        {"source_id", FromResource, []string{"service.instance.id"}, "else the Kafka header errtrail-source-id"},
	fSourceVersion:   {"source_version", FromResource, []string{"service.version"}, "the agent's version, for error groups' regressions"},
	fAgent:           {"agent", FromAttr, []string{"gen_ai.agent.name", "service.name"}, "on a CLIENT span server.address comes before service.name (the service is the caller there); else the Kafka header errtrail-agent"},
	fEndpoint:        {"endpoint", FromAttr, []string{"url.full"}, "kept as scheme, host and route"},
	fCaller:          {"caller", FromAttr, []string{"enduser.id"}, "the attribute is configurable (--otlp.caller-attribute; client.address is the other candidate); else the Kafka header errtrail-caller"},
	fMethod:          {"method", FromAttr, []string{"mcp.method.name", "a2a.method.name", "rpc.method"}, ""},
	fAttempt:         {"attempt", FromAttr, []string{"http.request.resend_count"}, "resend_count + 1"},
	fHTTPRequestID:   {"http_request_id", FromReply, nil, "the reply's X-Request-Id header in errtrail.reply.headers"},
	fJSONRPCID:       {"jsonrpc_id", FromAttr, []string{"jsonrpc.request.id", "rpc.jsonrpc.request_id"}, ""},
	fMessageID:       {"message_id", FromAttr, []string{"a2a.message.id"}, ""},
	fTaskID:          {"task_id", FromAttr, []string{"a2a.task.id"}, "a2a.task.state = failed makes a span without other error signal an error"},
	fTraceID:         {"trace_id", FromSpan, nil, "the span's (or log record's) trace_id, as 32 hex digits"},
	fSpanID:          {"span_id", FromSpan, nil, "the span's span_id (a log record's, when it has one)"},
	fOrigin:          {"origin", FromDerived, nil, "otlp"},
	fInferred:        {"inferred", FromDerived, nil, "the fields of this table read from attributes rather than from a reply body"},
	fIdempotency:     {"idempotency_key_hash", FromAttr, []string{"http.request.header.idempotency-key"}, "only its keyed hash is stored"},
	fProtocol:        {"protocol", FromDerived, nil, "mcp when an mcp.* attribute is present, a2a for a2a.*; else as the reply decodes"},
	fBinding:         {"binding", FromAttr, []string{"rpc.system.name", "rpc.system"}, "jsonrpc or grpc; http when only http.response.status_code tells"},
	fEnvelope:        {"envelope", FromReply, nil, "none when the record was inferred from attributes"},
	fHTTPStatus:      {"http_status", FromAttr, []string{"http.response.status_code"}, ""},
	fGRPCStatus:      {"grpc_status", FromAttr, []string{"rpc.grpc.status_code", "rpc.response.status_code"}, "rpc.response.status_code only when the rpc system is grpc (a code name or number)"},
	fJSONRPCCode:     {"jsonrpc_code", FromAttr, []string{"rpc.response.status_code", "error.type", "rpc.jsonrpc.error_code"}, "an integer value only; error.type = tool_error is an MCP tool result with isError"},
	fCode:            {"code", FromReply, nil, "symbolic codes travel only in the reply body"},
	fReason:          {"reason", FromReply, nil, ""},
	fDomain:          {"domain", FromReply, nil, ""},
	fKind:            {"kind", FromDerived, nil, "classified exactly as for a reply with these codes (docs/record.md)"},
	fTyped:           {"typed", FromDerived, nil, ""},
	fRetryable:       {"retryable, retryable_source", FromDerived, nil, ""},
	fRetryAfter:      {"retry_after_ms, retry_after_source", FromAttr, []string{"http.response.header.retry-after"}, "read as a Retry-After header (seconds or an HTTP date)"},
	fLimit:           {"limit", FromReply, nil, ""},
	fScope:           {"scope", FromReply, nil, ""},
	fErrorID:         {"error_id", FromReply, nil, ""},
	fRequestID:       {"request_id", FromReply, nil, ""},
	fMessage:         {"message", FromEvent, []string{"exception.message"}, "the exception event's exception.message, else the span status message, else a log record's body; redacted"},
	fFieldViolations: {"field_violations", FromReply, nil, ""},
	fFindings:        {"findings", FromReply, nil, "none for a record inferred from attributes: conformance needs the wire bytes"},
}

// Other attributes the decoder reads: they decide whether a span is an
// error and which protocol it speaks, but fill no field of their own.
var Signals = []Mapping{
	{"(error or success)", FromAttr, []string{"error.type"}, "present: the reply failed; with span status ERROR or a failing code, the span becomes a record"},
	{"(protocol)", FromAttr, []string{"mcp.protocol.version", "gen_ai.tool.name", "a2a.task.state", "server.address"}, "read for protocol detection and the agent; not stored on their own"},
	{"(reply)", FromAttr, []string{AttrReplyBody, AttrReplyHeaders}, "the reply as sent: decoded exactly as a raw reply, and it wins over every attribute above"},
}

// attrs returns the attribute keys of f.
func attrs(f Field) []string { return Fields[f].Attrs }
