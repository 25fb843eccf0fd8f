package parse

import (
	"strings"
	"testing"
)

// The rule cases: for each rule, replies that break exactly that rule's
// point, each made from a clean twin by one change. Every violating reply
// must be flagged by its rule; every twin must have no finding at all.

func httpRaw(status string, headers, body string) string {
	return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\n" + headers + "\r\n" + body
}

// Clean twins, one per binding, written from seed 000.
var (
	// A2A JSON-RPC: seed 000's complete throttle response.
	twinA2AThrottle = httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":"req-rate-limited","error":{"code":-32000,"message":"Per-key rate limit exceeded.","data":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"autoagentprotocol.org","metadata":{"code":"RATE_LIMITED","error_id":"err_01HZ9RATE01","retryable":"true","created_at":"2026-04-30T10:16:00Z"}},`+
			`{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"err_01HZ9RATE01","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}]}}`)
	// A2A JSON-RPC validation error.
	twinA2AFilter = httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":"req-7","error":{"code":-32602,"message":"This deployment does not support features_all.","data":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_FILTER","domain":"autoagentprotocol.org","metadata":{"code":"UNSUPPORTED_FILTER","error_id":"error_example_001","retryable":"false","created_at":"2026-10-24T15:00:00Z"}},`+
			`{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"error_example_001","code":"UNSUPPORTED_FILTER","message":"This deployment does not support features_all.","retryable":false,"details":{"errors":[{"instanceLocation":"/filters/features_all","keyword":"capability","error":"Filter is not advertised."}]},"created_at":"2026-10-24T15:00:00Z"}}]}}`)
	// A2A HTTP+JSON: the same throttle as a google.rpc.Status.
	twinA2ARest = httpRaw("429 Too Many Requests", "Retry-After: 30\r\n",
		`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Per-key rate limit exceeded.","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"autoagentprotocol.org","metadata":{"code":"RATE_LIMITED","error_id":"err_01HZ9RATE02","retryable":"true","created_at":"2026-04-30T10:16:00Z"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"},`+
			`{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"err_01HZ9RATE02","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}]}}`)
	// PAP: a direct aap.error body with the mapped status.
	twinPAP = httpRaw("422 Unprocessable Entity", "",
		`{"type":"aap.error","error_id":"error_example_001","code":"UNSUPPORTED_FILTER","message":"This deployment does not support features_all.","retryable":false,`+
			`"details":{"errors":[{"instanceLocation":"/filters/features_all","keyword":"capability","error":"Filter is not advertised."}],"hint":"Read the published search capabilities before forming another query."},"created_at":"2026-10-24T15:00:00Z"}`)
	// MCP: a completed tool result with isError and the typed error twice.
	twinMCP = httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":3,"result":{"isError":true,"structuredContent":{"type":"aap.error","error_id":"error_example_002","code":"SCHEMA_VALIDATION_FAILED","message":"The request does not match the schema.","retryable":false,"details":{"errors":[{"instanceLocation":"/filters/year","keyword":"type","error":"Must be an integer."}]},"created_at":"2026-10-24T15:00:00Z"},`+
			`"content":[{"type":"text","text":"{\"type\":\"aap.error\",\"error_id\":\"error_example_002\",\"code\":\"SCHEMA_VALIDATION_FAILED\",\"message\":\"The request does not match the schema.\",\"retryable\":false,\"details\":{\"errors\":[{\"instanceLocation\":\"/filters/year\",\"keyword\":\"type\",\"error\":\"Must be an integer.\"}]},\"created_at\":\"2026-10-24T15:00:00Z\"}"}]}}`)
)

