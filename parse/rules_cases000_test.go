package parse

import (
	"strings"
	"testing"
)

// Seed 000's rules that rules_cases_test.go does not cover: what a reply
// must never echo, the MCP binding's tool result, PAP's status mapping and
// body, and an appointment refusal that hides an accepted lead. The same
// harness: each violating reply is a clean twin with one point changed.
//
// An MCP tool result carries its aap.error twice (structuredContent and the
// serialized JSON text in content), so a change is made in every copy:
// old is replaced everywhere, and so is its JSON-escaped form (as it
// appears inside the text content). A case that must differ between the
// copies names a string only one copy holds.

// Bodies of the twins, so that a case can replace a whole body.
const (
	papBody = `{"type":"aap.error","error_id":"error_example_001","code":"UNSUPPORTED_FILTER","message":"This deployment does not support features_all.","retryable":false,` +
		`"details":{"errors":[{"instanceLocation":"/filters/features_all","keyword":"capability","error":"Filter is not advertised."}],"hint":"Read the published search capabilities before forming another query."},"created_at":"2026-10-24T15:00:00Z"}`
	pap429Body = `{"type":"aap.error","error_id":"err_01HZ9RATE03","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}`

	mcpAAP    = `{"type":"aap.error","error_id":"error_example_004","code":"VEHICLE_NOT_FOUND","message":"No listing matches the requested vin.","retryable":false,"details":{"hint":"Search the inventory again before naming a vehicle."},"created_at":"2026-10-24T15:00:00Z"}`
	mcpResult = `"result":{"isError":true,"structuredContent":` + mcpAAP + `,"content":[{"type":"text","text":"` + `{\"type\":\"aap.error\",\"error_id\":\"error_example_004\",\"code\":\"VEHICLE_NOT_FOUND\",\"message\":\"No listing matches the requested vin.\",\"retryable\":false,\"details\":{\"hint\":\"Search the inventory again before naming a vehicle.\"},\"created_at\":\"2026-10-24T15:00:00Z\"}` + `"}]}`
	// The same failure as an MCP server's JSON-RPC error: what
	// aap_mcp_protocol_error flags.
	mcpAsError = `"error":{"code":-32000,"message":"No listing matches the requested vin.","data":` + mcpAAP + `}`

	apptMessage = `No requested appointment time could be accepted; the lead was not submitted.`
	apptAAP     = `{"type":"aap.error","error_id":"err_01J8ZQAPPT","code":"APPOINTMENT_TIME_UNAVAILABLE","message":"` + apptMessage + `","retryable":false,"details":{"alternatives":["2026-10-25T14:00:00Z"]},"created_at":"2026-10-24T15:00:00Z"}`
)

var (
	// PAP: an appointment refusal, 409 as mapped.
	twinPAPAppointment = httpRaw("409 Conflict", "", apptAAP)
	// A2A JSON-RPC: the same refusal with ErrorInfo and Struct.
	twinA2AAppointment = httpRaw("200 OK", "",
		`{"jsonrpc":"2.0","id":"req-9","error":{"code":-32000,"message":"`+apptMessage+`","data":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"APPOINTMENT_TIME_UNAVAILABLE","domain":"autoagentprotocol.org","metadata":{"code":"APPOINTMENT_TIME_UNAVAILABLE","error_id":"err_01J8ZQAPPT","retryable":"false","created_at":"2026-10-24T15:00:00Z"}},`+
			`{"@type":"type.googleapis.com/google.protobuf.Struct","value":`+apptAAP+`}]}}`)
	// MCP over raw HTTP; the response names the MCP protocol version, so
	// the reply is known to come from an MCP server.
	twinMCPHeader = httpRaw("200 OK", "MCP-Protocol-Version: 2025-11-25\r\n", `{"jsonrpc":"2.0","id":11,`+mcpResult+`}`)
	// The same with a sentence before the JSON copy.
	twinMCPSentence = strings.Replace(twinMCPHeader, `"content":[`, `"content":[{"type":"text","text":"No listing matches the requested vin."},`, 1)
	// MCP as an event whose method is tools/call.
	twinMCPEvent = `{"v":1,"event_id":"e-mcp-1","observed_at":1764489600000,"agent":"dealer-agent","method":"tools/call",` +
		`"reply":{"binding":"jsonrpc","http_status":200,"headers":{"Content-Type":"application/json"},"body_json":{"jsonrpc":"2.0","id":12,` + mcpResult + `}}}`
	// A problem details reply (RFC 9457) of an agent's own, not an A2A error
	// (an A2A error must be a google.rpc.Status under "error": seed 003).
	twinProblem = "HTTP/1.1 404 Not Found\r\nContent-Type: application/problem+json\r\n\r\n" +
		`{"type":"https://agents.example.com/problems/order-not-found","title":"Order not found","status":404,"detail":"The order does not exist or is not visible to this caller."}`
)

