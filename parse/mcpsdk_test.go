package parse

// Issue 14 §5: what real MCP servers built with the official Python and
// TypeScript SDKs send that the decoder misread. Each test states what must
// happen and what must not; the replies are from the captured corpus
// (testdata/corpus/mcp-python, mcp-typescript) or built like them.

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func methodHdr(m string) []MsgHeader { return []MsgHeader{{Key: "errtrail-method", Value: []byte(m)}} }

// decodeErr decodes data and returns the dead-letter reason ("" for a record).
func decodeErr(t *testing.T, data []byte, hs ...MsgHeader) (*Record, ErrReason) {
	t.Helper()
	d := NewDecoder(Options{})
	var rec Record
	err := d.DecodeMessage(data, hs, 1764489600000, &rec)
	if err == nil {
		return rec.Clone(), ""
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *DecodeError", err)
	}
	return rec.Clone(), de.Reason
}

func readCorpus(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dropHeaderLine removes one header line of a raw HTTP response.
func dropHeaderLine(raw []byte, name string) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if k, _, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(k), name) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// Gap 1. The MCP Python SDK answers `tasks/get` (an A2A method name) with
// -32601 and an Mcp-Session-Id header. The method alone made it A2A; the
// transport header says MCP. Typed details still win over the header.
func TestTransportHeaderDecidesProtocol(t *testing.T) {
	for _, file := range []string{"mcp-python/json-unknown-method.http", "mcp-python/sse-unknown-method.http", "mcp-typescript/json-unknown-method.http"} {
		raw := readCorpus(t, file)
		if !bytes.Contains(bytes.ToLower(raw), []byte("mcp-session-id:")) {
			t.Fatalf("%s: capture has no Mcp-Session-Id header", file)
		}
		rec := decodeBytes(t, raw, methodHdr("tasks/get")...)
		check(t, file, rec, want{protocol: ProtocolMCP, envelope: EnvJSONRPCError, kind: KindUnsupported, jsonrpc: -32601, retryAfter: -2, violations: -1})
		// Must not: without the header the same reply is decided by the
		// method, as before.
		rec = decodeBytes(t, dropHeaderLine(raw, "Mcp-Session-Id"), methodHdr("tasks/get")...)
		if rec.Protocol != ProtocolA2A {
			t.Errorf("%s without Mcp-Session-Id: protocol = %s; want a2a (from the method)", file, rec.Protocol)
		}
	}

	// -32001 is A2A TaskNotFound once A2A is known; the TypeScript SDK sends
	// it for an unknown session (REFERENCE §9).
	rpcErr := `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Session not found"}}`
	hdr := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	secret := "5f1c0d7e9a2b4c6d8e0f1a2b3c4d5e6f"
	cases := []struct {
		name    string
		headers map[string]string
		method  string
		want    Protocol
		code    string
	}{
		{"Mcp-Session-Id", hdr("Mcp-Session-Id", secret), "", ProtocolMCP, ""},
		{"mcp-session-id lower case", hdr("mcp-session-id", secret), "", ProtocolMCP, ""},
		{"MCP-Protocol-Version", hdr("MCP-Protocol-Version", "2025-11-25"), "", ProtocolMCP, ""},
		{"Mcp-Session-Id beats an A2A method", hdr("Mcp-Session-Id", secret), "tasks/get", ProtocolMCP, ""},
		{"A2A-Extensions", hdr("A2A-Extensions", "https://example.com/ext/v1"), "", ProtocolA2A, "TASK_NOT_FOUND"},
		{"X-A2A-Extensions (v0.3)", hdr("X-A2A-Extensions", "https://example.com/ext/v1"), "", ProtocolA2A, "TASK_NOT_FOUND"},
		{"A2A-Version", hdr("A2A-Version", "1.0"), "", ProtocolA2A, "TASK_NOT_FOUND"},
		{"A2A-Extensions beats an MCP method", hdr("A2A-Extensions", "https://example.com/ext/v1"), "tools/call", ProtocolA2A, "TASK_NOT_FOUND"},
		// Must not: headers of two protocols decide nothing; the method does.
		{"both protocols' headers", hdr("Mcp-Session-Id", secret, "A2A-Version", "1.0"), "tasks/get", ProtocolA2A, "TASK_NOT_FOUND"},
		{"no header, no method", hdr(), "", ProtocolUnknown, ""},
		{"unrelated header", hdr("X-Session-Id", secret), "", ProtocolUnknown, ""},
	}
	for _, c := range cases {
		var hs []MsgHeader
		if c.method != "" {
			hs = methodHdr(c.method)
		}
		raw := httpResp(404, c.headers, rpcErr)
		rec := decodeBytes(t, raw, hs...)
		if rec.Protocol != c.want || rec.Code != c.code {
			t.Errorf("%s: protocol, code = %s, %q; want %s, %q", c.name, rec.Protocol, rec.Code, c.want, c.code)
		}
		js, _ := rec.MarshalJSON()
		if bytes.Contains(js, []byte(secret)) {
			t.Errorf("%s: the session id reached the record: %s", c.name, js)
		}
	}

	// Typed details still win: an a2a-protocol.org ErrorInfo behind an
	// Mcp-Session-Id header is A2A; an MCP resource uri behind A2A-Extensions is MCP.
	typedA2A := `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`
	if rec := decodeBytes(t, httpResp(200, hdr("Mcp-Session-Id", secret), typedA2A)); rec.Protocol != ProtocolA2A || rec.Code != "TASK_NOT_FOUND" {
		t.Errorf("ErrorInfo a2a-protocol.org behind Mcp-Session-Id: protocol, code = %s, %q; want a2a, TASK_NOT_FOUND", rec.Protocol, rec.Code)
	}
	typedMCP := `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///x"}}}`
	if rec := decodeBytes(t, httpResp(200, hdr("A2A-Extensions", "https://example.com/ext/v1"), typedMCP)); rec.Protocol != ProtocolMCP || rec.Code != "RESOURCE_NOT_FOUND" {
		t.Errorf("MCP uri behind A2A-Extensions: protocol, code = %s, %q; want mcp, RESOURCE_NOT_FOUND", rec.Protocol, rec.Code)
	}

	// Event JSON drops Mcp-Session-Id as a credential before the headers are
	// read; its presence must still count, in both header forms, and its
	// value must not reach the record.
	for _, headers := range []string{
		`{"Content-Type":"application/json","Mcp-Session-Id":"` + secret + `"}`,
		`[["Content-Type","application/json"],["mcp-session-id","` + secret + `"]]`,
	} {
		ev := `{"v":1,"observed_at":1764489600000,"method":"tasks/get","reply":{"http_status":200,"headers":` + headers +
			`,"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}"}}`
		rec := decodeBytes(t, []byte(ev))
		if rec.Protocol != ProtocolMCP {
			t.Errorf("event JSON with headers %s: protocol = %s; want mcp", headers, rec.Protocol)
		}
		if js, _ := rec.MarshalJSON(); bytes.Contains(js, []byte(secret)) {
			t.Errorf("event JSON: the session id reached the record: %s", js)
		}
	}
}

