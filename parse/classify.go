package parse

import "strings"

const (
	domainA2A = "a2a-protocol.org"
	domainAAP = "autoagentprotocol.org"
)

// classify turns what the reply said (facts, headers, status) into the
// record's protocol, code, kind, retry fields and findings. Typed details
// decide first; numbers only when nothing typed was sent, and never a
// protocol-specific number without knowing the protocol.
func (d *Decoder) classify(rep *Reply, h *hdrInfo, f *facts, rec *Record) {
	rec.Protocol = d.protocolOf(h, f, rec)
	defRetry := TriUnknown
	kind := KindUnknown

	switch {
	case rec.Protocol == ProtocolAAP:
		code := firstNonEmpty(f.aap.code, f.metaCode, f.reason)
		rec.Code = code
		if spec, ok := aapCodes[code]; ok {
			kind, defRetry, rec.Typed = spec.kind, spec.retry, true
		}
		if f.errInfo {
			rec.Reason, rec.Domain = f.reason, f.domain
		}
	case f.relayCode != "":
		rec.Code = f.relayCode
		if rs, ok := relaySymbols[f.relayCode]; ok {
			kind, defRetry, rec.Typed = rs.kind, rs.retry, true
			if rec.HTTPStatus != 0 && rec.Envelope == EnvRelayFlat && rs.http != rec.HTTPStatus {
				rec.addFinding(FindStatusBodyMismatch)
			}
		}
	case f.errInfo:
		rec.Reason, rec.Domain = f.reason, f.domain
		rec.Code = f.reason
		rec.Typed = f.reason != ""
		if f.domain == domainA2A {
			if e, ok := a2aByReason[f.reason]; ok {
				kind, defRetry = e.kind, e.retry
			} else {
				rec.addFinding(FindReservedDomain)
			}
		}
		if kind == KindUnknown {
			if k, ok := limiterReason(f.reason); ok {
				kind, defRetry = k, TriTrue
				if f.domain == domainA2A {
					rec.addFinding(FindReservedDomain)
				}
			}
		}
	case rec.Envelope == EnvMCPToolResult:
		rec.Code, kind, rec.Typed = "TOOL_ERROR", KindInternal, true
	case rec.Envelope == EnvTaskFailed:
		kind = KindInternal
	case rec.Envelope == EnvLegacyFlat && rec.Code != "":
		if e, ok := a2aByReason[rec.Code]; ok {
			kind, defRetry, rec.Typed = e.kind, e.retry, true
		}
	case d.sc.problemType != "":
		rec.Code = d.problemCode()
		if e, ok := a2aByReason[rec.Code]; ok {
			kind, defRetry, rec.Typed = e.kind, e.retry, true
		}
	}

	// Numbers, when nothing typed decided.
	if kind == KindUnknown && rec.HasJSONRPC {
		kind, defRetry = d.jsonrpcKind(rec)
	}
	if g, ok := grpcCodeOf(rec.GRPCCode); ok && kind == KindUnknown {
		kind = g.kind
		if rec.GRPCCode == grpcResourceExhausted && !rec.Typed {
			// Seed 002: without the limiter's ErrorInfo it is a local error
			// (e.g. a message over the size limit), not a rate limit.
			rec.addFinding(FindResourceExhaustedUntyped)
		}
	}
	status := rec.HTTPStatus
	if (status == 0 || status == 200) && d.sc.bodyStatus >= 400 {
		status = d.sc.bodyStatus
	}
	if kind == KindUnknown && rec.Binding != BindingGRPC && status >= 400 {
		kind = httpKind(status)
	}
	if !rec.Typed {
		switch {
		case h.envoyOverloaded:
			kind = KindOverload
		case h.envoyLimited && kind == KindUnknown:
			kind = KindQuota
		}
	}
	rec.Kind = kind

	d.retry(rep, h, f, rec, defRetry)
	d.ids(h, f, rec)
	d.findings(rep, h, f, rec)
}

