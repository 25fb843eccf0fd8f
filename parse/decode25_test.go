package parse

import "testing"

// Issue 25 §2: decoding that hid seed 000's rules. Each test tells the
// reply the decoder used to misread, what it made of it, and asserts both
// the corrected record and a neighbouring reply whose reading must not
// change.

// A PAP aap.error that lacks only its "type" member used to be read as an
// AgentRelay flat error (a string code at the top level): protocol
// agentrelay, an unknown symbol, no AAP rule checked. It is an aap.error
// missing a required member.
func TestPAPWithoutTypeIsAAP(t *testing.T) {
	rec := decodeFindings(t, httpRaw("422 Unprocessable Entity", "",
		`{"error_id":"error_example_001","code":"UNSUPPORTED_FILTER","message":"This deployment does not support features_all.","retryable":false,`+
			`"details":{"errors":[{"instanceLocation":"/filters/features_all","keyword":"capability","error":"Filter is not advertised."}]},"created_at":"2026-10-24T15:00:00Z"}`))
	check(t, "pap-no-type", rec, want{protocol: ProtocolAAP, binding: BindingHTTP, envelope: EnvAAPError, kind: KindInvalid,
		code: "UNSUPPORTED_FILTER", httpStatus: 422, retryAfter: -1, retryable: TriFalse, typed: true, errorID: "error_example_001",
		violations: 1, findings: []Finding{FindAAPRequiredMissing}, absent: []Finding{FindPAPStatusNotMapped, FindPAPBodyNotDirect}})

	// An AgentRelay flat error stays one: its symbol is no AAP code.
	rel := decodeFindings(t, httpRaw("429 Too Many Requests", "Retry-After: 14\r\n",
		`{"code":"rate_limited","message":"Too many requests","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTG","details":{"retry_after_ms":14000}}`))
	check(t, "relay-flat", rel, want{protocol: ProtocolAgentRelay, envelope: EnvRelayFlat, kind: KindQuota, code: "rate_limited",
		retryAfter: 14000, typed: true, violations: -1, absent: []Finding{FindAAPRequiredMissing}})
}

// A PAP reply whose aap.error is wrapped in {"error": …} used to be read as
// an A2A HTTP+JSON Status with an empty code (kind from the status alone,
// errorinfo_missing). It is the AAP error it carries, flagged because PAP
// sends the aap.error as the body itself.
func TestPAPWrappedInErrorIsAAP(t *testing.T) {
	rec := decodeFindings(t, httpRaw("429 Too Many Requests", "Retry-After: 30\r\n",
		`{"error":{"type":"aap.error","error_id":"err_01HZ9RATE03","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}`))
	check(t, "pap-wrapped", rec, want{protocol: ProtocolAAP, binding: BindingHTTP, envelope: EnvAAPError, kind: KindQuota,
		code: "RATE_LIMITED", httpStatus: 429, retryAfter: 30000, retryable: TriTrue, typed: true, errorID: "err_01HZ9RATE03",
		violations: -1, findings: []Finding{FindPAPBodyNotDirect},
		absent: []Finding{FindErrorInfoMissing, FindAAPRequiredMissing, FindPAPStatusNotMapped, FindRetryDelayDisagree}})

	// A google.rpc.Status under "error" is still one.
	st := decodeFindings(t, twinRest429)
	check(t, "rest-429", st, want{protocol: ProtocolA2A, envelope: EnvRPCStatus, kind: KindQuota, code: "RATE_LIMIT_EXCEEDED",
		retryAfter: 12000, typed: true, violations: -1, absent: []Finding{FindPAPBodyNotDirect}})
}

