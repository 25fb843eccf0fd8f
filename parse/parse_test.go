package parse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/redact"
)

// want lists the fields a case asserts; zero values are not checked except
// where noted (retryAfter uses -2 for "don't check").
type want struct {
	protocol   Protocol
	binding    Binding
	envelope   Envelope
	kind       Kind
	code       string
	reason     string
	httpStatus int
	grpc       string
	jsonrpc    int
	retryAfter int64 // -1: none given; -2: not checked
	retryable  Tri
	typed      bool
	limit      string
	scope      string
	errorID    string
	requestID  string
	taskID     string
	caller     string
	findings   []Finding // must be present
	absent     []Finding // must not be present
	violations int       // number of field violations, -1 not checked
}

func decodeFile(t *testing.T, path string) (*Record, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(Options{})
	var rec Record
	err = d.DecodeMessage(data, nil, 1764489600000, &rec)
	return rec.Clone(), err
}

func check(t *testing.T, name string, got *Record, w want) {
	t.Helper()
	errf := func(field string, g, w any) { t.Errorf("%s: %s = %v; want %v", name, field, g, w) }
	if got.Protocol != w.protocol {
		errf("protocol", got.Protocol, w.protocol)
	}
	if w.binding != "" && got.Binding != w.binding {
		errf("binding", got.Binding, w.binding)
	}
	if got.Envelope != w.envelope {
		errf("envelope", got.Envelope, w.envelope)
	}
	if got.Kind != w.kind {
		errf("kind", got.Kind, w.kind)
	}
	if got.Code != w.code {
		errf("code", got.Code, w.code)
	}
	if w.reason != "" && got.Reason != w.reason {
		errf("reason", got.Reason, w.reason)
	}
	if w.httpStatus != 0 && got.HTTPStatus != w.httpStatus {
		errf("http_status", got.HTTPStatus, w.httpStatus)
	}
	if w.grpc != "" && got.GRPCStatusName() != w.grpc {
		errf("grpc_status", got.GRPCStatusName(), w.grpc)
	}
	if w.jsonrpc != 0 && got.JSONRPCCode != w.jsonrpc {
		errf("jsonrpc_code", got.JSONRPCCode, w.jsonrpc)
	}
	if w.retryAfter != -2 && got.RetryAfterMS != w.retryAfter {
		errf("retry_after_ms", got.RetryAfterMS, w.retryAfter)
	}
	if w.retryable != TriUnknown && got.Retryable != w.retryable {
		errf("retryable", got.Retryable, w.retryable)
	}
	if got.Typed != w.typed {
		errf("typed", got.Typed, w.typed)
	}
	for _, p := range []struct{ field, g, w string }{
		{"limit", got.Limit, w.limit}, {"scope", got.Scope, w.scope}, {"error_id", got.ErrorID, w.errorID},
		{"request_id", got.RequestID, w.requestID}, {"task_id", got.TaskID, w.taskID}, {"caller", got.Caller, w.caller},
	} {
		if p.w != "" && p.g != p.w {
			errf(p.field, p.g, p.w)
		}
	}
	for _, f := range w.findings {
		if !got.HasFinding(f) {
			t.Errorf("%s: finding %s missing; got %v", name, f, got.Findings)
		}
	}
	for _, f := range w.absent {
		if got.HasFinding(f) {
			t.Errorf("%s: finding %s present; want absent (got %v)", name, f, got.Findings)
		}
	}
	if w.violations >= 0 && len(got.FieldViolations) != w.violations {
		errf("field_violations", len(got.FieldViolations), w.violations)
	}
}