// protocolOf decides the protocol from typed evidence, then the transport
// headers, then the method name, then the envelope.
func (d *Decoder) protocolOf(h *hdrInfo, f *facts, rec *Record) Protocol {
	switch {
	case f.aap.found || f.domain == domainAAP:
		return ProtocolAAP
	case f.relayCode != "" || f.form.relay:
		return ProtocolAgentRelay
	case rec.Envelope == EnvMCPToolResult || d.sc.mcpURI:
		return ProtocolMCP
	case f.errInfo && f.domain == domainA2A:
		return ProtocolA2A
	}
	// A transport header is the endpoint's own word on its protocol; the
	// method is only what the caller asked (an A2A method sent to an MCP
	// server is answered by MCP), so the header ranks above it.
	if p := h.transportProtocol(); p != ProtocolUnknown {
		return p
	}
	switch m := rec.Method; {
	case isMCPMethod(m):
		return ProtocolMCP
	case isA2AMethod(m):
		return ProtocolA2A
	}
	switch rec.Envelope {
	case EnvRPCStatus, EnvGRPCStatus, EnvLegacyFlat, EnvTaskFailed:
		return ProtocolA2A
	case EnvJSONRPCError:
		if f.nTyped > 0 {
			// A2A defines data as an array of typed details; an array of
			// plain objects (a pydantic issue list) is no sign of A2A.
			return ProtocolA2A
		}
		if _, ok := mcpCodes[rec.JSONRPCCode]; ok && rec.JSONRPCCode != -32002 {
			return ProtocolMCP
		}
	case EnvProblem:
		if d.sc.problemType != "" {
			return ProtocolA2A
		}
	}
	return ProtocolUnknown
}

func isMCPMethod(m string) bool {
	if len(m) < 4 {
		return false
	}
	if m == "initialize" || m == "ping" {
		return true
	}
	for _, p := range [...]string{"tools/", "resources/", "prompts/", "completion/", "logging/", "sampling/", "elicitation/", "roots/", "notifications/"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

func isA2AMethod(m string) bool {
	switch m {
	case "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"ListTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard",
		"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe", "tasks/list",
		"agent/getAuthenticatedExtendedCard", "agent/getExtendedCard":
		return true
	}
	return strings.HasPrefix(m, "tasks/pushNotificationConfig/")
}

// jsonrpcKind maps a JSON-RPC code by the protocol already decided.
func (d *Decoder) jsonrpcKind(rec *Record) (Kind, Tri) {
	c := rec.JSONRPCCode
	switch rec.Protocol {
	case ProtocolMCP:
		if c == -32602 && d.sc.mcpURI {
			// MCP 2026-07-28: resource not found is -32602 with data.uri
			// (it replaced -32002).
			c = -32002
		}
		if s, ok := mcpCodes[c]; ok {
			if rec.Code == "" {
				rec.Code = s.code
			}
			return s.kind, s.retryable
		}
	case ProtocolA2A:
		if e, ok := a2aByNumber[c]; ok {
			if rec.Code == "" {
				rec.Code = e.reason
			}
			return e.kind, e.retry
		}
	}
	// The five standard codes mean the same in every protocol.
	switch c {
	case -32700, -32600, -32602:
		return KindInvalid, TriFalse
	case -32601:
		return KindUnsupported, TriFalse
	case -32603:
		return KindInternal, TriTrue
	}
	return KindUnknown, TriUnknown
}

// problemCode turns an A2A problem type slug (version-not-supported) into
// reason form (VERSION_NOT_SUPPORTED).
func (d *Decoder) problemCode() string {
	s := d.sc.problemType
	ar := &d.sc.ar
	ar.grow(len(s))
	start := len(ar.buf)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-':
			ar.buf = append(ar.buf, '_')
		case c >= 'a' && c <= 'z':
			ar.buf = append(ar.buf, c-'a'+'A')
		default:
			ar.buf = append(ar.buf, c)
		}
	}
	return bytesToString(ar.buf[start:])
}

// kindRetry is the retry default of a kind, for replies whose table row (if
// any) gives none: a bare gRPC status or HTTP status, for instance.
func kindRetry(k Kind) Tri {
	switch k {
	case KindQuota, KindOverload, KindInternal:
		return TriTrue
	case KindInvalid, KindAuth, KindNotFound, KindConflict, KindUnsupported:
		return TriFalse
	}
	return TriUnknown
}