// An MCP tool result carrying an aap.error without isError (or with
// isError false) used to be dead-lettered as not_an_error. Seed 000: "Do
// not treat an HTTP 200 containing an MCP tool error as success." It is a
// record, flagged.
func TestMCPToolErrorWithoutIsError(t *testing.T) {
	for name, isError := range map[string]string{"absent": ``, "false": `"isError":false,`} {
		reply := httpRaw("200 OK", "", `{"jsonrpc":"2.0","id":3,"result":{`+isError+
			`"structuredContent":{"type":"aap.error","error_id":"error_example_003","code":"VEHICLE_NOT_FOUND","message":"No listing matches the vin.","retryable":false,"created_at":"2026-10-24T15:00:00Z"},`+
			`"content":[{"type":"text","text":"{\"type\":\"aap.error\",\"error_id\":\"error_example_003\",\"code\":\"VEHICLE_NOT_FOUND\",\"message\":\"No listing matches the vin.\",\"retryable\":false,\"created_at\":\"2026-10-24T15:00:00Z\"}"}]}}`)
		rec, err := decodeErr(t, []byte(reply))
		if err != "" {
			t.Fatalf("isError %s: %v", name, err)
		}
		check(t, "isError "+name, rec, want{protocol: ProtocolAAP, binding: BindingJSONRPC, envelope: EnvMCPToolResult,
			kind: KindNotFound, code: "VEHICLE_NOT_FOUND", retryAfter: -1, retryable: TriFalse, typed: true, errorID: "error_example_003",
			violations: -1, findings: []Finding{FindAAPMCPNotIsError}, absent: []Finding{FindAAPMCPContentMismatch}})
	}
	// The same over an event stream (MCP streamable HTTP answers tools/call
	// as SSE): the event is found although it says neither error nor isError.
	sse := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: message\r\ndata: " +
		`{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"type":"aap.error","error_id":"error_example_003","code":"VEHICLE_NOT_FOUND","message":"No listing matches the vin.","retryable":false,"created_at":"2026-10-24T15:00:00Z"}}}` +
		"\r\n\r\n"
	if rec, err := decodeErr(t, []byte(sse)); err != "" || rec.Code != "VEHICLE_NOT_FOUND" || !rec.HasFinding(FindAAPMCPNotIsError) {
		t.Errorf("SSE tool result without isError: %s, code %q, findings %v", err, rec.Code, rec.Findings)
	}
	// A tool result that carries no error stays a success.
	_, err := decodeErr(t, []byte(httpRaw("200 OK", "", `{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"type":"vehicle.search.response","items":[]},"content":[{"type":"text","text":"{}"}]}}`)))
	if err != ErrNotAnError {
		t.Errorf("a successful tool result: err %v; want not_an_error", err)
	}
}

// google.rpc.Status members sent at the top level of the body used to be
// read as a2a-js' legacy flat error: the HTTP status 429 became the
// record's JSON-RPC code. They are a Status (the finding for the missing
// "error" wrapper is seed 003's rule), with no JSON-RPC code at all.
func TestStatusMembersAtTopLevel(t *testing.T) {
	rec := decodeFindings(t, httpRaw("429 Too Many Requests", "Retry-After: 12\r\n",
		`{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Caller orchestrator-7 exceeded 60 SendMessage calls per minute","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}`))
	check(t, "status-top-level", rec, want{protocol: ProtocolA2A, binding: BindingHTTP, envelope: EnvRPCStatus, kind: KindQuota,
		code: "RATE_LIMIT_EXCEEDED", httpStatus: 429, grpc: "RESOURCE_EXHAUSTED", retryAfter: 12000, typed: true, limit: "per-caller",
		violations: -1, absent: []Finding{FindStatusBodyMismatch}})
	if rec.HasJSONRPC {
		t.Errorf("jsonrpc_code %d from a Status body; want none", rec.JSONRPCCode)
	}
	// a2a-js v0.3's flat {code, message} keeps its (negative) JSON-RPC code.
	legacy := decodeFindings(t, httpRaw("404 Not Found", "", `{"code":-32001,"message":"Task not found","data":{"taskId":"t1"}}`))
	if legacy.Envelope != EnvLegacyFlat || !legacy.HasJSONRPC || legacy.JSONRPCCode != -32001 {
		t.Errorf("legacy flat: envelope %s jsonrpc %v %d; want legacy_flat -32001", legacy.Envelope, legacy.HasJSONRPC, legacy.JSONRPCCode)
	}
}

// Retry-After: 5 with retry_after_ms 30000 used to record 5,000 ms (the
// header ranks first). Seed 000: "Wait at least the applicable minimum":
// the record keeps the larger delay, and the disagreement is flagged.
func TestAAPRetryKeepsTheLargerDelay(t *testing.T) {
	short := decodeFindings(t, httpRaw("429 Too Many Requests", "Retry-After: 5\r\n",
		`{"type":"aap.error","error_id":"err_01HZ9RATE03","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}`))
	if short.RetryAfterMS != 30000 || short.RetryAfterSource != SrcAAPDetails {
		t.Errorf("Retry-After 5, retry_after_ms 30000: %d ms from %s; want 30000 from aap_details", short.RetryAfterMS, short.RetryAfterSource)
	}
	if !short.HasFinding(FindRetryDelayDisagree) {
		t.Errorf("the disagreement is not flagged: %v", short.Findings)
	}
	// The header is the larger: it stays.
	long := decodeFindings(t, httpRaw("429 Too Many Requests", "Retry-After: 60\r\n",
		`{"type":"aap.error","error_id":"err_01HZ9RATE03","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}`))
	if long.RetryAfterMS != 60000 || long.RetryAfterSource != SrcRetryAfter {
		t.Errorf("Retry-After 60, retry_after_ms 30000: %d ms from %s; want 60000 from retry_after", long.RetryAfterMS, long.RetryAfterSource)
	}
	// Agreeing: the header's value, no finding.
	same := decodeFindings(t, twinPAP429)
	if same.RetryAfterMS != 30000 || same.RetryAfterSource != SrcRetryAfter || len(same.Findings) != 0 {
		t.Errorf("agreeing delays: %d ms from %s, findings %v", same.RetryAfterMS, same.RetryAfterSource, same.Findings)
	}
}

