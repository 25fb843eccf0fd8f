package parse

// The protocol tables below are data: one entry per code, one lookup each.
// No other file matches protocol codes by string.

// grpcCodes holds the google.rpc.Code names and canonical HTTP statuses
// (googleapis google/rpc/code.proto, "HTTP Mapping").
var grpcCodes = [...]struct {
	name string
	http int
}{
	{"OK", 200}, {"CANCELLED", 499}, {"UNKNOWN", 500}, {"INVALID_ARGUMENT", 400},
	{"DEADLINE_EXCEEDED", 504}, {"NOT_FOUND", 404}, {"ALREADY_EXISTS", 409},
	{"PERMISSION_DENIED", 403}, {"RESOURCE_EXHAUSTED", 429}, {"FAILED_PRECONDITION", 400},
	{"ABORTED", 409}, {"OUT_OF_RANGE", 400}, {"UNIMPLEMENTED", 501}, {"INTERNAL", 500},
	{"UNAVAILABLE", 503}, {"DATA_LOSS", 500}, {"UNAUTHENTICATED", 401},
}

// gRPC code numbers used by the classifier.
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

// GRPCCodeName returns the canonical name of a google.rpc.Code, or "" for a
// number outside 0..16.
func GRPCCodeName(c int) string {
	if c < 0 || c >= len(grpcCodes) {
		return ""
	}
	return grpcCodes[c].name
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

// grpcKind is the kind a bare gRPC status implies when no typed reason says more.
// RESOURCE_EXHAUSTED is deliberately not quota: gRPC libraries raise it
// locally (message too large), so only the limiter's ErrorInfo makes it quota.
var grpcKind = [...]Kind{
	grpcOK: KindUnknown, grpcCancelled: KindUnknown, grpcUnknown: KindUnknown,
	grpcInvalidArgument: KindInvalid, grpcDeadlineExceeded: KindOverload, grpcNotFound: KindNotFound,
	grpcAlreadyExists: KindConflict, grpcPermissionDenied: KindAuth, grpcResourceExhausted: KindUnknown,
	grpcFailedPrecondition: KindInvalid, grpcAborted: KindConflict, grpcOutOfRange: KindInvalid,
	grpcUnimplemented: KindUnsupported, grpcInternal: KindInternal, grpcUnavailable: KindOverload,
	grpcDataLoss: KindInternal, grpcUnauthenticated: KindAuth,
}

// errSpec is one row of a protocol's error table.
type errSpec struct {
	code      string // the protocol's symbolic code
	kind      Kind
	retryable Tri // documented default; TriUnknown when the table gives none
}

// a2aErrors maps A2A ErrorInfo reasons (domain a2a-protocol.org) to their
// error, JSON-RPC code and kind. Reason strings per spec §9.5/§10.6/§11.6 and
// the SDK variants of REFERENCE §7.11.
var a2aReasons = map[string]a2aErr{
	"TASK_NOT_FOUND":                     {-32001, KindNotFound, TriFalse},
	"TASK_NOT_CANCELABLE":                {-32002, KindConflict, TriFalse},
	"PUSH_NOTIFICATION_NOT_SUPPORTED":    {-32003, KindUnsupported, TriFalse},
	"UNSUPPORTED_OPERATION":              {-32004, KindUnsupported, TriFalse},
	"CONTENT_TYPE_NOT_SUPPORTED":         {-32005, KindUnsupported, TriFalse},
	"UNSUPPORTED_CONTENT_TYPE":           {-32005, KindUnsupported, TriFalse}, // a2a-rs REST
	"INVALID_AGENT_RESPONSE":             {-32006, KindInternal, TriTrue},
	"EXTENDED_AGENT_CARD_NOT_CONFIGURED": {-32007, KindUnsupported, TriFalse},
	"EXTENSION_SUPPORT_REQUIRED":         {-32008, KindUnsupported, TriFalse},
	"VERSION_NOT_SUPPORTED":              {-32009, KindUnsupported, TriFalse},
	"PARSE_ERROR":                        {-32700, KindInvalid, TriFalse},
	"JSON_PARSE":                         {-32700, KindInvalid, TriFalse},
	"INVALID_REQUEST":                    {-32600, KindInvalid, TriFalse},
	"METHOD_NOT_FOUND":                   {-32601, KindUnsupported, TriFalse},
	"INVALID_PARAMS":                     {-32602, KindInvalid, TriFalse},
	"INTERNAL_ERROR":                     {-32603, KindInternal, TriTrue},
	"INTERNAL":                           {-32603, KindInternal, TriTrue},
	"UNKNOWN_ERROR":                      {-32603, KindInternal, TriTrue},
	"SERVER_ERROR":                       {-32000, KindInternal, TriTrue},
	"UNAUTHENTICATED":                    {-31401, KindAuth, TriFalse},
	"UNAUTHORIZED":                       {-31403, KindAuth, TriFalse},
}

type a2aErr struct {
	jsonrpc   int
	kind      Kind
	retryable Tri
}

// a2aCodes maps the JSON-RPC codes of A2A errors and the five standard codes to
// the reason-form name. They are used only when the reply is known to be A2A
// and carries no ErrorInfo.
var a2aCodes = map[int]string{
	-32001: "TASK_NOT_FOUND", -32002: "TASK_NOT_CANCELABLE", -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	-32004: "UNSUPPORTED_OPERATION", -32005: "CONTENT_TYPE_NOT_SUPPORTED", -32006: "INVALID_AGENT_RESPONSE",
	-32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32008: "EXTENSION_SUPPORT_REQUIRED",
	-32009: "VERSION_NOT_SUPPORTED", -32700: "PARSE_ERROR", -32600: "INVALID_REQUEST",
	-32601: "METHOD_NOT_FOUND", -32602: "INVALID_PARAMS", -32603: "INTERNAL_ERROR",
	-31401: "UNAUTHENTICATED", -31403: "UNAUTHORIZED",
}

// aapCodes is the union of the AAP v3.0 table (seed 000) and the public v1.x
// tables (REFERENCE §6a). The numbers differ between versions; the payload's
// code is what decides.
var aapCodes = map[string]errSpec{
	"UNSUPPORTED_SKILL":            {"UNSUPPORTED_SKILL", KindUnsupported, TriFalse},
	"UNSUPPORTED_FILTER":           {"UNSUPPORTED_FILTER", KindInvalid, TriFalse},
	"UNSUPPORTED_SORT":             {"UNSUPPORTED_SORT", KindInvalid, TriFalse},
	"INVALID_CURSOR":               {"INVALID_CURSOR", KindInvalid, TriFalse},
	"SCHEMA_VALIDATION_FAILED":     {"SCHEMA_VALIDATION_FAILED", KindInvalid, TriFalse},
	"MISSING_REQUIRED_FIELD":       {"MISSING_REQUIRED_FIELD", KindInvalid, TriFalse},
	"INVALID_CONDITION":            {"INVALID_CONDITION", KindInvalid, TriFalse},
	"DEALER_NOT_FOUND":             {"DEALER_NOT_FOUND", KindNotFound, TriFalse},
	"VEHICLE_NOT_FOUND":            {"VEHICLE_NOT_FOUND", KindNotFound, TriFalse},
	"VEHICLE_UNAVAILABLE":          {"VEHICLE_UNAVAILABLE", KindConflict, TriFalse},
	"CONTACT_CONSENT_REQUIRED":     {"CONTACT_CONSENT_REQUIRED", KindAuth, TriFalse},
	"INVALID_CONSENT":              {"INVALID_CONSENT", KindAuth, TriFalse},
	"APPOINTMENT_TIME_UNAVAILABLE": {"APPOINTMENT_TIME_UNAVAILABLE", KindConflict, TriFalse},
	"IDEMPOTENCY_CONFLICT":         {"IDEMPOTENCY_CONFLICT", KindConflict, TriFalse},
	"RATE_LIMITED":                 {"RATE_LIMITED", KindQuota, TriTrue},
	"INTERNAL_ERROR":               {"INTERNAL_ERROR", KindInternal, TriTrue},
	"AUTH_REQUIRED":                {"AUTH_REQUIRED", KindAuth, TriFalse}, // v0.1 only
}

// aapValidation lists the AAP codes that must carry details.errors[].
var aapValidation = map[string]bool{
	"SCHEMA_VALIDATION_FAILED": true, "MISSING_REQUIRED_FIELD": true, "INVALID_CONDITION": true,
	"UNSUPPORTED_FILTER": true, "UNSUPPORTED_SORT": true,
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

// limiterReasons are ErrorInfo reasons (any domain but a2a-protocol.org) that
// name a rate limiter's or an overloaded agent's decision (seed 002) and the
// common variants seen from gateways.
var limiterReasons = map[string]Kind{
	"RATE_LIMIT_EXCEEDED": KindQuota,
	"RATE_LIMITED":        KindQuota,
	"QUOTA_EXCEEDED":      KindQuota,
	"RESOURCE_EXHAUSTED":  KindQuota,
	"TOO_MANY_REQUESTS":   KindQuota,
	"AGENT_OVERLOADED":    KindOverload,
	"OVERLOADED":          KindOverload,
	"SERVICE_UNAVAILABLE": KindOverload,
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
// 429 alone is quota (the seeds make it the limiter's status); 500 alone is
// unknown, since a bare 500 cannot be told from a crash.
func httpKind(status int) Kind {
	switch {
	case status == 429:
		return KindQuota
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