// retry fills retryable and the retry delay, in the documented precedence:
// RetryInfo, Retry-After, RateLimit t, X-RateLimit-Reset, AAP details,
// AgentRelay details.
func (d *Decoder) retry(rep *Reply, h *hdrInfo, f *facts, rec *Record, def Tri) {
	switch {
	case f.aap.retryable != TriUnknown:
		rec.Retryable, rec.RetryableSource = f.aap.retryable, SrcReply
	case f.metaRetry != TriUnknown:
		rec.Retryable, rec.RetryableSource = f.metaRetry, SrcReply
	case def != TriUnknown:
		rec.Retryable, rec.RetryableSource = def, SrcDefault
	default:
		if r := kindRetry(rec.Kind); r != TriUnknown {
			rec.Retryable, rec.RetryableSource = r, SrcDefault
		}
	}

	now := rep.ObservedAtMS
	var rlPolicy string
	switch {
	case f.retryInfo:
		rec.RetryAfterMS, rec.RetryAfterSource = f.retryInfoMS, SrcRetryInfo
	default:
		if ms, ok := retryAfterMS(h.retryAfter, now); ok {
			rec.RetryAfterMS, rec.RetryAfterSource = ms, SrcRetryAfter
			break
		}
		if ms, pol, ok := h.rateLimitReset(); ok {
			rec.RetryAfterMS, rec.RetryAfterSource = ms, SrcRateLimit
			rlPolicy = pol
			break
		}
		if ms, ok := xRateLimitResetMS(h.xrlReset, now); ok && h.xrlReset != "" {
			rec.RetryAfterMS, rec.RetryAfterSource = ms, SrcXRateLimit
			break
		}
		if f.aap.retryAfterMS >= 0 {
			rec.RetryAfterMS, rec.RetryAfterSource = f.aap.retryAfterMS, SrcAAPDetails
			break
		}
		if f.relayRetryMS >= 0 {
			rec.RetryAfterMS, rec.RetryAfterSource = f.relayRetryMS, SrcRelayDetail
		}
	}
	// Seed 000: "Wait at least the applicable minimum": an aap.error's
	// retry_after_ms is a minimum, so a shorter delay ranked above it (a
	// Retry-After of 5 s beside 30000 ms) does not replace it.
	if f.aap.retryAfterMS > rec.RetryAfterMS && rec.RetryAfterSource != SrcAAPDetails {
		rec.RetryAfterMS, rec.RetryAfterSource = f.aap.retryAfterMS, SrcAAPDetails
	}
	if rlPolicy == "" {
		_, rlPolicy, _ = h.rateLimitReset()
	}
	rec.Limit = firstNonEmpty(f.metaPolicy, f.quotaLimit, rlPolicy, h.policyName(), h.xrlResource)
	rec.Scope = f.metaScope
	if rec.Scope == "" && f.quotaSubject != "" {
		if i := strings.IndexByte(f.quotaSubject, ':'); i > 0 {
			rec.Scope = f.quotaSubject[:i]
		}
	}
	if rec.Scope == "" {
		switch rec.Kind {
		case KindQuota:
			rec.Scope = "caller"
		case KindOverload:
			rec.Scope = "agent"
		}
	}
}

func (d *Decoder) ids(h *hdrInfo, f *facts, rec *Record) {
	rec.ErrorID = firstNonEmpty(f.aap.errorID, f.metaErrorID)
	rec.RequestID = firstNonEmpty(f.relayRequestID, f.requestID, h.requestID)
	if rec.TaskID == "" {
		rec.TaskID = f.metaTaskID
	}
	if rec.Method == "" && f.metaMethod != "" {
		rec.Method = f.metaMethod
	}
	if rec.Caller == "" && f.quotaSubject != "" {
		if i := strings.IndexByte(f.quotaSubject, ':'); i > 0 && f.quotaSubject[:i] == "caller" {
			rec.Caller = f.quotaSubject[i+1:]
		}
	}
}

