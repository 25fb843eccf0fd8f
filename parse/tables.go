package parse

// The protocol tables below are data: one row per code holding everything
// the decoder knows about it, and lookups that are views derived from the
// rows (tables_test.go checks that they agree). Elsewhere a code is named
// only where one finding is about that one code (classify.go's findings) or
// where a legacy spelling is rewritten to its current one (legacy.go).

// gRPC codes: one row per google.rpc.Code (googleapis google/rpc/code.proto),
// keyed by its number. Every other view (GRPCCodeName, grpcCodeByName, the
// kind a bare status implies) reads these rows.

// gRPC code numbers, the keys of grpcCodes.
const (
	grpcOK                 = 0
	grpcCancelled          = 1
	grpcUnknown            = 2
	grpcInvalidArgument    = 3
	grpcDeadlineExceeded   = 4
	grpcNotFound           = 5
	grpcAlreadyExists      = 6
	grpcPermissionDenied   = 7
	grpcResourceExhausted  = 8
	grpcFailedPrecondition = 9
	grpcAborted            = 10
	grpcOutOfRange         = 11
	grpcUnimplemented      = 12
	grpcInternal           = 13
	grpcUnavailable        = 14
	grpcDataLoss           = 15
	grpcUnauthenticated    = 16
)

// grpcCode is everything errtrail knows about one google.rpc.Code. A bare
// status carries no retry default of its own: its retry follows the kind it
// implies (kindRetry), so that a header that changes the kind (Envoy's
// x-envoy-overloaded) changes the retry with it.
type grpcCode struct {
	name string // canonical name: the "status" member of a Status JSON body
	http int    // canonical HTTP status (code.proto, "HTTP Mapping")
	kind Kind   // what a bare status implies when no typed reason says more
	desc string
}

// grpcCodes is the google.rpc.Code table. RESOURCE_EXHAUSTED is deliberately
// not quota: gRPC libraries raise it locally (message too large), so only the
// limiter's ErrorInfo makes it quota (seed 002).
var grpcCodes = [...]grpcCode{
	grpcOK:                 {"OK", 200, KindUnknown, "not an error"},
	grpcCancelled:          {"CANCELLED", 499, KindUnknown, "cancelled, typically by the caller"},
	grpcUnknown:            {"UNKNOWN", 500, KindUnknown, "unknown error, e.g. from another error space"},
	grpcInvalidArgument:    {"INVALID_ARGUMENT", 400, KindInvalid, "the request is invalid whatever the system state"},
	grpcDeadlineExceeded:   {"DEADLINE_EXCEEDED", 504, KindOverload, "the deadline expired before the operation completed"},
	grpcNotFound:           {"NOT_FOUND", 404, KindNotFound, "a requested entity was not found"},
	grpcAlreadyExists:      {"ALREADY_EXISTS", 409, KindConflict, "the entity to create already exists"},
	grpcPermissionDenied:   {"PERMISSION_DENIED", 403, KindAuth, "the caller may not do this"},
	grpcResourceExhausted:  {"RESOURCE_EXHAUSTED", 429, KindUnknown, "a quota or a local resource ran out"},
	grpcFailedPrecondition: {"FAILED_PRECONDITION", 400, KindInvalid, "the system is not in the state the operation needs"},
	grpcAborted:            {"ABORTED", 409, KindConflict, "aborted by a concurrency conflict"},
	grpcOutOfRange:         {"OUT_OF_RANGE", 400, KindInvalid, "past the valid range"},
	grpcUnimplemented:      {"UNIMPLEMENTED", 501, KindUnsupported, "not implemented or not supported"},
	grpcInternal:           {"INTERNAL", 500, KindInternal, "an invariant of the server broke"},
	grpcUnavailable:        {"UNAVAILABLE", 503, KindOverload, "the service is unavailable for now"},
	grpcDataLoss:           {"DATA_LOSS", 500, KindInternal, "unrecoverable data loss or corruption"},
	grpcUnauthenticated:    {"UNAUTHENTICATED", 401, KindAuth, "no valid credentials"},
}

// grpcCodeOf returns the row of a code number, or false outside 0..16.
func grpcCodeOf(c int) (*grpcCode, bool) {
	if c < 0 || c >= len(grpcCodes) {
		return nil, false
	}
	return &grpcCodes[c], true
}