// Seed 002's replies: the HTTP+JSON and JSON-RPC quota rejections, an
// overload, and a PAP throttle.
var (
	twinRest429 = httpRaw("429 Too Many Requests", "Retry-After: 12\r\n",
		`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Caller orchestrator-7 exceeded 60 SendMessage calls per minute","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller","method":"SendMessage"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"},`+
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"caller:orchestrator-7","description":"60 requests per 60 s"}]}]}}`)
	twinJSONRPC429 = httpRaw("429 Too Many Requests", "Retry-After: 12\r\n",
		`{"jsonrpc":"2.0","id":"req-41","error":{"code":-32603,"message":"Rate limit exceeded","data":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"11.2s"}]}}`)
	// An HTTP-date Retry-After is allowed (seed 000, seed 002): not compared.
	twinJSONRPC429Date = httpRaw("429 Too Many Requests", "Retry-After: Sun, 30 Nov 2025 08:00:12 GMT\r\n",
		`{"jsonrpc":"2.0","id":"req-41","error":{"code":-32603,"message":"Rate limit exceeded","data":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`)
	twinRest503 = httpRaw("503 Service Unavailable", "Retry-After: 30\r\n",
		`{"error":{"code":503,"status":"UNAVAILABLE","message":"Agent is overloaded","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"AGENT_OVERLOADED","domain":"agents.example.com","metadata":{"policy":"concurrency","scope":"agent"}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}`)
	twinPAP429 = httpRaw("429 Too Many Requests", "Retry-After: 30\r\n",
		`{"type":"aap.error","error_id":"err_01HZ9RATE03","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}`)
)

// ruleCase is one violating reply: the twin with old replaced by new.
type ruleCase struct {
	rule     Finding
	name     string
	twin     string
	old, new string // replaced once (old must occur in twin)
}

var ruleCases = []ruleCase{
	{FindRetryDelayDisagree, "rest-header-5-body-12s", twinRest429, "Retry-After: 12", "Retry-After: 5"},
	{FindRetryDelayDisagree, "jsonrpc-header-30-body-11.2s", twinJSONRPC429, "Retry-After: 12", "Retry-After: 30"},
	{FindRetryDelayDisagree, "pap-header-5-body-30000ms", twinPAP429, "Retry-After: 30", "Retry-After: 5"},
	{FindQuotaOverloadSwapped, "rest-quota-503", twinRest429, `429 Too Many Requests`, `503 Service Unavailable`},
	{FindQuotaOverloadSwapped, "rest-quota-status-unavailable", twinRest429, `"code":429,"status":"RESOURCE_EXHAUSTED"`, `"code":429,"status":"UNAVAILABLE"`},
	{FindQuotaOverloadSwapped, "rest-overload-429", twinRest503, `503 Service Unavailable`, `429 Too Many Requests`},
	{FindQuotaOverloadSwapped, "rest-overload-resource-exhausted", twinRest503, `"status":"UNAVAILABLE"`, `"status":"RESOURCE_EXHAUSTED"`},
	{FindQuotaOverloadSwapped, "jsonrpc-quota-503", twinJSONRPC429, `429 Too Many Requests`, `503 Service Unavailable`},
	{FindRetryInfoMissing, "rest-429-no-retryinfo", twinRest429, `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"},`, ``},
	{FindRetryInfoMissing, "jsonrpc-429-no-retryinfo", twinJSONRPC429Date, `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}`, ``},
	{FindAAPRequiredMissing, "pap-no-created_at", twinPAP, `,"created_at":"2026-10-24T15:00:00Z"`, ``},
	{FindAAPRequiredMissing, "a2a-struct-no-error_id", twinA2AThrottle, `"value":{"type":"aap.error","error_id":"err_01HZ9RATE01",`, `"value":{"type":"aap.error",`},
	{FindAAPRequiredMissing, "mcp-retryable-string", twinMCP, `"retryable":false,"details"`, `"retryable":"false","details"`},
	{FindAAPUnknownCode, "pap-own-code", twinPAP, `"code":"UNSUPPORTED_FILTER"`, `"code":"FILTER_NOT_SUPPORTED"`},
	{FindAAPUnknownCode, "mcp-own-code", twinMCP, `"code":"SCHEMA_VALIDATION_FAILED","message"`, `"code":"BAD_YEAR","message"`},
	{FindAAPErrorItemIncomplete, "pap-location-not-pointer", twinPAP, `"instanceLocation":"/filters/features_all"`, `"instanceLocation":"filters.features_all"`},
	{FindAAPErrorItemIncomplete, "mcp-no-keyword", twinMCP, `"keyword":"type",`, ``},
	{FindAAPErrorItemIncomplete, "a2a-no-error-text", twinA2AFilter, `,"error":"Filter is not advertised."`, ``},
	{FindAAPReasonNotCode, "a2a-jsonrpc-reason-internal", twinA2AThrottle, `"reason":"RATE_LIMITED"`, `"reason":"THROTTLED"`},
	{FindAAPReasonNotCode, "a2a-rest-reason-other", twinA2ARest, `"reason":"RATE_LIMITED"`, `"reason":"RATE_LIMIT_EXCEEDED"`},
	{FindAAPDomainWrong, "a2a-jsonrpc-a2a-domain", twinA2AThrottle, `"domain":"autoagentprotocol.org"`, `"domain":"a2a-protocol.org"`},
	{FindAAPDomainWrong, "a2a-rest-own-domain", twinA2ARest, `"domain":"autoagentprotocol.org"`, `"domain":"dealer.example.com"`},
	{FindAAPMetadataNotString, "a2a-jsonrpc-bool-retryable", twinA2AThrottle, `"retryable":"true","created_at"`, `"retryable":true,"created_at"`},
	{FindAAPMetadataNotString, "a2a-rest-bool-retryable", twinA2ARest, `"retryable":"true","created_at"`, `"retryable":true,"created_at"`},
	{FindAAPMetadataIncomplete, "a2a-jsonrpc-no-created_at", twinA2AThrottle, `,"created_at":"2026-04-30T10:16:00Z"}},`, `}},`},
	{FindAAPMetadataIncomplete, "a2a-rest-no-error_id", twinA2ARest, `"metadata":{"code":"RATE_LIMITED","error_id":"err_01HZ9RATE02",`, `"metadata":{"code":"RATE_LIMITED",`},
	{FindAAPPayloadNotStruct, "a2a-jsonrpc-aap-type", twinA2AThrottle, `{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"err_01HZ9RATE01","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}`,
		`{"@type":"type.googleapis.com/aap.error","type":"aap.error","error_id":"err_01HZ9RATE01","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}`},
	{FindAAPPayloadNotStruct, "a2a-rest-no-payload", twinA2ARest, `,{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"err_01HZ9RATE02","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}`, ``},
	{FindAAPJSONRPCCodeMismatch, "a2a-rate-limited-32603", twinA2AThrottle, `"code":-32000`, `"code":-32603`},
	{FindAAPJSONRPCCodeMismatch, "a2a-filter-32000", twinA2AFilter, `"code":-32602`, `"code":-32000`},
}

// a2aPythonWrapping is a2a-python 1.x's reply for an AAP RATE_LIMITED raised
// from a handler: an A2A InternalError (-32603) whose ErrorInfo is
// INTERNAL_ERROR in a2a-protocol.org, the aap.error spread into metadata.
const a2aPythonWrapping = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" +
	`{"jsonrpc":"2.0","id":"req-19","error":{"code":-32603,"message":"Per-key rate limit exceeded.","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org",` +
	`"metadata":{"type":"aap.error","error_id":"err_01HZ9RATE01","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}]}}`

func decodeFindings(t *testing.T, reply string) *Record {
	t.Helper()
	var rec Record
	if err := NewDecoder(Options{}).DecodeMessage([]byte(reply), nil, 1764489600000, &rec); err != nil {
		t.Fatalf("decode: %v\n%s", err, reply)
	}
	return &rec
}

// TestRuleCases: every violating reply is flagged by its rule, every clean
// twin by none; each rule of the cases has at least two violating replies.
func TestRuleCases(t *testing.T) {
	perRule := map[Finding]int{}
	twins := map[string]bool{}
	for _, c := range ruleCases {
		if !strings.Contains(c.twin, c.old) {
			t.Fatalf("%s: the twin lacks %q", c.name, c.old)
		}
		if _, ok := RuleOf(c.rule); !ok {
			t.Errorf("%s: %s is no rule of the table", c.name, c.rule)
		}
		twins[c.twin] = true
		rec := decodeFindings(t, strings.Replace(c.twin, c.old, c.new, 1))
		if !rec.HasFinding(c.rule) {
			t.Errorf("%s: not flagged %s; findings %v", c.name, c.rule, rec.Findings)
		}
		perRule[c.rule]++
	}
	for tw := range twins {
		if rec := decodeFindings(t, tw); len(rec.Findings) != 0 {
			t.Errorf("clean twin flagged %v:\n%s", rec.Findings, tw)
		}
	}
	for r, n := range perRule {
		if n < 2 {
			t.Errorf("rule %s has %d violating replies; want at least 2", r, n)
		}
	}
}

// TestA2APythonWrapping: the wrapping is decoded as the quota it is and
// flagged for every point where it departs from seed 000's A2A encoding.
func TestA2APythonWrapping(t *testing.T) {
	rec := decodeFindings(t, a2aPythonWrapping)
	if rec.Kind != KindQuota || rec.Code != "RATE_LIMITED" {
		t.Errorf("kind %s code %s", rec.Kind, rec.Code)
	}
	for _, f := range []Finding{FindAAPReasonNotCode, FindAAPDomainWrong, FindAAPMetadataNotString, FindAAPPayloadNotStruct, FindAAPJSONRPCCodeMismatch} {
		if !rec.HasFinding(f) {
			t.Errorf("not flagged %s; findings %v", f, rec.Findings)
		}
	}
	if rec.HasFinding(FindAAPMetadataIncomplete) || rec.HasFinding(FindAAPCodeNotInMetadata) {
		t.Errorf("metadata has code, error_id, retryable and created_at; findings %v", rec.Findings)
	}
}