func (d *Decoder) findings(rep *Reply, h *hdrInfo, f *facts, rec *Record) {
	quota := rec.Kind == KindQuota
	if quota {
		switch {
		case rec.RetryAfterMS < 0:
			rec.addFinding(FindRetryDelayMissing)
		case rec.RetryAfterMS == 0:
			rec.addFinding(FindRetryDelayZero)
		}
		if rec.Retryable == TriFalse && rec.RetryableSource == SrcReply {
			rec.addFinding(FindRateLimitNotRetryable)
		}
	}
	if rec.HTTPStatus == 429 && h.retryAfter == "" {
		rec.addFinding(FindRetryAfterHeaderMissing)
	}
	d.limitFindings(h, f, rec)
	if rec.Protocol == ProtocolAAP && rec.Code == "RATE_LIMITED" && f.aap.found && f.aap.retryAfterMS < 0 {
		rec.addFinding(FindAAPRetryAfterMSMissing)
	}
	if rec.Protocol == ProtocolA2A && !f.errInfo && (rec.Envelope == EnvRPCStatus || rec.Envelope == EnvGRPCStatus) {
		rec.addFinding(FindErrorInfoMissing)
	}
	if rec.Protocol == ProtocolA2A && rec.Binding == BindingJSONRPC && rec.JSONRPCCode <= -32010 && rec.JSONRPCCode >= -32099 {
		rec.addFinding(FindUnassignedA2ACode)
	}
	// A status that disagrees with the body: a Status body's mirrored code, a
	// PAP code's mapped status, or a typed rate limit behind a 5xx other than 503.
	if rec.HTTPStatus >= 400 && d.sc.bodyStatus >= 400 && d.sc.bodyStatus != rec.HTTPStatus && rec.Envelope != EnvProblem {
		rec.addFinding(FindStatusBodyMismatch)
	}
	if rec.HTTPStatus >= 400 && rec.Envelope == EnvProblem && d.sc.bodyStatus >= 400 && d.sc.bodyStatus != rec.HTTPStatus {
		rec.addFinding(FindStatusBodyMismatch)
	}
	if quota && rec.Typed && rec.HTTPStatus >= 500 && rec.HTTPStatus != 503 {
		rec.addFinding(FindStatusBodyMismatch)
	}
	if rec.HTTPStatus >= 400 && rec.Binding != BindingGRPC && len(trimSpace(rep.Body)) == 0 {
		rec.addFinding(FindBodyMissing)
	}
	if !rec.Typed && (rec.HTTPStatus >= 500 || (rec.HasJSONRPC && rec.JSONRPCCode == -32603) ||
		(rec.Binding == BindingGRPC && (rec.GRPCCode == grpcInternal || rec.GRPCCode == grpcUnknown))) &&
		rec.Kind != KindOverload {
		rec.addFinding(FindUntyped5xx)
	}
	if rec.Kind == KindInvalid && len(rec.FieldViolations) == 0 && !f.badRequest {
		if (rec.Protocol == ProtocolAAP && aapCodes[rec.Code].validation) ||
			(rec.Protocol == ProtocolA2A && (rec.Code == "INVALID_PARAMS" || rec.JSONRPCCode == -32602)) {
			rec.addFinding(FindValidationWithoutFields)
		}
	}
	if d.sc.echoed {
		rec.addFinding(FindEchoesSecret)
	}
	if rec.Protocol == ProtocolAAP {
		d.aapFindings(h, f, rec)
	}
	d.seed000Findings(h, f, rec)
	if f.reason == "EXTENSION_SUPPORT_REQUIRED" &&
		(!strings.Contains(rec.Message, "A2A-Extensions") || f.metaExtURI == "" || !strings.Contains(rec.Message, f.metaExtURI)) {
		rec.addFinding(FindActivationHintMissing)
	}
	if f.debugInfo {
		rec.addFinding(FindDebugInfoExposed)
	}
	d.formFindings(rep, h, f, rec)
}