// Frames of stack traces, one per runtime form.
const (
	javaFrames   = `java.lang.IllegalStateException: lead store closed\n\tat com.dealer.leads.LeadStore.save(LeadStore.java:88)\n\tat com.dealer.leads.LeadService.submit(LeadService.java:41)`
	pythonFrames = `Traceback (most recent call last):\n  File \"/srv/agent/tools/inventory.py\", line 57, in lookup\nKeyError: 'vin'`
	goFrames     = `panic: nil map\n\ngoroutine 7 [running]:\nmain.search(...)\n\t/srv/agent/search.go:112 +0x1d`
	dotnetFrames = `System.NullReferenceException: Object reference not set\n   at Dealer.Leads.Submit(Lead lead) in C:\\src\\Dealer\\Leads.cs:line 42`
	nodeFrames   = `TypeError: Cannot read properties of undefined\n    at searchInventory (/srv/agent/src/search.js:33:17)`
)

var ruleCases000 = []ruleCase{
	// Never echo: credentials and customer values in every text, not only
	// the message.
	{FindEchoesSecret, "pap-hint-bearer-token", twinPAP, `"hint":"Read the published search capabilities before forming another query."`,
		`"hint":"Retry with Authorization: Bearer 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c1e."`},
	{FindEchoesSecret, "pap-error-item-email", twinPAP, `"error":"Filter is not advertised."`, `"error":"Filter is not advertised for jane.doe@example.com."`},
	{FindEchoesSecret, "mcp-hint-phone", twinMCPHeader, `Search the inventory again before naming a vehicle.`, `Call the buyer back at +1 415 555 0123 before naming a vehicle.`},
	{FindEchoesSecret, "a2a-struct-error-item-email", twinA2AFilter, `"error":"Filter is not advertised."`, `"error":"Filter is not advertised to jane.doe@example.com."`},
	{FindEchoesSecret, "a2a-metadata-email", twinA2AThrottle, `"retryable":"true","created_at"`, `"retryable":"true","buyer":"jane.doe@example.com","created_at"`},
	{FindEchoesSecret, "problem-title-email", twinProblem, `"title":"Order not found"`, `"title":"Order of jane.doe@example.com not found"`},
	// National ids and national phone formats (the redactor's [ssn] and
	// phone classes, issue 25 §6).
	{FindEchoesSecret, "pap-message-ssn", twinPAP, `"message":"This deployment does not support features_all."`, `"message":"No lead for SSN 536-22-8147 in features_all."`},
	{FindEchoesSecret, "a2a-error-item-ssn", twinA2AFilter, `"error":"Filter is not advertised."`, `"error":"Filter is not advertised for 536-22-8147."`},
	{FindEchoesSecret, "mcp-hint-national-phone", twinMCPHeader, `Search the inventory again before naming a vehicle.`, `Call the buyer back at (415) 555-0132 before naming a vehicle.`},
	{FindEchoesSecret, "pap-hint-api-key-scheme", twinPAP, `"hint":"Read the published search capabilities before forming another query."`,
		`"hint":"Retry with api_key=Bearer 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c1e."`},

	// Never echo: internal stack traces, in whatever text carries them.
	{FindEchoesStackTrace, "pap-message-java", twinPAP, `"message":"This deployment does not support features_all."`, `"message":"` + javaFrames + `"`},
	{FindEchoesStackTrace, "pap-error-item-python", twinPAP, `"error":"Filter is not advertised."`, `"error":"` + pythonFrames + `"`},
	{FindEchoesStackTrace, "mcp-hint-go", twinMCPHeader, `"hint":"Search the inventory again before naming a vehicle."`, `"hint":"` + goFrames + `"`},
	{FindEchoesStackTrace, "a2a-jsonrpc-message-dotnet", twinA2AThrottle, `"message":"Per-key rate limit exceeded.","data"`, `"message":"` + dotnetFrames + `","data"`},
	{FindEchoesStackTrace, "pap-details-trace-member", twinPAP, `"hint":"Read the`, `"trace":"` + javaFrames + `","hint":"Read the`},
	{FindEchoesStackTrace, "problem-detail-node", twinProblem, `"detail":"The order does not exist or is not visible to this caller."`, `"detail":"` + nodeFrames + `"`},

	// Correlation ids that expose the shopper.
	{FindAAPErrorIDIdentity, "pap-error-id-email", twinPAP, `"error_id":"error_example_001"`, `"error_id":"err-jane.doe@example.com"`},
	{FindAAPErrorIDIdentity, "a2a-error-id-phone", twinA2AThrottle, `"error_id":"err_01HZ9RATE01"`, `"error_id":"err_+14155550123"`},
	{FindAAPErrorIDIdentity, "mcp-error-id-email", twinMCPHeader, `"error_id":"error_example_004"`, `"error_id":"lead-jane.doe@example.com"`},

	// MCP: a skill failure that is not a completed tool result with isError: true.
	{FindAAPMCPNotIsError, "mcp-isError-absent", twinMCPHeader, `"isError":true,`, ``},
	{FindAAPMCPNotIsError, "mcp-isError-false", twinMCPEvent, `"isError":true,`, `"isError":false,`},
	{FindAAPMCPNotIsError, "mcp-input-required", twinMCPHeader, `"isError":true,`, `"isError":true,"resultType":"input_required",`},
	{FindAAPMCPNotIsError, "seed-mcp-isError-absent", twinMCP, `"isError":true,`, ``},

	// MCP: structuredContent and the JSON text in content disagreeing.
	{FindAAPMCPContentMismatch, "mcp-text-retryable-differs", twinMCPHeader, `\"retryable\":false`, `\"retryable\":true`},
	{FindAAPMCPContentMismatch, "mcp-text-not-json", twinMCPEvent,
		`{\"type\":\"aap.error\",\"error_id\":\"error_example_004\",\"code\":\"VEHICLE_NOT_FOUND\",\"message\":\"No listing matches the requested vin.\",\"retryable\":false,\"details\":{\"hint\":\"Search the inventory again before naming a vehicle.\"},\"created_at\":\"2026-10-24T15:00:00Z\"}`,
		`No listing matches the requested vin.`},
	{FindAAPMCPContentMismatch, "mcp-no-structured", twinMCPHeader, `"structuredContent":` + mcpAAP + `,`, ``},
	{FindAAPMCPContentMismatch, "seed-mcp-structured-code-differs", twinMCP, `"structuredContent":{"type":"aap.error","error_id":"error_example_002","code":"SCHEMA_VALIDATION_FAILED"`,
		`"structuredContent":{"type":"aap.error","error_id":"error_example_002","code":"MISSING_REQUIRED_FIELD"`},

	// A sentence before the JSON copy is allowed; a JSON copy that differs
	// is not, wherever it is.
	{FindAAPMCPContentMismatch, "mcp-sentence-then-differing-json", twinMCPSentence, `\"retryable\":false`, `\"retryable\":true`},

	// MCP: a skill failure sent as a JSON-RPC protocol error.
	{FindAAPMCPProtocolError, "mcp-event-tools-call-error", twinMCPEvent, mcpResult, mcpAsError},
	{FindAAPMCPProtocolError, "mcp-header-error", twinMCPHeader, mcpResult, mcpAsError},
	{FindAAPMCPProtocolError, "mcp-event-error-is-the-aap-error", twinMCPEvent, mcpResult, `"error":` + mcpAAP},

	// PAP: the status AAP maps the code to.
	{FindPAPStatusNotMapped, "pap-filter-400", twinPAP, `422 Unprocessable Entity`, `400 Bad Request`},
	{FindPAPStatusNotMapped, "pap-rate-limited-503", twinPAP429, `429 Too Many Requests`, `503 Service Unavailable`},
	{FindPAPStatusNotMapped, "pap-appointment-422", twinPAPAppointment, `409 Conflict`, `422 Unprocessable Entity`},
	{FindPAPStatusNotMapped, "pap-filter-200", twinPAP, `422 Unprocessable Entity`, `200 OK`},

	// PAP: the aap.error is the body itself.
	{FindPAPBodyNotDirect, "pap-filter-wrapped", twinPAP, papBody, `{"error":` + papBody + `}`},
	{FindPAPBodyNotDirect, "pap-rate-limited-wrapped", twinPAP429, pap429Body, `{"error":` + pap429Body + `}`},

	// APPOINTMENT_TIME_UNAVAILABLE concealing an accepted lead.
	{FindAAPAppointmentConceals, "pap-details-lead-id", twinPAPAppointment, `"details":{"alternatives"`, `"details":{"lead_id":"lead_01J8ZQ4X","alternatives"`},
	{FindAAPAppointmentConceals, "pap-message-lead-accepted", twinPAPAppointment, apptMessage, `The lead was accepted, but no requested appointment time is available.`},
	{FindAAPAppointmentConceals, "a2a-details-lead-status", twinA2AAppointment, `"details":{"alternatives"`, `"details":{"lead":{"id":"lead_01J8ZQ4X","status":"accepted"},"alternatives"`},
	{FindAAPAppointmentConceals, "a2a-details-submit-response", twinA2AAppointment, `"details":{"alternatives"`, `"details":{"response":{"type":"lead.submit.response","appointment":{"status":"declined"}},"alternatives"`},
}

// replaceEveryCopy replaces old by new everywhere in s, and old's
// JSON-escaped form (its copy inside an MCP text content) by new's.
func replaceEveryCopy(s, old, new string) (string, bool) {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	eo, en := esc.Replace(old), esc.Replace(new)
	found := strings.Contains(s, old) || (eo != old && strings.Contains(s, eo))
	s = strings.ReplaceAll(s, old, new)
	if eo != old {
		s = strings.ReplaceAll(s, eo, en)
	}
	return s, found
}

// TestRuleCases000: every violating reply is flagged by its rule, every
// clean twin by none; each rule has at least two violating replies.
func TestRuleCases000(t *testing.T) {
	perRule := map[Finding]int{}
	twins := map[string]bool{}
	for _, c := range ruleCases000 {
		reply, found := replaceEveryCopy(c.twin, c.old, c.new)
		if !found {
			t.Fatalf("%s: the twin lacks %q", c.name, c.old)
		}
		if _, ok := RuleOf(c.rule); !ok {
			t.Errorf("%s: %s is no rule of the table", c.name, c.rule)
		}
		twins[c.twin] = true
		rec := decodeFindings(t, reply)
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
