package parse

// Protocol names the agent protocol whose error reply was decoded.
type Protocol string

const (
	ProtocolUnknown    Protocol = "unknown"
	ProtocolA2A        Protocol = "a2a"
	ProtocolAAP        Protocol = "aap"
	ProtocolMCP        Protocol = "mcp"
	ProtocolAgentRelay Protocol = "agentrelay"
)

// Binding names the transport binding the reply travelled on.
type Binding string

const (
	BindingUnknown Binding = ""
	BindingJSONRPC Binding = "jsonrpc"
	BindingHTTP    Binding = "http"
	BindingGRPC    Binding = "grpc"
)

// Envelope names the body shape that was decoded. The values are stable:
// they are stored in ClickHouse and used in dashboards.
type Envelope string

const (
	EnvNone          Envelope = "none"            // no usable body: decided from the status alone
	EnvJSONRPCError  Envelope = "jsonrpc_error"   // {"jsonrpc":"2.0","error":{code,message,data}}
	EnvRPCStatus     Envelope = "rpc_status"      // {"error":{code,status,message,details}} (A2A HTTP+JSON, AIP-193)
	EnvProblem       Envelope = "problem_json"    // RFC 9457 problem details
	EnvLegacyFlat    Envelope = "legacy_flat"     // A2A v0.3 flat {code,message,data} or {"error":"FQCN","message"}
	EnvAAPError      Envelope = "aap_error"       // bare aap.error body (PAP binding)
	EnvMCPToolResult Envelope = "mcp_tool_result" // JSON-RPC result with isError:true
	EnvRelayFlat     Envelope = "relay_flat"      // AgentRelay flat REST error
	EnvRelayFrame    Envelope = "relay_frame"     // Agent Relay protocol ERROR / NACK / BUSY envelope
	EnvGRPCStatus    Envelope = "grpc_status"     // grpc-status trailers (+ grpc-status-details-bin)
	EnvTaskFailed    Envelope = "task_failed"     // a streamed task that ended TASK_STATE_FAILED
	EnvJSONString    Envelope = "json_string"     // a bare JSON string body (a2a-dotnet previews)
	EnvUnrecognized  Envelope = "unrecognized"    // valid JSON of no known error shape
)

// Kind is the verdict class every downstream consumer (alerter, dashboards)
// groups on. See docs/record.md for the exact rules.
type Kind string

const (
	KindQuota       Kind = "quota"       // this caller is over its limit
	KindOverload    Kind = "overload"    // the agent fails for everyone
	KindInvalid     Kind = "invalid"     // the request is wrong; fix it before retrying
	KindAuth        Kind = "auth"        // authentication or authorization
	KindNotFound    Kind = "not_found"   // the named thing does not exist (for this caller)
	KindConflict    Kind = "conflict"    // state or idempotency conflict
	KindUnsupported Kind = "unsupported" // capability, version, extension, content type
	KindInternal    Kind = "internal"    // the agent failed while serving this request
	KindUnknown     Kind = "unknown"     // no typed reason and no status that tells
)

// Origin names the form a record was decoded from. The values are stored
// in ClickHouse (error_traces.origin).
type Origin string

const (
	OriginEvent Origin = "event" // event JSON of the contract (docs/event-contract.md)
	OriginRaw   Origin = "raw"   // a raw HTTP/1.1 response or gRPC reply text form with errtrail-* Kafka headers
	OriginOTLP  Origin = "otlp"  // an OpenTelemetry span or log record (package otlp)
)

// Tri is a three-valued boolean: unknown, true or false.
type Tri int8

const (
	TriUnknown Tri = 0
	TriTrue    Tri = 1
	TriFalse   Tri = 2
)

// Source tells where a derived value came from.
type Source string

const (
	SrcNone        Source = ""
	SrcReply       Source = "reply"         // the reply said so explicitly
	SrcDefault     Source = "default"       // the protocol's documented default for the code
	SrcRetryInfo   Source = "retry_info"    // google.rpc.RetryInfo.retryDelay
	SrcRetryAfter  Source = "retry_after"   // Retry-After header
	SrcRateLimit   Source = "ratelimit"     // RateLimit header (draft) reset
	SrcXRateLimit  Source = "x_ratelimit"   // X-RateLimit-Reset header
	SrcAAPDetails  Source = "aap_details"   // aap.error details.retry_after_ms / _seconds
	SrcRelayDetail Source = "relay_details" // AgentRelay details.retry_after_ms
)

// FieldViolation names one invalid field of the request: where and which
// constraint. The submitted value is never kept.
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description,omitempty"`
}