// limitFindings checks a rate limit or an overload against seed 002: the
// header repeats the body's delay, a quota is 429 / RESOURCE_EXHAUSTED and
// an overload 503 / UNAVAILABLE, and an A2A 429 carries RetryInfo.
func (d *Decoder) limitFindings(h *hdrInfo, f *facts, rec *Record) {
	// Retry-After in seconds against the body's delay, rounded up to whole
	// seconds as seed 002 says to send it. An HTTP-date Retry-After is
	// allowed and not compared.
	if h.retryAfter != "" && isDigits(h.retryAfter) {
		body := int64(-1)
		switch {
		case f.retryInfo:
			body = f.retryInfoMS
		case f.aap.retryAfterMS >= 0:
			body = f.aap.retryAfterMS
		case f.relayRetryMS >= 0:
			body = f.relayRetryMS
		}
		if sec, ok := parseIntPrefix([]byte(h.retryAfter)); ok && body >= 0 && sec != (body+999)/1000 {
			rec.addFinding(FindRetryDelayDisagree)
		}
	}
	if rec.Typed {
		switch rec.Kind {
		case KindQuota:
			if rec.HTTPStatus == 503 || rec.GRPCCode == grpcUnavailable {
				rec.addFinding(FindQuotaOverloadSwapped)
			}
		case KindOverload:
			if rec.HTTPStatus == 429 || rec.GRPCCode == grpcResourceExhausted {
				rec.addFinding(FindQuotaOverloadSwapped)
			}
		}
	}
	if rec.Protocol == ProtocolA2A && rec.Kind == KindQuota && !f.retryInfo &&
		(rec.HTTPStatus == 429 || rec.GRPCCode == grpcResourceExhausted) {
		rec.addFinding(FindRetryInfoMissing)
	}
}

// aapFindings checks an AAP reply against seed 000: the aap.error object in
// every binding, and its A2A encoding (ErrorInfo first with the AAP reason,
// domain and string metadata; the payload a separate Struct detail; the
// code's JSON-RPC number).
func (d *Decoder) aapFindings(h *hdrInfo, f *facts, rec *Record) {
	if f.aap.found {
		if f.aap.members&aapRequired != aapRequired {
			rec.addFinding(FindAAPRequiredMissing)
		}
		if c := f.aap.code; c != "" {
			if spec, ok := aapCodes[c]; !ok || spec.jsonrpc == 0 {
				rec.addFinding(FindAAPUnknownCode)
			}
		}
		if f.aap.itemBad {
			rec.addFinding(FindAAPErrorItemIncomplete)
		}
	}
	// The A2A binding: a JSON-RPC error (or its HTTP+JSON / gRPC Status
	// forms), not an MCP server's protocol error.
	switch rec.Envelope {
	case EnvJSONRPCError, EnvRPCStatus, EnvGRPCStatus:
	default:
		return
	}
	if isMCPReply(h, rec) {
		return // an MCP server's JSON-RPC error: aap_mcp_protocol_error
	}
	if !f.errInfo || f.errInfoIndex > 0 {
		rec.addFinding(FindAAPErrorInfoNotFirst)
	}
	if f.errInfo {
		if f.metaCode == "" {
			rec.addFinding(FindAAPCodeNotInMetadata)
		}
		if f.reason != "" && rec.Code != "" && f.reason != rec.Code {
			rec.addFinding(FindAAPReasonNotCode)
		}
		if f.domain != domainAAP {
			rec.addFinding(FindAAPDomainWrong)
		}
		if f.metaNonString {
			rec.addFinding(FindAAPMetadataNotString)
		}
		if f.metaKeys&(metaHasErrorID|metaHasRetryable|metaHasCreatedAt) != metaHasErrorID|metaHasRetryable|metaHasCreatedAt {
			rec.addFinding(FindAAPMetadataIncomplete)
		}
	}
	if !f.aap.found || f.aap.via != viaStruct {
		rec.addFinding(FindAAPPayloadNotStruct)
	}
	if rec.Envelope == EnvJSONRPCError && rec.HasJSONRPC {
		if spec, ok := aapCodes[rec.Code]; ok && spec.jsonrpc != 0 && spec.jsonrpc != rec.JSONRPCCode {
			rec.addFinding(FindAAPJSONRPCCodeMismatch)
		}
	}
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isWS(b[i]) {
		i++
	}
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}