// a2a-sdk 1.3.0 answers an unknown route with a 307 redirect and no body;
// it used to be stored as an error reply of kind unknown. A redirect is
// not an error reply: not_an_error. An empty 4xx stays an error.
func TestRedirectIsNotAnError(t *testing.T) {
	for _, reply := range []string{
		"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/message:send\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 301 Moved Permanently\r\nLocation: /a2a/\r\n\r\n",
	} {
		if _, err := decodeErr(t, []byte(reply)); err != ErrNotAnError {
			t.Errorf("%q: err %v; want not_an_error", reply, err)
		}
	}
	rec, err := decodeErr(t, []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
	if err != "" || rec.Kind != KindNotFound || !rec.HasFinding(FindBodyMissing) {
		t.Errorf("empty 404: %v, kind %s, findings %v", err, rec.Kind, rec.Findings)
	}
}

// MCP 2026-07-28 reports a missing resource as -32602 with data.uri (it
// replaced -32002). It used to read as kind invalid with no code.
func TestMCPResourceNotFound2026(t *testing.T) {
	rec := decodeFindings(t, httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///project/missing.txt"}}}`))
	check(t, "mcp-32602-uri", rec, want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindNotFound, code: "RESOURCE_NOT_FOUND",
		jsonrpc: -32602, retryAfter: -1, retryable: TriFalse, violations: -1})
	// -32002 (up to 2025-11-25) reads the same.
	old := decodeFindings(t, httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///project/missing.txt"}}}`))
	check(t, "mcp-32002-uri", old, want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindNotFound, code: "RESOURCE_NOT_FOUND",
		jsonrpc: -32002, retryAfter: -1, retryable: TriFalse, violations: -1})
	// -32602 without a uri is invalid params (an unknown tool, bad arguments).
	inv := decodeFindings(t, httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: search_vehicles"}}`))
	if inv.Kind != KindInvalid || inv.Code == "RESOURCE_NOT_FOUND" {
		t.Errorf("-32602 without uri: kind %s code %q; want invalid", inv.Kind, inv.Code)
	}
}

// A JSON-RPC error whose error object is an aap.error (a string code, no
// number) used to be dead-lettered as wrong_type: the skill failure and
// every rule about where it belongs were lost. It is a record; sent by an
// MCP server (tools/call) it is flagged as a skill failure sent as a
// protocol error.
func TestJSONRPCErrorObjectIsAAP(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":12,"error":{"type":"aap.error","error_id":"error_example_004","code":"VEHICLE_NOT_FOUND","message":"No listing matches the requested vin.","retryable":false,"created_at":"2026-10-24T15:00:00Z"}}`
	rec, err := decodeErr(t, []byte(httpRaw("200 OK", "", body)), methodHdr("tools/call")...)
	if err != "" {
		t.Fatalf("dead-lettered: %s", err)
	}
	check(t, "jsonrpc-error-is-aap", rec, want{protocol: ProtocolAAP, binding: BindingJSONRPC, envelope: EnvJSONRPCError,
		kind: KindNotFound, code: "VEHICLE_NOT_FOUND", retryAfter: -1, retryable: TriFalse, typed: true, errorID: "error_example_004",
		violations: -1, findings: []Finding{FindAAPMCPProtocolError}})
	if rec.HasJSONRPC {
		t.Errorf("jsonrpc_code %d; the error has none", rec.JSONRPCCode)
	}
	// A JSON-RPC error with a string code that is no aap.error stays a
	// wrong_type dead letter.
	if _, err := decodeErr(t, []byte(httpRaw("200 OK", "", `{"jsonrpc":"2.0","id":1,"error":{"code":"oops","message":"x"}}`))); err != ErrWrongType {
		t.Errorf("string code: %s; want wrong_type", err)
	}
}