// GRPCCodeName returns the canonical name of a google.rpc.Code, or "" for a
// number outside 0..16.
func GRPCCodeName(c int) string {
	if g, ok := grpcCodeOf(c); ok {
		return g.name
	}
	return ""
}

// grpcCodeByName returns the code number for a canonical name, or -1.
func grpcCodeByName(name []byte) int {
	for i := range grpcCodes {
		if string(name) == grpcCodes[i].name {
			return i
		}
	}
	return -1
}

// errSpec is one row of a protocol's error table.
type errSpec struct {
	code      string // the protocol's symbolic code
	kind      Kind
	retryable Tri // documented default; TriUnknown when the table gives none
}

// a2aError is one A2A error (or one of the standard JSON-RPC codes as A2A
// SDKs report them), with everything the classifier needs about it.
type a2aError struct {
	reason   string   // ErrorInfo reason (domain a2a-protocol.org), in the spec's rule form
	variants []string // other reasons SDKs send for the same error (REFERENCE §7.11)
	jsonrpc  int      // JSON-RPC code
	byNumber bool     // the code alone names this error once the reply is known to be A2A
	kind     Kind
	retry    Tri // default when the reply does not say
	desc     string
	// http and grpc are the error's status in the HTTP+JSON and gRPC
	// bindings (spec §5.4 as of v1.0.1, seed 003: "HTTP answers 400 for
	// seven, and gRPC answers FAILED_PRECONDITION for six"); http is 0 where
	// the spec maps none (the standard JSON-RPC codes, SDK-only codes).
	http, grpc int
}

// a2aErrors is the A2A table: spec §5.4/§9.5 (the reason rule of §9.5,
// §10.6, §11.6) and the SDK variants of REFERENCE §7.11. -32000 is JSON-RPC's
// generic server-error code (REFERENCE §7.3), so only a2a-go's reason
// SERVER_ERROR names it, never the number.
var a2aErrors = [...]a2aError{
	{"TASK_NOT_FOUND", nil, -32001, true, KindNotFound, TriFalse, "TaskNotFoundError", 404, grpcNotFound},
	{"TASK_NOT_CANCELABLE", nil, -32002, true, KindConflict, TriFalse, "TaskNotCancelableError", 400, grpcFailedPrecondition},
	{"PUSH_NOTIFICATION_NOT_SUPPORTED", nil, -32003, true, KindUnsupported, TriFalse, "PushNotificationNotSupportedError", 400, grpcFailedPrecondition},
	{"UNSUPPORTED_OPERATION", nil, -32004, true, KindUnsupported, TriFalse, "UnsupportedOperationError", 400, grpcFailedPrecondition},
	{"CONTENT_TYPE_NOT_SUPPORTED", []string{"UNSUPPORTED_CONTENT_TYPE" /* a2a-rs REST */}, -32005, true, KindUnsupported, TriFalse, "ContentTypeNotSupportedError", 400, grpcInvalidArgument},
	{"INVALID_AGENT_RESPONSE", nil, -32006, true, KindInternal, TriTrue, "InvalidAgentResponseError", 500, grpcInternal},
	{"EXTENDED_AGENT_CARD_NOT_CONFIGURED", nil, -32007, true, KindUnsupported, TriFalse, "ExtendedAgentCardNotConfiguredError", 400, grpcFailedPrecondition},
	{"EXTENSION_SUPPORT_REQUIRED", nil, -32008, true, KindUnsupported, TriFalse, "ExtensionSupportRequiredError", 400, grpcFailedPrecondition},
	{"VERSION_NOT_SUPPORTED", nil, -32009, true, KindUnsupported, TriFalse, "VersionNotSupportedError", 400, grpcFailedPrecondition},
	{"PARSE_ERROR", []string{"JSON_PARSE" /* a2a-java */}, -32700, true, KindInvalid, TriFalse, "JSONParseError", 0, 0},
	{"INVALID_REQUEST", nil, -32600, true, KindInvalid, TriFalse, "InvalidRequestError", 0, 0},
	{"METHOD_NOT_FOUND", nil, -32601, true, KindUnsupported, TriFalse, "MethodNotFoundError", 0, 0},
	{"INVALID_PARAMS", nil, -32602, true, KindInvalid, TriFalse, "InvalidParamsError", 0, 0},
	{"INTERNAL_ERROR", []string{"INTERNAL" /* a2a-java */, "UNKNOWN_ERROR" /* a2a-python fallback */}, -32603, true, KindInternal, TriTrue, "InternalError", 0, 0},
	{"SERVER_ERROR", nil, -32000, false, KindInternal, TriTrue, "a2a-go ErrServerError", 0, 0},
	{"UNAUTHENTICATED", nil, -31401, true, KindAuth, TriFalse, "a2a-go authentication error (code outside the reserved range)", 0, 0},
	{"UNAUTHORIZED", nil, -31403, true, KindAuth, TriFalse, "a2a-go authorization error (code outside the reserved range)", 0, 0},
}