// TestSeedExamples decodes every example reply of the four seeds.
func TestSeedExamples(t *testing.T) {
	cases := map[string]want{
		// Seed 002, HTTP+JSON rate limit: quota for one caller, delay from RetryInfo.
		"seed002-rest-429.http": {protocol: ProtocolA2A, binding: BindingHTTP, envelope: EnvRPCStatus, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", httpStatus: 429, grpc: "RESOURCE_EXHAUSTED", retryAfter: 12000, retryable: TriTrue,
			typed: true, limit: "per-caller", scope: "caller", caller: "orchestrator-7",
			absent: []Finding{FindRetryAfterHeaderMissing, FindErrorInfoMissing, FindRetryDelayMissing}},
		// Seed 002, JSON-RPC -32603 with the limiter's ErrorInfo: quota, not internal.
		"seed002-jsonrpc-429.http": {protocol: ProtocolA2A, binding: BindingJSONRPC, envelope: EnvJSONRPCError, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", httpStatus: 429, jsonrpc: -32603, retryAfter: 12000, retryable: TriTrue, typed: true,
			limit: "per-caller", scope: "caller", absent: []Finding{FindUntyped5xx}},
		"seed002-jsonrpc-200-ratelimit.http": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", httpStatus: 200, jsonrpc: -32603, retryAfter: 12000, typed: true, limit: "per-caller"},
		"seed002-rest-503-overloaded.http": {protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindOverload,
			code: "AGENT_OVERLOADED", httpStatus: 503, grpc: "UNAVAILABLE", retryAfter: 30000, retryable: TriTrue, typed: true, scope: "agent"},
		// Seed 002: "Against an agent that returns a bare 500, the client cannot tell a quota from a crash."
		// Its text says "rate limit" and must not make it quota.
		"seed002-bare-500.http": {protocol: ProtocolUnknown, envelope: EnvNone, kind: KindInternal, httpStatus: 500,
			retryAfter: -1, findings: []Finding{FindUntyped5xx}},
		// Seed 000: the A2A throttle carries the aap.error in a Struct; decide on its code, not on -32000.
		"seed000-a2a-rate-limited.http": {protocol: ProtocolAAP, envelope: EnvJSONRPCError, kind: KindQuota, code: "RATE_LIMITED",
			reason: "RATE_LIMITED", jsonrpc: -32000, retryAfter: 30000, retryable: TriTrue, typed: true, errorID: "err_01HZ9RATE01",
			absent: []Finding{FindAAPRetryAfterMSMissing, FindAAPCodeNotInMetadata, FindAAPErrorInfoNotFirst}},
		"seed000-a2a-extension-required.http": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindUnsupported,
			code: "EXTENSION_SUPPORT_REQUIRED", jsonrpc: -32008, retryAfter: -1, retryable: TriFalse, typed: true,
			absent: []Finding{FindActivationHintMissing}},
		"seed000-pap-unsupported-filter.http": {protocol: ProtocolAAP, binding: BindingHTTP, envelope: EnvAAPError, kind: KindInvalid,
			code: "UNSUPPORTED_FILTER", httpStatus: 422, retryAfter: -1, retryable: TriFalse, typed: true, errorID: "error_example_001",
			violations: 1, absent: []Finding{FindStatusBodyMismatch, FindValidationWithoutFields}},
		"seed000-mcp-unsupported-filter.http": {protocol: ProtocolAAP, binding: BindingJSONRPC, envelope: EnvMCPToolResult,
			kind: KindInvalid, code: "UNSUPPORTED_FILTER", httpStatus: 200, retryAfter: -1, retryable: TriFalse, typed: true,
			errorID: "error_example_001", violations: 1},
		// Seed 003: the same TaskNotFoundError over JSON-RPC (200, -32001) and HTTP+JSON (404).
		"seed003-jsonrpc-task-not-found.http": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindNotFound,
			code: "TASK_NOT_FOUND", httpStatus: 200, jsonrpc: -32001, retryAfter: -1, retryable: TriFalse, typed: true, taskID: "d6d1b5c3"},
		"seed003-rest-task-not-found.http": {protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindNotFound,
			code: "TASK_NOT_FOUND", httpStatus: 404, grpc: "NOT_FOUND", retryAfter: -1, retryable: TriFalse, typed: true, taskID: "d6d1b5c3"},
		"seed003-jsonrpc-bad-request.http": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindInvalid,
			code: "INVALID_PARAMS", jsonrpc: -32602, retryAfter: -1, retryable: TriFalse, violations: 1,
			absent: []Finding{FindValidationWithoutFields}},
		"seed003-rest-cancel-completed.http": {protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindConflict,
			code: "TASK_NOT_CANCELABLE", httpStatus: 400, grpc: "FAILED_PRECONDITION", retryAfter: -1, typed: true,
			taskID: "bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3"},
		// Seed 004: AgentRelay -32004 is recipient_not_found (A2A's UnsupportedOperation number).
		"seed004-relay-jsonrpc-recipient-not-found.http": {protocol: ProtocolAgentRelay, envelope: EnvJSONRPCError, kind: KindNotFound,
			code: "recipient_not_found", jsonrpc: -32004, retryAfter: -1, typed: true, requestID: "req_01HXY4K2VNJQP7R8MWDB3CSTF"},
		// AgentRelay -32001 is unauthenticated, A2A -32001 is TaskNotFound: the typed data decides.
		"seed004-relay-jsonrpc-unauthenticated.http": {protocol: ProtocolAgentRelay, envelope: EnvJSONRPCError, kind: KindAuth,
			code: "unauthenticated", jsonrpc: -32001, retryAfter: -1, retryable: TriFalse, typed: true},
		"seed004-relay-rest-rate-limited.http": {protocol: ProtocolAgentRelay, binding: BindingHTTP, envelope: EnvRelayFlat,
			kind: KindQuota, code: "rate_limited", httpStatus: 429, retryAfter: 14000, retryable: TriTrue, typed: true,
			requestID: "req_01HXY4K2VNJQP7R8MWDB3CSTG", absent: []Finding{FindRetryAfterHeaderMissing, FindStatusBodyMismatch}},
	}
	files, _ := filepath.Glob("testdata/seeds/*.http")
	if len(files) != len(cases) {
		t.Errorf("testdata/seeds has %d files, the table %d cases", len(files), len(cases))
	}
	for name, w := range cases {
		if w.violations == 0 {
			w.violations = -1
		}
		got, err := decodeFile(t, filepath.Join("testdata/seeds", name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		check(t, name, got, w)
	}
}

// TestCases covers envelopes the seeds do not show.
func TestCases(t *testing.T) {
	cases := map[string]want{
		"grpc-resource-exhausted.grpc": {protocol: ProtocolA2A, binding: BindingGRPC, envelope: EnvGRPCStatus, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", grpc: "RESOURCE_EXHAUSTED", retryAfter: 12000, typed: true, limit: "per-caller",
			scope: "caller", caller: "orchestrator-7"},
		// Seed 002: a RESOURCE_EXHAUSTED without the limiter's ErrorInfo is a local error, not a rate limit.
		"grpc-resource-exhausted-local.grpc": {protocol: ProtocolA2A, binding: BindingGRPC, envelope: EnvGRPCStatus, kind: KindUnknown,
			grpc: "RESOURCE_EXHAUSTED", retryAfter: -1, findings: []Finding{FindResourceExhaustedUntyped, FindErrorInfoMissing},
			absent: []Finding{FindRetryDelayMissing}},
		"grpc-unavailable-overloaded.grpc": {protocol: ProtocolA2A, envelope: EnvGRPCStatus, kind: KindOverload,
			code: "AGENT_OVERLOADED", grpc: "UNAVAILABLE", retryAfter: 5000, typed: true, scope: "agent"},
		// REFERENCE §3c: details whose code disagrees with grpc-status are not trusted.
		"grpc-details-mismatch.grpc": {protocol: ProtocolA2A, envelope: EnvGRPCStatus, kind: KindInternal, grpc: "INTERNAL",
			retryAfter: -1, findings: []Finding{FindGRPCDetailsMismatch}},
		"grpc-task-not-found.grpc": {protocol: ProtocolA2A, envelope: EnvGRPCStatus, kind: KindNotFound, code: "TASK_NOT_FOUND",
			grpc: "NOT_FOUND", retryAfter: -1, typed: true},
		"event-jsonrpc-429.json": {protocol: ProtocolA2A, binding: BindingJSONRPC, envelope: EnvJSONRPCError, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", httpStatus: 429, retryAfter: 12000, typed: true, caller: "orchestrator-7"},
		"event-body-json.json": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindQuota, code: "RATE_LIMIT_EXCEEDED",
			retryAfter: 12000, typed: true},
		"event-body-base64.json": {protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindQuota, code: "RATE_LIMIT_EXCEEDED",
			retryAfter: 12000, typed: true},
		"event-grpc.json": {protocol: ProtocolA2A, binding: BindingGRPC, envelope: EnvGRPCStatus, kind: KindQuota,
			code: "RATE_LIMIT_EXCEEDED", grpc: "RESOURCE_EXHAUSTED", retryAfter: 12000, typed: true},
	}
	for name, w := range cases {
		if w.violations == 0 {
			w.violations = -1
		}
		got, err := decodeFile(t, filepath.Join("testdata/cases", name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		check(t, name, got, w)
	}
}

// TestEventContext checks the context members of the event contract and
// that credentials never reach the record.
func TestEventContext(t *testing.T) {
	got, err := decodeFile(t, "testdata/cases/event-jsonrpc-429.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, got, want string }{
		{"event_id", got.EventID, "gw-eu-1:01JDQ6V5M1Z0R8T4W5X9"},
		{"source_kind", got.SourceKind, "gateway"}, {"source_id", got.SourceID, "gw-eu-1"},
		{"agent", got.Agent, "research-agent"}, {"method", got.Method, "SendMessage"},
		{"endpoint", got.Endpoint, "https://research.agents.example/a2a"},
		{"jsonrpc_id", got.JSONRPCID, "req-41"}, {"http_request_id", got.HTTPRequestID, "req_01HXY4K2VN"},
		{"message_id", got.MessageID, "5b0c2a0e-2f5e-4b7e-9d38-4a1f0c6f3a11"}, {"idempotency_key", got.IdempotencyKey, ""}, // only ever its keyed hash, below
	} {
		if c.got != c.want {
			t.Errorf("%s = %q; want %q", c.field, c.got, c.want)
		}
	}
	if want := redact.New(nil).Hash64("lead-7781"); got.IdempotencyHash != want {
		t.Errorf("idempotency hash = %#x; want the keyed hash %#x", got.IdempotencyHash, want)
	}
	if got.ObservedAtMS != 1764489600123 || got.Attempt != 2 {
		t.Errorf("observed_at, attempt = %d, %d; want 1764489600123, 2", got.ObservedAtMS, got.Attempt)
	}
	js, _ := got.MarshalJSON()
	for _, secret := range []string{"abcdefghijklmnop", "user:pw", "key=abc"} {
		if strings.Contains(string(js), secret) {
			t.Errorf("record JSON contains the credential %q: %s", secret, js)
		}
	}
}

// TestBadInput checks that every kind of bad message gets its stable reason.
func TestBadInput(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	okReply := `"reply":{"http_status":500}`
	cases := []struct {
		name   string
		in     string
		reason ErrReason
		path   string
	}{
		{"empty", "", ErrEmpty, "message"},
		{"too large", "{" + strings.Repeat(" ", 2<<20) + "}", ErrTooLarge, "message"},
		{"not json", "hello world", ErrBadEvent, "message"},
		{"truncated", `{"v":1,"observed_at":1,` + okReply[:10], ErrInvalidJSON, "event"},
		{"deep", `{"v":1,"x":` + deep + `}`, ErrTooDeep, "event"},
		{"invalid utf8", "{\"v\":1,\"agent\":\"\xff\xfe\"}", ErrInvalidUTF8, "event"},
		{"wrong type v", `{"v":"1","observed_at":1,` + okReply + `}`, ErrWrongType, "event.v"},
		{"wrong type agent", `{"v":1,"observed_at":1,"agent":7,` + okReply + `}`, ErrWrongType, "event.agent"},
		{"wrong type status", `{"v":1,"observed_at":1,"reply":{"http_status":"500"}}`, ErrWrongType, "event.reply.http_status"},
		{"version", `{"v":2,"observed_at":1,` + okReply + `}`, ErrBadVersion, "event.v"},
		{"no reply", `{"v":1,"observed_at":1}`, ErrBadEvent, "event.reply"},
		{"no version", `{"observed_at":1,` + okReply + `}`, ErrBadEvent, "event.v"},
		{"array event", `[1,2]`, ErrBadEvent, "message"},
		{"bad body json", `{"v":1,"observed_at":1,"reply":{"http_status":500,"body":"{\"error\":"}}`, ErrInvalidJSON, "reply.body"},
		{"bad status line", "HTTP/1.1 abc\r\n\r\n", ErrBadHTTP, "http.status_line"},
		{"headers unterminated", "HTTP/1.1 500 Oops\r\nContent-Type: x\r\n", ErrBadHTTP, "http.headers"},
		{"grpc no status", "GRPC\ngrpc-message: x\n", ErrBadGRPC, "grpc.grpc-status"},
		{"success", `{"v":1,"observed_at":1,"reply":{"http_status":200,"body_json":{"jsonrpc":"2.0","id":1,"result":{"ok":true}}}}`, ErrNotAnError, "reply.body.result"},
		{"jsonrpc code type", `{"v":1,"observed_at":1,"reply":{"http_status":200,"body_json":{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}}}`, ErrWrongType, "reply.body.error.code"},
	}
	for _, c := range cases {
		d := NewDecoder(Options{})
		var rec Record
		err := d.DecodeMessage([]byte(c.in), nil, 0, &rec)
		de, ok := err.(*DecodeError)
		if !ok {
			t.Errorf("%s: err = %v; want a *DecodeError with reason %s", c.name, err, c.reason)
			continue
		}
		if de.Reason != c.reason || de.Path != c.path {
			t.Errorf("%s: reason, path = %s, %s; want %s, %s (%v)", c.name, de.Reason, de.Path, c.reason, c.path, de)
		}
		if !slices.Contains(Reasons, de.Reason) {
			t.Errorf("%s: reason %s is not in Reasons", c.name, de.Reason)
		}
	}
}

// TestRawStatusLineCode: the status code of a raw reply is three digits,
// the first not 0, followed by a space or the line's end; anything else is
// bad_http at the code's offset, whatever a number parser would make of it
// (a sign, a fraction, a fourth digit).
func TestRawStatusLineCode(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}`
	for code, want := range map[string]int{"100": 100, "429": 429, "599": 599, "999": 999, "429 Too Many Requests": 429, "503 ": 503} {
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage([]byte("HTTP/1.1 "+code+"\r\nContent-Type: application/json\r\n\r\n"+body), nil, 0, &rec); err != nil {
			t.Errorf("status line %q: %v", code, err)
			continue
		}
		if rec.HTTPStatus != want {
			t.Errorf("status line %q: HTTP status %d, want %d", code, rec.HTTPStatus, want)
		}
	}
	for _, code := range []string{"099", "000", "-12", "4.5", "42.", "1000", "42a", "a42", " 42", "4 2", "4\x0012", "٤٢٩"} {
		d := NewDecoder(Options{})
		var rec Record
		err := d.DecodeMessage([]byte("HTTP/1.1 "+code+"\r\n\r\n"+body), nil, 0, &rec)
		de, ok := err.(*DecodeError)
		if !ok || de.Reason != ErrBadHTTP || de.Path != "http.status_line" || de.Offset != 9 {
			t.Errorf("status line %q: err = %v; want bad_http at http.status_line, offset 9", code, err)
		}
		if rec.HTTPStatus != 0 {
			t.Errorf("status line %q: HTTP status %d kept", code, rec.HTTPStatus)
		}
	}
}
