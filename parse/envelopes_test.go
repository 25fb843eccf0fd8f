package parse

import (
	"fmt"
	"strings"
	"testing"
)

// httpResp builds a raw HTTP/1.1 response.
func httpResp(status int, headers map[string]string, body string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d X\r\n", status)
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return []byte(b.String())
}

func decodeBytes(t *testing.T, data []byte, hs ...MsgHeader) *Record {
	t.Helper()
	d := NewDecoder(Options{})
	var rec Record
	if err := d.DecodeMessage(data, hs, 1764489600000, &rec); err != nil {
		t.Fatalf("decode: %v\n%s", err, data)
	}
	return rec.Clone()
}

var jsonCT = map[string]string{"Content-Type": "application/json"}

func TestEnvelopes(t *testing.T) {
	method := func(m string) []MsgHeader { return []MsgHeader{{Key: "errtrail-method", Value: []byte(m)}} }
	cases := []struct {
		name string
		in   []byte
		hs   []MsgHeader
		w    want
	}{
		{"a2a-go flattens Struct and puts ErrorInfo last", httpResp(200, jsonCT,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"task not found","data":[{"@type":"type.googleapis.com/google.protobuf.Struct","taskId":"t1"},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"timestamp":"2026-07-20T10:00:00Z"}}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindNotFound, code: "TASK_NOT_FOUND", retryAfter: -1, typed: true}},
		{"a2a-python transport error with data as a string", httpResp(200, jsonCT,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request payload validation error","data":"1 validation error for Request"}}`),
			method("message/send"), want{protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindInvalid, code: "INVALID_REQUEST", retryAfter: -1}},
		{"data null and id missing", httpResp(200, jsonCT, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":null}}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvJSONRPCError, kind: KindInternal, retryAfter: -1, findings: []Finding{FindUntyped5xx}}},
		// -32001 with no typed data and no method: the number alone decides nothing protocol-specific.
		{"bare -32001 without a protocol", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"}}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvJSONRPCError, kind: KindUnknown, retryAfter: -1}},
		{"bare -32001 on an A2A method", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"}}`),
			method("GetTask"), want{protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindNotFound, code: "TASK_NOT_FOUND", retryAfter: -1}},
		{"unassigned A2A code", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"limit","data":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindUnknown, retryAfter: 1500, findings: []Finding{FindUnassignedA2ACode}}},
		{"reserved domain used for a limiter reason", httpResp(429, map[string]string{"Retry-After": "3"}, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"a2a-protocol.org"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindQuota, code: "RATE_LIMIT_EXCEEDED", retryAfter: 3000, typed: true, findings: []Finding{FindReservedDomain}}},
		// Seed 002: a gateway that rewrote the agent's 429 into 502 but kept the body.
		{"gateway rewrote 429 to 502", httpResp(502, jsonCT, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"limited","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindQuota, code: "RATE_LIMIT_EXCEEDED", httpStatus: 502, retryAfter: 12000, typed: true, findings: []Finding{FindStatusBodyMismatch}}},
		{"gateway stripped the body", httpResp(429, nil, ``),
			nil, want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindQuota, httpStatus: 429, retryAfter: -1, findings: []Finding{FindBodyMissing, FindRetryAfterHeaderMissing, FindRetryDelayMissing}}},
		{"proxy HTML 502", httpResp(502, map[string]string{"Content-Type": "text/html"}, `<html><body>Bad Gateway</body></html>`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindUnknown, httpStatus: 502, retryAfter: -1, findings: []Finding{FindUntyped5xx}}},
		{"empty 503", httpResp(503, nil, ``), nil, want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindOverload, httpStatus: 503, retryAfter: -1, scope: "agent", findings: []Finding{FindBodyMissing}}},
		{"envoy overloaded", httpResp(503, map[string]string{"x-envoy-overloaded": "true"}, `upstream connect error`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindOverload, retryAfter: -1}},
		{"envoy rate limited", httpResp(429, map[string]string{"x-envoy-ratelimited": "true", "Retry-After": "0"}, ``),
			nil, want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindQuota, retryAfter: 0, findings: []Finding{FindRetryDelayZero}}},
		{"problem+json version not supported (spec §6.4)", httpResp(400, map[string]string{"Content-Type": "application/problem+json"}, `{"type":"https://a2a-protocol.org/errors/version-not-supported","title":"Protocol Version Not Supported","status":400,"detail":"The requested A2A protocol version 2.0 is not supported","supportedVersions":["0.3"]}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvProblem, kind: KindUnsupported, code: "VERSION_NOT_SUPPORTED", retryAfter: -1, typed: true}},
		{"problem+json with field errors (spec §6.5)", httpResp(400, map[string]string{"Content-Type": "application/problem+json"}, `{"type":"about:blank","title":"Bad Request","status":400,"detail":"Invalid request","errors":[{"field":"message.parts","message":"required"}]}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvProblem, kind: KindInvalid, retryAfter: -1, violations: 1}},
		// REFERENCE §2d: a2a-dotnet previews answered with ASP.NET ProblemDetails.
		{"ASP.NET ProblemDetails (a2a-dotnet previews)", httpResp(400, map[string]string{"Content-Type": "application/problem+json"}, `{"type":"https://tools.ietf.org/html/rfc7231#section-6.5.1","title":"Bad Request","status":400,"detail":"Task cannot be canceled","traceId":"00-abc-def-00"}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvProblem, kind: KindInvalid, retryAfter: -1}},
		{"ASP.NET ProblemDetails with a status that disagrees", httpResp(500, map[string]string{"Content-Type": "application/problem+json"}, `{"type":"about:blank","title":"Bad Request","status":400}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvProblem, kind: KindInternal, retryAfter: -1, findings: []Finding{FindStatusBodyMismatch}}},
		// REFERENCE §4a: MCP 2026-07-28 UnsupportedProtocolVersion with its data, HTTP 400.
		{"MCP unsupported protocol version", httpResp(400, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2099-01-01"}}}`),
			method("initialize"), want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindUnsupported, code: "UNSUPPORTED_PROTOCOL_VERSION", retryAfter: -1}},
		{"a2a-dotnet preview JSON string body", httpResp(404, jsonCT, `"Task not found"`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvJSONString, kind: KindNotFound, retryAfter: -1}},
		{"a2a-java v0.3 legacy body", httpResp(404, jsonCT, `{"error":"io.a2a.spec.TaskNotFoundError","message":"Task not found"}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvLegacyFlat, kind: KindNotFound, code: "TASK_NOT_FOUND", retryAfter: -1, typed: true}},
		{"a2a-java v0.3 legacy body that is not valid JSON", httpResp(422, jsonCT, `{"error":"io.a2a.spec.InvalidParamsError","message":"bad "quote" here"}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvLegacyFlat, kind: KindInvalid, code: "INVALID_PARAMS", retryAfter: -1, typed: true}},
		{"a2a-js v0.3 flat body", httpResp(404, jsonCT, `{"code":-32001,"message":"Task not found: abc"}`),
			method("tasks/get"), want{protocol: ProtocolA2A, envelope: EnvLegacyFlat, kind: KindNotFound, code: "TASK_NOT_FOUND", retryAfter: -1}},
		{"AAP v1.1 JSON-RPC data object", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":"q","error":{"code":-32002,"message":"slow","data":{"type":"aap.error","error_id":"e1","code":"RATE_LIMITED","message":"slow","retryable":true,"created_at":"2026-01-01T00:00:00Z"}}}`),
			nil, want{protocol: ProtocolAAP, envelope: EnvJSONRPCError, kind: KindQuota, code: "RATE_LIMITED", retryAfter: -1, retryable: TriTrue, typed: true, errorID: "e1", findings: []Finding{FindAAPRetryAfterMSMissing, FindRetryDelayMissing}}},
		{"AAP v1.0 HTTP+JSON with type.googleapis.com/aap.error", httpResp(429, map[string]string{"Retry-After": "5"}, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"autoagentprotocol.org","metadata":{"code":"RATE_LIMITED"}},{"@type":"type.googleapis.com/aap.error","type":"aap.error","error_id":"e2","code":"RATE_LIMITED","message":"slow","retryable":false,"details":{"retry_after_seconds":5}}]}}`),
			nil, want{protocol: ProtocolAAP, envelope: EnvRPCStatus, kind: KindQuota, code: "RATE_LIMITED", retryAfter: 5000, retryable: TriFalse, typed: true, findings: []Finding{FindRateLimitNotRetryable}}},
		{"AAP ErrorInfo not first, code not in metadata", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":[{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"e3","code":"SCHEMA_VALIDATION_FAILED","message":"bad","retryable":false}},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SCHEMA_VALIDATION_FAILED","domain":"autoagentprotocol.org"}]}}`),
			nil, want{protocol: ProtocolAAP, envelope: EnvJSONRPCError, kind: KindInvalid, code: "SCHEMA_VALIDATION_FAILED", retryAfter: -1, typed: true,
				findings: []Finding{FindAAPErrorInfoNotFirst, FindAAPCodeNotInMetadata, FindValidationWithoutFields}}},
		{"MCP unknown tool", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`),
			method("tools/call"), want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindInvalid, retryAfter: -1}},
		{"MCP resource not found (-32002 with uri)", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///x"}}}`),
			nil, want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindNotFound, code: "RESOURCE_NOT_FOUND", retryAfter: -1}},
		{"MCP URL elicitation required", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":4,"error":{"code":-32042,"message":"auth needed","data":{"elicitations":[]}}}`),
			method("tools/call"), want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindAuth, code: "URL_ELICITATION_REQUIRED", retryAfter: -1}},
		{"MCP tool error without structured content", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"disk full"}],"isError":true}}`),
			nil, want{protocol: ProtocolMCP, envelope: EnvMCPToolResult, kind: KindInternal, code: "TOOL_ERROR", retryAfter: -1, typed: true}},
		{"SSE error event (a2a-js)", httpResp(200, map[string]string{"Content-Type": "text/event-stream"}, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"task\",\"id\":\"t1\",\"status\":{\"state\":\"working\"}}}\n\nevent: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"stream broke\"}}\n\n"),
			nil, want{protocol: ProtocolUnknown, envelope: EnvJSONRPCError, kind: KindInternal, retryAfter: -1}},
		{"SSE task failed (v1)", httpResp(200, map[string]string{"Content-Type": "text/event-stream"}, "data: {\"statusUpdate\":{\"taskId\":\"t9\",\"status\":{\"state\":\"TASK_STATE_FAILED\",\"message\":{\"parts\":[{\"text\":\"model quota exhausted\"}]}}}}\n\n"),
			nil, want{protocol: ProtocolA2A, envelope: EnvTaskFailed, kind: KindInternal, code: "TASK_FAILED", retryAfter: -1, taskID: "t9"}},
		{"SSE Status error (REST)", httpResp(200, map[string]string{"Content-Type": "text/event-stream"}, "data: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\",\"message\":\"busy\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"AGENT_OVERLOADED\",\"domain\":\"x.example\"}]}}\n\n"),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindOverload, code: "AGENT_OVERLOADED", retryAfter: -1, typed: true}},
		{"chunked body", []byte("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\n{\"code\":\"thread_not_found\"\r\n10\r\n,\"message\":\"no\"}\r\n0\r\n\r\n"),
			nil, want{protocol: ProtocolAgentRelay, envelope: EnvRelayFlat, kind: KindNotFound, code: "thread_not_found", retryAfter: -1, typed: true}},
		{"a2a-rs detail without @type", httpResp(404, jsonCT, `{"error":{"code":404,"status":"NOT_FOUND","message":"nf","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"timestamp":"2026-04-30T10:00:00.123456+00:00"}},{"taskId":"t1"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindNotFound, code: "TASK_NOT_FOUND", retryAfter: -1, typed: true}},
		{"HTTP+JSON without ErrorInfo", httpResp(400, jsonCT, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad","details":[]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindInvalid, retryAfter: -1, findings: []Finding{FindErrorInfoMissing}}},
		{"DebugInfo exposed", httpResp(500, jsonCT, `{"error":{"code":500,"status":"INTERNAL","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.DebugInfo","stackEntries":["a.go:1"],"detail":"nil pointer"},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindInternal, code: "INTERNAL_ERROR", retryAfter: -1, typed: true, findings: []Finding{FindDebugInfoExposed}}},
		{"activation hint missing", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32008,"message":"extension required","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"EXTENSION_SUPPORT_REQUIRED","domain":"a2a-protocol.org"}]}}`),
			nil, want{protocol: ProtocolA2A, envelope: EnvJSONRPCError, kind: KindUnsupported, code: "EXTENSION_SUPPORT_REQUIRED", retryAfter: -1, typed: true, findings: []Finding{FindActivationHintMissing}}},
		{"duplicate keys", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"a"},"error":{"code":-32602,"message":"b"}}`),
			nil, want{protocol: ProtocolUnknown, envelope: EnvJSONRPCError, kind: KindInvalid, retryAfter: -1, findings: []Finding{FindDuplicateKey}}},
	}
	for _, c := range cases {
		if c.w.violations == 0 {
			c.w.violations = -1
		}
		got := decodeBytes(t, c.in, c.hs...)
		check(t, c.name, got, c.w)
	}
}

func TestRetryHeaders(t *testing.T) {
	const now = 1764489600000 // 2025-11-30T08:00:00Z
	cases := []struct {
		name    string
		headers map[string]string
		ms      int64
		src     Source
		limit   string
	}{
		{"seconds", map[string]string{"Retry-After": "12"}, 12000, SrcRetryAfter, ""},
		{"IMF-fixdate", map[string]string{"Retry-After": "Sun, 30 Nov 2025 08:00:30 GMT"}, 30000, SrcRetryAfter, ""},
		{"RFC 850 date", map[string]string{"Retry-After": "Sunday, 30-Nov-25 08:01:00 GMT"}, 60000, SrcRetryAfter, ""},
		{"asctime date", map[string]string{"Retry-After": "Sun Nov 30 08:00:05 2025"}, 5000, SrcRetryAfter, ""},
		{"date in the past", map[string]string{"Retry-After": "Sun, 30 Nov 2025 07:00:00 GMT"}, 0, SrcRetryAfter, ""},
		{"RateLimit draft -10", map[string]string{"RateLimit": `"per-caller";r=0;t=12`, "RateLimit-Policy": `"per-caller";q=60;w=60`}, 12000, SrcRateLimit, "per-caller"},
		{"RateLimit draft -07", map[string]string{"RateLimit": "limit=100, remaining=0, reset=7"}, 7000, SrcRateLimit, ""},
		{"RateLimit-Reset draft -05", map[string]string{"RateLimit-Limit": "10", "RateLimit-Remaining": "0", "RateLimit-Reset": "9"}, 9000, SrcRateLimit, ""},
		{"Retry-After beats RateLimit", map[string]string{"Retry-After": "20", "RateLimit": `"d";r=0;t=12`}, 20000, SrcRetryAfter, "d"},
		{"X-RateLimit-Reset delta (Envoy)", map[string]string{"X-RateLimit-Reset": "15"}, 15000, SrcXRateLimit, ""},
		{"X-RateLimit-Reset epoch (GitHub)", map[string]string{"X-RateLimit-Reset": "1764489645", "X-RateLimit-Resource": "core"}, 45000, SrcXRateLimit, "core"},
		// REFERENCE §5c examples: several policies, a partition key, and t on the current draft.
		{"RateLimit draft -10, two policies", map[string]string{"RateLimit-Policy": `"burst";q=100;w=60,"daily";q=1000;w=86400`, "RateLimit": `"default";r=50;t=30`}, 30000, SrcRateLimit, "default"},
		{"RateLimit with a partition key", map[string]string{"RateLimit": `"per-key";r=0;t=4;pk=:cHsdsRa894==:`}, 4000, SrcRateLimit, "per-key"},
		{"RateLimit draft -06 (three fields)", map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "6", "RateLimit-Policy": "100;w=10"}, 6000, SrcRateLimit, ""},
		{"X-RateLimit-Reset epoch milliseconds", map[string]string{"X-RateLimit-Reset": "1764489603000"}, 3000, SrcXRateLimit, ""},
		{"no hint at all", map[string]string{"RateLimit": "garbage;;"}, -1, SrcNone, ""},
	}
	for _, c := range cases {
		got := decodeBytes(t, httpResp(429, c.headers, ""))
		if got.RetryAfterMS != c.ms || got.RetryAfterSource != c.src || got.Limit != c.limit {
			t.Errorf("%s: retry_after_ms, source, limit = %d, %s, %q; want %d, %s, %q", c.name,
				got.RetryAfterMS, got.RetryAfterSource, got.Limit, c.ms, c.src, c.limit)
		}
	}
}

// TestRedaction: no credential or customer value survives into a record.
func TestRedaction(t *testing.T) {
	secrets := []string{
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
		"jane.doe@example.com",
		"+1 415 555 0100",
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	}
	// A hex digest is an identifier, not a secret (issue 11: git SHAs and
	// sha256 digests were replaced as keys); it must survive.
	const sha = "3f786850e387550fdab836ed7e6dc881de23001b"
	msg := "Bearer tok_live_9f8e7d6c5b4a echoed: " + strings.Join(secrets, " ; ") + " at commit " + sha
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":` + fmt.Sprintf("%q", msg) +
		`,"data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"contact.email","description":"jane.doe@example.com is not allowed"}]}]}}`
	d := NewDecoder(Options{})
	var rec Record
	if err := d.DecodeMessage(httpResp(200, jsonCT, body), nil, 0, &rec); err != nil {
		t.Fatal(err)
	}
	js, _ := rec.MarshalJSON()
	raw := string(d.RawBody())
	for _, s := range append(secrets, "tok_live_9f8e7d6c5b4a") {
		if strings.Contains(string(js), s) {
			t.Errorf("record contains %q: %s", s, js)
		}
		if strings.Contains(raw, s) {
			t.Errorf("kept raw body contains %q: %s", s, raw)
		}
	}
	if !strings.Contains(rec.Message, sha) {
		t.Errorf("the commit SHA did not survive: %q", rec.Message)
	}
	if !rec.HasFinding(FindEchoesSecret) {
		t.Errorf("finding %s missing: %v", FindEchoesSecret, rec.Findings)
	}
	if len(rec.FieldViolations) != 1 || rec.FieldViolations[0].Field != "contact.email" {
		t.Errorf("field violations = %+v; want the location contact.email kept", rec.FieldViolations)
	}
	// Identifiers needed for support are not secrets.
	keep := "Task 5b0c2a0e-2f5e-4b7e-9d38-4a1f0c6f3a11 failed at 2026-04-30T10:16:00Z after 60 requests per 60 s (err_01HZ9RATE01)"
	if got := RedactString(keep); got != keep {
		t.Errorf("RedactString(%q) = %q; want it unchanged", keep, got)
	}
}

// TestKafkaHeadersContext: a raw HTTP response with its context in Kafka headers.
func TestKafkaHeadersContext(t *testing.T) {
	hs := []MsgHeader{
		{Key: "errtrail-v", Value: []byte("1")}, {Key: "errtrail-event-id", Value: []byte("tap-1")},
		{Key: "errtrail-observed-at", Value: []byte("1764489600500")}, {Key: "errtrail-agent", Value: []byte("billing-agent")},
		{Key: "errtrail-caller", Value: []byte("c-9")}, {Key: "errtrail-method", Value: []byte("SendMessage")},
		{Key: "errtrail-attempt", Value: []byte("3")}, {Key: "errtrail-source-kind", Value: []byte("gateway")},
	}
	got := decodeBytes(t, httpResp(503, nil, ""), hs...)
	if got.EventID != "tap-1" || got.ObservedAtMS != 1764489600500 || got.Agent != "billing-agent" ||
		got.Caller != "c-9" || got.Attempt != 3 || got.SourceKind != "gateway" || got.Kind != KindOverload {
		t.Errorf("got %+v", got)
	}
}

// TestAAPInMetadata: a2a-python 1.3.0 copies an error's data into the
// ErrorInfo metadata, so the aap.error arrives inside an a2a-protocol.org
// INTERNAL_ERROR (captured in testdata/corpus/a2a-python-1/jsonrpc-aap-error.http).
// The typed payload still decides: an AAP rate limit, not an internal error.
func TestAAPInMetadata(t *testing.T) {
	got, err := decodeFile(t, "testdata/corpus/a2a-python-1/jsonrpc-aap-error.http")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "python aap in metadata", got, want{protocol: ProtocolAAP, envelope: EnvJSONRPCError, kind: KindQuota,
		code: "RATE_LIMITED", jsonrpc: -32603, retryAfter: 30000, retryable: TriTrue, typed: true,
		errorID: "err_01HZ9RATE01", violations: -1})
}

func TestRedactShortBearer(t *testing.T) {
	for _, in := range []string{"token Bearer abcdefghij rejected", "basic QWxhZGRpbjpvcGVu", "BEARER xyzxyzxyzxyz"} {
		if got := RedactString(in); !strings.Contains(got, "[token]") {
			t.Errorf("RedactString(%q) = %q; want the credential replaced", in, got)
		}
	}
}