// Gap 2. An HTTP 2xx that carries no error is a success: refused as
// not_an_error, like a JSON-RPC result already was.
func TestSuccessIsNotAnError(t *testing.T) {
	card := `{"name":"research-agent","description":"finds things","version":"1.0.0","supportedInterfaces":[{"url":"https://research.example/a2a","protocolBinding":"JSONRPC"}],"capabilities":{"streaming":true},"skills":[]}`
	refused := []struct {
		name string
		in   []byte
	}{
		{"200 empty body", httpResp(200, nil, "")},
		{"202 empty body (a notification accepted)", httpResp(202, jsonCT, "")},
		{"204 no content", httpResp(204, nil, "")},
		{"200 whitespace only", httpResp(200, jsonCT, " \r\n")},
		{"200 agent card", httpResp(200, jsonCT, card)},
		{"200 JSON-RPC result", httpResp(200, jsonCT, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
		{"200 JSON array", httpResp(200, jsonCT, `[1,2,3]`)},
		{"event: 200 with an empty body", []byte(`{"v":1,"observed_at":1764489600000,"reply":{"http_status":200,"body":""}}`)},
		{"200 JSON null", httpResp(200, jsonCT, "null")},
		{"event: 200 body_json null", []byte(`{"v":1,"observed_at":1764489600000,"reply":{"http_status":200,"body_json":null}}`)},
		{"event: 200 without a body", []byte(`{"v":1,"observed_at":1764489600000,"reply":{"http_status":200}}`)},
		{"event: 200 body_json agent card", []byte(`{"v":1,"observed_at":1764489600000,"reply":{"http_status":200,"body_json":` + card + `}}`)},
		{"mcp-python session DELETE", readCorpus(t, "mcp-python/json-session-delete.http")},
		{"mcp-typescript session DELETE (chunked, empty)", readCorpus(t, "mcp-typescript/json-session-delete.http")},
		{"mcp-python notifications/initialized (202)", readCorpus(t, "mcp-python/json-initialized-accepted.http")},
		{"mcp-typescript initialize result", readCorpus(t, "mcp-typescript/json-initialize-result.http")},
		{"mcp-python tools/list over SSE", readCorpus(t, "mcp-python/sse-tools-list-result.http")},
	}
	for _, c := range refused {
		if _, reason := decodeErr(t, c.in); reason != ErrNotAnError {
			t.Errorf("%s: reason = %q; want %q", c.name, reason, ErrNotAnError)
		}
	}

	// Must not: errors behind a 2xx, and empty or unrecognized bodies behind
	// an error status, are still records.
	kept := []struct {
		name string
		in   []byte
		w    want
	}{
		{"200 JSON-RPC error (seed 002)", nil, want{}},
		{"200 MCP tool error", readCorpus(t, "mcp-python/json-tool-error.http"),
			want{protocol: ProtocolMCP, envelope: EnvMCPToolResult, kind: KindInternal, code: "TOOL_ERROR", typed: true, retryAfter: -2, violations: -1}},
		{"200 bare JSON string", httpResp(200, jsonCT, `"agent is overloaded"`),
			want{protocol: ProtocolUnknown, envelope: EnvJSONString, kind: KindUnknown, retryAfter: -2, violations: -1}},
		{"200 HTML page from a proxy", httpResp(200, map[string]string{"Content-Type": "text/html"}, "<html>busy</html>"),
			want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindUnknown, retryAfter: -2, violations: -1}},
		{"400 empty body", httpResp(400, nil, ""),
			want{protocol: ProtocolUnknown, envelope: EnvNone, kind: KindInvalid, retryAfter: -2, violations: -1, findings: []Finding{FindBodyMissing}}},
		{"503 unrecognized JSON", httpResp(503, jsonCT, `{"state":"draining"}`),
			want{protocol: ProtocolUnknown, envelope: EnvUnrecognized, kind: KindOverload, retryAfter: -2, violations: -1}},
		{"event without http_status, unrecognized JSON", []byte(`{"v":1,"observed_at":1764489600000,"reply":{"body":"{\"state\":\"draining\"}"}}`),
			want{protocol: ProtocolUnknown, envelope: EnvUnrecognized, kind: KindUnknown, retryAfter: -2, violations: -1}},
	}
	seed, err := os.ReadFile("testdata/seeds/seed002-jsonrpc-200-ratelimit.http")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kept {
		in := c.in
		if in == nil {
			in = seed
			rec, reason := decodeErr(t, in)
			if reason != "" || rec.Kind != KindQuota {
				t.Errorf("%s: reason %q, kind %s; want a quota record", c.name, reason, rec.Kind)
			}
			continue
		}
		rec, reason := decodeErr(t, in)
		if reason != "" {
			t.Errorf("%s: refused as %q; want a record", c.name, reason)
			continue
		}
		c.w.binding = ""
		check(t, c.name, rec, c.w)
	}
}

// Gap 3. A JSON-RPC error.data array of plain objects (here the pydantic
// issue list an MCP Python tool raised with the SDK's MCPError) is not the
// A2A typed-detail array: it must not make the reply A2A.
func TestUntypedDataArrayIsNotA2A(t *testing.T) {
	raw := readCorpus(t, "mcp-python/json-tool-validation-error-list.http")
	bare := dropHeaderLine(raw, "Mcp-Session-Id") // no transport evidence, no method
	rec := decodeBytes(t, bare)
	check(t, "pydantic issue list", rec, want{protocol: ProtocolUnknown, envelope: EnvJSONRPCError, kind: KindInvalid, jsonrpc: -32602,
		retryAfter: -2, violations: -1, absent: []Finding{FindValidationWithoutFields}})
	// With the header and the method the capture carries, it is MCP.
	rec = decodeBytes(t, raw, methodHdr("tools/call")...)
	if rec.Protocol != ProtocolMCP {
		t.Errorf("pydantic issue list with Mcp-Session-Id: protocol = %s; want mcp", rec.Protocol)
	}

	pydantic := `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":[{"type":"missing","loc":["params","message"],"msg":"Field required"}]}}`
	if rec := decodeBytes(t, httpResp(200, jsonCT, pydantic)); rec.Protocol != ProtocolUnknown {
		t.Errorf("untyped data array: protocol = %s; want unknown", rec.Protocol)
	}
	// Must not: an array with typed members is still A2A evidence, whether
	// or not the typed member is an ErrorInfo, and wherever it stands.
	typed := []struct{ data, code string }{
		{`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"example.com"}]`, "INVALID_PARAMS"},
		{`[{"type":"missing","loc":["x"]},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message","description":"required"}]}]`, "TASK_NOT_FOUND"},
		{`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]`, "TASK_NOT_FOUND"},
	}
	for _, c := range typed {
		body := `{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"x","data":` + c.data + `}}`
		if rec := decodeBytes(t, httpResp(200, jsonCT, body)); rec.Protocol != ProtocolA2A || rec.Code != c.code {
			t.Errorf("typed data %s: protocol, code = %s, %q; want a2a, %q", c.data, rec.Protocol, rec.Code, c.code)
		}
	}
}

// The new evidence costs nothing per message: decoding the MCP SDK replies
// (raw HTTP with Mcp-Session-Id, event JSON with the header dropped)
// allocates nothing in steady state, and a 2xx refused costs what every
// dead letter costs (its *DecodeError), no more than the JSON-RPC result
// refusal that existed before.
func TestMCPSDKRepliesAllocateNothing(t *testing.T) {
	d := NewDecoder(Options{KeepRaw: -1})
	var rec Record
	allocs := func(in []byte) float64 {
		d.DecodeMessage(in, nil, 1764489600000, &rec) // warm up
		return testing.AllocsPerRun(50, func() { d.DecodeMessage(in, nil, 1764489600000, &rec) })
	}
	for _, in := range [][]byte{
		readCorpus(t, "mcp-python/json-unknown-method.http"),
		readCorpus(t, "mcp-typescript/sse-tool-error.http"),
		readCorpus(t, "mcp-python/json-tool-validation-error-list.http"),
		[]byte(`{"v":1,"observed_at":1764489600000,"reply":{"http_status":200,"headers":{"Mcp-Session-Id":"abc"},"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}"}}`),
	} {
		if n := allocs(in); n != 0 {
			t.Errorf("%.60q: %v allocations per decode; want 0", in, n)
		}
	}
	result := allocs(readCorpus(t, "mcp-python/json-tools-list-result.http"))
	for _, in := range [][]byte{readCorpus(t, "mcp-python/json-session-delete.http"), httpResp(200, jsonCT, `{"name":"card"}`)} {
		if n := allocs(in); n > result {
			t.Errorf("%.60q refused with %v allocations; a JSON-RPC result is refused with %v", in, n, result)
		}
	}
}