// Views of a2aErrors, built once from its rows.
var (
	// a2aByReason finds an error by any of its reasons, the variants included.
	a2aByReason = func() map[string]*a2aError {
		m := make(map[string]*a2aError)
		for i := range a2aErrors {
			e := &a2aErrors[i]
			m[e.reason] = e
			for _, v := range e.variants {
				m[v] = e
			}
		}
		return m
	}()
	// a2aByNumber finds an error by its JSON-RPC code. It is used only when
	// the reply is known to be A2A and carries no ErrorInfo.
	a2aByNumber = func() map[int]*a2aError {
		m := make(map[int]*a2aError)
		for i := range a2aErrors {
			if e := &a2aErrors[i]; e.byNumber {
				m[e.jsonrpc] = e
			}
		}
		return m
	}()
)

// aapCode is one AAP error code.
type aapCode struct {
	kind       Kind
	retry      Tri  // default when the payload's retryable is absent
	http       int  // PAP's HTTP status (seed 000); 0 where the seed maps none
	validation bool // a validation error: must carry details.errors[]
	// jsonrpc is the A2A numeric mapping of seed 000's code reference; 0
	// for a code that is not in seed 000's table (an older version's).
	jsonrpc int
}

// aapCodes is the union of the AAP v3.0 table (seed 000) and the public v1.x
// tables (REFERENCE §6a), keyed by the payload's code. The JSON-RPC numbers
// are seed 000's (v1.x numbered some codes differently): the payload's code
// decides the kind, the number only raises aap_jsonrpc_code_mismatch.
var aapCodes = map[string]aapCode{
	"UNSUPPORTED_SKILL":            {KindUnsupported, TriFalse, 404, false, -32602},
	"UNSUPPORTED_FILTER":           {KindInvalid, TriFalse, 422, true, -32602},
	"UNSUPPORTED_SORT":             {KindInvalid, TriFalse, 422, true, -32602},
	"INVALID_CURSOR":               {KindInvalid, TriFalse, 422, false, -32602},
	"SCHEMA_VALIDATION_FAILED":     {KindInvalid, TriFalse, 422, true, -32602},
	"MISSING_REQUIRED_FIELD":       {KindInvalid, TriFalse, 422, true, -32602},
	"INVALID_CONDITION":            {KindInvalid, TriFalse, 422, true, -32602},
	"DEALER_NOT_FOUND":             {KindNotFound, TriFalse, 404, false, -32000},
	"VEHICLE_NOT_FOUND":            {KindNotFound, TriFalse, 404, false, -32000},
	"VEHICLE_UNAVAILABLE":          {KindConflict, TriFalse, 409, false, -32000},
	"CONTACT_CONSENT_REQUIRED":     {KindAuth, TriFalse, 403, false, -32000},
	"INVALID_CONSENT":              {KindAuth, TriFalse, 403, false, -32000},
	"APPOINTMENT_TIME_UNAVAILABLE": {KindConflict, TriFalse, 409, false, -32000},
	"IDEMPOTENCY_CONFLICT":         {KindConflict, TriFalse, 409, false, -32000},
	"RATE_LIMITED":                 {KindQuota, TriTrue, 429, false, -32000},
	"INTERNAL_ERROR":               {KindInternal, TriTrue, 500, false, -32603},
	"AUTH_REQUIRED":                {KindAuth, TriFalse, 0, false, 0}, // v0.1 only: not in seed 000's table
}