// Record is the normalized form of one error reply.
//
// Strings in a Record returned by a Decoder are borrowed: they point into the
// Decoder's scratch space or into the input bytes, and are valid only until
// the next call on the same Decoder and while the input is unchanged. Use
// Clone to keep a Record longer.
type Record struct {
	// Context of the exchange, taken from the event (not from the reply).
	EventID      string
	ObservedAtMS int64
	SourceKind   string
	SourceID     string
	// SourceVersion is the version of the agent (or gateway) that
	// published the event: source.version, or the errtrail-source-version
	// header of a raw form; "" when it named none. Versions are compared
	// as versions (groups.CompareVersions), never as strings.
	SourceVersion  string
	Agent          string
	Endpoint       string
	Caller         string
	Method         string
	Attempt        int
	HTTPRequestID  string
	JSONRPCID      string
	MessageID      string
	TaskID         string
	IdempotencyKey string // as the event named it; sanitize clears it once hashed
	// IdempotencyHash is the keyed 64-bit hash of the idempotency key
	// (redact.Redactor.Hash64), 0 when there was none: attempts of one
	// request compare equal by it, and the key itself is never kept.
	IdempotencyHash uint64
	// TraceID and SpanID are the W3C trace context of the request (32 and
	// 16 lowercase hex digits), empty when none was given or the value did
	// not fit that grammar.
	TraceID string
	SpanID  string
	// Origin is the form the record was decoded from; Inferred names the
	// record fields (docs/otel.md names) that were not read from the reply
	// or the event but inferred from OpenTelemetry attributes, in the
	// order they were set. Both are set by the decoder that read the
	// message.
	Origin   Origin
	Inferred []string

	// What was decoded.
	Protocol    Protocol
	Binding     Binding
	Envelope    Envelope
	HTTPStatus  int  // 0 when unknown
	GRPCCode    int  // -1 when unknown
	JSONRPCCode int  // meaningful when HasJSONRPC
	HasJSONRPC  bool // the reply carried a JSON-RPC error code (0 is a code some SDKs send)
	Code        string
	Reason      string
	Domain      string
	Kind        Kind
	Typed       bool // a typed reason (ErrorInfo, aap.error, symbol...) decided the kind

	Retryable        Tri
	RetryableSource  Source
	RetryAfterMS     int64 // -1 when no delay was given
	RetryAfterSource Source
	Limit            string
	Scope            string

	ErrorID   string
	RequestID string
	Message   string // redacted

	FieldViolations []FieldViolation
	Findings        []Finding
}

// GRPCStatusName returns the canonical google.rpc.Code name, or "".
func (r *Record) GRPCStatusName() string {
	if r.GRPCCode < 0 {
		return ""
	}
	return GRPCCodeName(r.GRPCCode)
}

// reset clears r keeping the capacity of its slices.
func (r *Record) reset() {
	fv, fi, inf := r.FieldViolations[:0], r.Findings[:0], r.Inferred[:0]
	// Cleared in place, then the few fields set: a literal with values
	// would be built on the stack and copied whole.
	*r = Record{}
	r.GRPCCode, r.RetryAfterMS = -1, -1
	r.FieldViolations, r.Findings, r.Inferred = fv, fi, inf
}

// Clone returns a deep copy of r that owns all its memory.
func (r *Record) Clone() *Record {
	c := *r
	c.EventID = cloneStr(r.EventID)
	c.SourceKind = cloneStr(r.SourceKind)
	c.SourceID = cloneStr(r.SourceID)
	c.SourceVersion = cloneStr(r.SourceVersion)
	c.Agent = cloneStr(r.Agent)
	c.Endpoint = cloneStr(r.Endpoint)
	c.Caller = cloneStr(r.Caller)
	c.Method = cloneStr(r.Method)
	c.HTTPRequestID = cloneStr(r.HTTPRequestID)
	c.JSONRPCID = cloneStr(r.JSONRPCID)
	c.MessageID = cloneStr(r.MessageID)
	c.TaskID = cloneStr(r.TaskID)
	c.IdempotencyKey = cloneStr(r.IdempotencyKey)
	c.Code = cloneStr(r.Code)
	c.Reason = cloneStr(r.Reason)
	c.Domain = cloneStr(r.Domain)
	c.Limit = cloneStr(r.Limit)
	c.Scope = cloneStr(r.Scope)
	c.ErrorID = cloneStr(r.ErrorID)
	c.RequestID = cloneStr(r.RequestID)
	c.Message = cloneStr(r.Message)
	c.FieldViolations = make([]FieldViolation, len(r.FieldViolations))
	for i, v := range r.FieldViolations {
		c.FieldViolations[i] = FieldViolation{cloneStr(v.Field), cloneStr(v.Description)}
	}
	c.Findings = append([]Finding(nil), r.Findings...)
	c.TraceID = cloneStr(r.TraceID)
	c.SpanID = cloneStr(r.SpanID)
	c.Inferred = make([]string, len(r.Inferred))
	for i, v := range r.Inferred {
		c.Inferred[i] = cloneStr(v)
	}
	return &c
}

func cloneStr(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}

// addFinding records f once.
func (r *Record) addFinding(f Finding) {
	for _, g := range r.Findings {
		if g == f {
			return
		}
	}
	r.Findings = append(r.Findings, f)
}

// HasFinding reports whether f was recorded.
func (r *Record) HasFinding(f Finding) bool {
	for _, g := range r.Findings {
		if g == f {
			return true
		}
	}
	return false
}