// relaySymbols is the AgentRelay table (seed 004): symbol → JSON-RPC code,
// HTTP status, kind, retry default ("Do not retry on 4xx errors").
var relaySymbols = map[string]relayErr{
	"parse_error":               {-32700, 400, KindInvalid, TriFalse},
	"invalid_request":           {-32600, 400, KindInvalid, TriFalse},
	"method_not_found":          {-32601, 404, KindUnsupported, TriFalse},
	"invalid_params":            {-32602, 400, KindInvalid, TriFalse},
	"unauthenticated":           {-32001, 401, KindAuth, TriFalse},
	"forbidden":                 {-32002, 403, KindAuth, TriFalse},
	"rate_limited":              {-32003, 429, KindQuota, TriTrue},
	"recipient_not_found":       {-32004, 404, KindNotFound, TriFalse},
	"not_a_participant":         {-32005, 403, KindAuth, TriFalse},
	"thread_not_found":          {-32006, 404, KindNotFound, TriFalse},
	"thread_terminal":           {-32007, 409, KindConflict, TriFalse},
	"invalid_transition":        {-32008, 409, KindConflict, TriFalse},
	"not_authorized_transition": {-32009, 403, KindAuth, TriFalse},
	"state_changed":             {-32010, 409, KindConflict, TriTrue},
	"duplicate_idempotency_key": {-32011, 409, KindConflict, TriFalse},
	"invalid_intent_payload":    {-32012, 400, KindInvalid, TriFalse},
	"teammate_blocked":          {-32013, 403, KindAuth, TriFalse},
	"internal":                  {-32099, 500, KindInternal, TriTrue},
	// Agent Relay protocol frames (REFERENCE §6b): ERROR and NACK codes, BUSY.
	"BAD_REQUEST":          {0, 0, KindInvalid, TriFalse},
	"UNAUTHORIZED":         {0, 0, KindAuth, TriFalse},
	"NOT_FOUND":            {0, 0, KindNotFound, TriFalse},
	"INTERNAL":             {0, 0, KindInternal, TriTrue},
	"RESUME_TOO_OLD":       {0, 0, KindConflict, TriFalse},
	"DUPLICATE_CONNECTION": {0, 0, KindConflict, TriFalse},
	"BUSY":                 {0, 0, KindOverload, TriTrue},
	"INVALID":              {0, 0, KindInvalid, TriFalse},
	"FORBIDDEN":            {0, 0, KindAuth, TriFalse},
	"STALE":                {0, 0, KindConflict, TriFalse},
}

type relayErr struct {
	jsonrpc int
	http    int
	kind    Kind
	retry   Tri
}

// limiterReason reports the kind of an ErrorInfo reason (any domain but
// a2a-protocol.org) that names a rate limiter's or an overloaded agent's
// decision (seed 002), or one of the common variants seen from gateways.
// A switch rather than a map: most reasons are looked up here, and the
// compiled switch compares the length first.
func limiterReason(reason string) (Kind, bool) {
	switch reason {
	case "RATE_LIMIT_EXCEEDED", "RATE_LIMITED", "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED", "TOO_MANY_REQUESTS":
		return KindQuota, true
	case "AGENT_OVERLOADED", "OVERLOADED", "SERVICE_UNAVAILABLE":
		return KindOverload, true
	}
	return KindUnknown, false
}

// mcpCodes are MCP protocol error codes (REFERENCE §4a) that are not the five
// standard JSON-RPC codes.
var mcpCodes = map[int]errSpec{
	-32002: {"RESOURCE_NOT_FOUND", KindNotFound, TriFalse},
	-32042: {"URL_ELICITATION_REQUIRED", KindAuth, TriFalse},
	-32020: {"HEADER_MISMATCH", KindInvalid, TriFalse},
	-32021: {"MISSING_REQUIRED_CLIENT_CAPABILITY", KindUnsupported, TriFalse},
	-32022: {"UNSUPPORTED_PROTOCOL_VERSION", KindUnsupported, TriFalse},
}

// httpKind is the kind an HTTP status implies when nothing typed says more.
// 429 alone is quota (the seeds make it the limiter's status). 500 alone is
// internal, never quota: the agent says it failed, though a bare 500 cannot
// be told from a crash (seed 002), so the reply also gets the untyped_5xx
// finding. 502 and the other 5xx not named below are unknown.
func httpKind(status int) Kind {
	switch {
	case status == 429:
		return KindQuota
	case status == 500:
		return KindInternal
	case status == 503, status == 504:
		return KindOverload
	case status == 401, status == 403, status == 407:
		return KindAuth
	case status == 404, status == 410:
		return KindNotFound
	case status == 409, status == 412:
		return KindConflict
	case status == 405, status == 406, status == 415, status == 501, status == 505:
		return KindUnsupported
	case status == 502:
		return KindUnknown
	case status >= 400 && status < 500:
		return KindInvalid
	default:
		return KindUnknown
	}
}
