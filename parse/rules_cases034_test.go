package parse

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The rule cases of seed 003 (the A2A error in its three bindings) and seed
// 004 (the AgentRelay envelope), in the harness of rules_cases_test.go:
// every violating reply differs from a clean twin in the one point its rule
// checks; it must be flagged by that rule, and every twin by no rule at all.

// swap replaces each old with its new, once, in s; the old text must occur.
func swap(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("swap: " + strconv.Quote(pairs[i]) + " not in " + s)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// httpRawCT is an HTTP/1.1 response with the given Content-Type line ("" for none).
func httpRawCT(status, contentType, headers, body string) string {
	ct := ""
	if contentType != "" {
		ct = "Content-Type: " + contentType + "\r\n"
	}
	return "HTTP/1.1 " + status + "\r\n" + ct + headers + "\r\n" + body
}

// grpcDetails are the details of a gRPC test reply: an ErrorInfo and, when
// bad is not nil, a BadRequest with those field violations (field,
// description).
type grpcDetails struct {
	reason, domain string
	bad            [][2]string
}

// Protobuf wire format by hand: a google.rpc.Status is a few
// length-delimited fields.
func pbTag(b []byte, field, wire int) []byte { return append(b, byte(field<<3|wire)) }

func pbBytes(b []byte, field int, v []byte) []byte {
	b = pbTag(b, field, 2)
	for n := len(v); ; n >>= 7 {
		if n < 0x80 {
			b = append(b, byte(n))
			break
		}
		b = append(b, byte(n)|0x80)
	}
	return append(b, v...)
}

func pbAny(typeName string, msg []byte) []byte {
	return pbBytes(pbBytes(nil, 1, []byte("type.googleapis.com/"+typeName)), 2, msg)
}

// grpcRaw is the gRPC reply text form with grpc-status code, a grpc-message
// (none when msg is "") and the details as grpc-status-details-bin.
func grpcRaw(code int, msg string, d grpcDetails) string {
	st := append(pbTag(nil, 1, 0), byte(code))
	st = pbBytes(st, 2, []byte(msg))
	st = pbBytes(st, 3, pbAny("google.rpc.ErrorInfo", pbBytes(pbBytes(nil, 1, []byte(d.reason)), 2, []byte(d.domain))))
	if d.bad != nil {
		var br []byte
		for _, v := range d.bad {
			fv := pbBytes(nil, 2, []byte(v[1]))
			if v[0] != "" {
				fv = pbBytes(pbBytes(nil, 1, []byte(v[0])), 2, []byte(v[1]))
			}
			br = pbBytes(br, 1, fv)
		}
		st = pbBytes(st, 3, pbAny("google.rpc.BadRequest", br))
	}
	s := "GRPC 200\ncontent-type: application/grpc\ngrpc-status: " + strconv.Itoa(code) + "\n"
	if msg != "" {
		s += "grpc-message: " + strings.ReplaceAll(msg, " ", "%20") + "\n"
	}
	return s + "grpc-status-details-bin: " + base64.StdEncoding.EncodeToString(st) + "\n"
}

const a2aErrorInfo = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"%s","domain":"a2a-protocol.org","metadata":{"taskId":"d6d1b5c3"}}`

func errInfoA2A(reason string) string { return strings.Replace(a2aErrorInfo, "%s", reason, 1) }

// Seed 003's replies, clean: the figures and listings of the seed and their
// like for the other A2A errors.
var (
	t3RestNotFound = httpRawCT("404 Not Found", "application/a2a+json", "",
		`{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[`+errInfoA2A("TASK_NOT_FOUND")+`]}}`)
	t3RestCancel = httpRawCT("400 Bad Request", "application/a2a+json", "",
		`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org","metadata":{"taskId":"bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3","state":"TASK_STATE_COMPLETED"}}]}}`)
	// The same Status labelled as the SDKs label it (a2a-go v0.3 sends
	// problem+json): all three media types are accepted.
	t3RestPushProblemCT = httpRawCT("400 Bad Request", "application/problem+json", "",
		`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Push notifications are not supported","details":[`+errInfoA2A("PUSH_NOTIFICATION_NOT_SUPPORTED")+`]}}`)
	t3RestBadRequest = httpRawCT("400 Bad Request", "application/json; charset=utf-8", "",
		`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid parameters","details":[`+errInfoA2A("INVALID_PARAMS")+`,`+
			`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.messageId","description":"messageId is required"}]}]}}`)
	t3RestContentType = httpRawCT("400 Bad Request", "application/json", "",
		`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Content type video/mp4 is not supported","details":[`+errInfoA2A("CONTENT_TYPE_NOT_SUPPORTED")+`]}}`)
	t3JSONRPCNotFound = httpRawCT("200 OK", "application/json", "",
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Task not found","data":[`+errInfoA2A("TASK_NOT_FOUND")+`]}}`)
	t3JSONRPCNoCT = httpRawCT("200 OK", "", "",
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"Task not found","data":[`+errInfoA2A("TASK_NOT_FOUND")+`]}}`)
	t3JSONRPCCancel = httpRawCT("200 OK", "application/a2a+json", "",
		`{"jsonrpc":"2.0","id":"c-10","error":{"code":-32002,"message":"Task cannot be canceled","data":[`+errInfoA2A("TASK_NOT_CANCELABLE")+`]}}`)
	t3JSONRPCBadRequest = httpRawCT("200 OK", "application/json", "",
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid parameters","data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.messageId","description":"messageId is required"}]}]}}`)

	cancelInfo   = grpcDetails{reason: "TASK_NOT_CANCELABLE", domain: domainA2A}
	pushInfo     = grpcDetails{reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", domain: domainA2A}
	t3GRPCCancel = grpcRaw(grpcFailedPrecondition, "Task cannot be canceled", cancelInfo)
	t3GRPCPush   = grpcRaw(grpcFailedPrecondition, "Push notifications are not supported", pushInfo)
	t3GRPCBadReq = grpcRaw(grpcInvalidArgument, "Invalid parameters", grpcDetails{reason: "INVALID_PARAMS", domain: domainA2A,
		bad: [][2]string{{"message.messageId", "messageId is required"}}})
)

// Seed 004's replies, clean: the seed's JSON-RPC and REST envelopes.
var (
	r4JSONRPCNotFound = httpRawCT("200 OK", "application/json", "",
		`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32004,"message":"No agent with handle 'ghost@acme'","data":{"code":"recipient_not_found","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTF","details":{}}}}`)
	r4JSONRPCRateLimited = httpRawCT("429 Too Many Requests", "application/json", "Retry-After: 14\r\n",
		`{"jsonrpc":"2.0","id":"req-2","error":{"code":-32003,"message":"Rate limit exceeded","data":{"code":"rate_limited","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTA","details":{}}}}`)
	r4RestRateLimited = httpRawCT("429 Too Many Requests", "application/json", "Retry-After: 14\r\n",
		`{"code":"rate_limited","message":"Rate limit exceeded","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTG","details":{}}`)
	r4RestNotParticipant = httpRawCT("403 Forbidden", "application/json", "",
		`{"code":"not_a_participant","message":"You are not a participant of this thread","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTB","details":{}}`)
	r4RestInternal = httpRawCT("500 Internal Server Error", "application/json", "",
		`{"code":"internal","message":"Internal error. Quote the request_id to support.","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTC","details":{}}`)
	r4JSONRPCInternal = httpRawCT("200 OK", "application/json", "",
		`{"jsonrpc":"2.0","id":"req-3","error":{"code":-32099,"message":"Internal error","data":{"code":"internal","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTD","details":{}}}}`)
	r4RestInvalidParams = httpRawCT("400 Bad Request", "application/json", "",
		`{"code":"invalid_params","message":"Invalid parameters","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTE","details":{"issues":[{"code":"invalid_type","expected":"string","received":"undefined","path":["recipient"],"message":"Required"}]}}`)
	r4JSONRPCInvalidParams = httpRawCT("200 OK", "application/json", "",
		`{"jsonrpc":"2.0","id":"req-4","error":{"code":-32602,"message":"Invalid parameters","data":{"code":"invalid_params","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTH","details":{"issues":[{"code":"too_small","minimum":1,"type":"string","path":["message","parts",0,"text"],"message":"String must contain at least 1 character(s)"}]}}}}`)
)

// ruleCase034 is one violating reply and the clean twin it was made from.
type ruleCase034 struct {
	rule      Finding
	name      string
	twin, bad string
}

var ruleCases034 = []ruleCase034{
	// Seed 003: "An HTTP+JSON error uses the HTTP status and a JSON `google.rpc.Status`".
	{FindA2ABodyNotStatus, "rest-status-members-top-level", t3RestNotFound, swap(t3RestNotFound,
		`{"error":{"code":404,`, `{"code":404,`, `]}}`, `]}`)},
	{FindA2ABodyNotStatus, "rest-problem-details", t3RestCancel, httpRawCT("400 Bad Request", "application/problem+json", "",
		`{"type":"https://a2a-protocol.org/errors/task-not-cancelable","title":"Task cannot be canceled","status":400,"detail":"Task bbfb9ea5 is completed"}`)},
	{FindA2ABodyNotStatus, "rest-flat-code-message", t3RestContentType, swap(t3RestContentType,
		`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Content type video/mp4 is not supported","details":[`+errInfoA2A("CONTENT_TYPE_NOT_SUPPORTED")+`]}}`,
		`{"code":400,"message":"Content type video/mp4 is not supported","details":[`+errInfoA2A("CONTENT_TYPE_NOT_SUPPORTED")+`]}`)},
	{FindA2ABodyNotStatus, "aap-rest-status-members-top-level", twinA2ARest, swap(twinA2ARest,
		`{"error":{"code":429,`, `{"code":429,`, `}}]}}`, `}}]}`)},
	{FindA2ABodyNotStatus, "rest-json-string", t3RestNotFound, swap(t3RestNotFound,
		`{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[`+errInfoA2A("TASK_NOT_FOUND")+`]}}`,
		`"Task not found"`, "Content-Type: application/a2a+json\r\n", "Content-Type: application/a2a+json\r\nA2A-Version: 1.0\r\n")},

	// Seed 003: "Send `application/a2a+json`, and accept all three types when you read."
	{FindA2AMediaType, "rest-text-plain", t3RestNotFound, swap(t3RestNotFound, "application/a2a+json", "text/plain; charset=utf-8")},
	{FindA2AMediaType, "jsonrpc-text-plain", t3JSONRPCNotFound, swap(t3JSONRPCNotFound, "application/json", "text/plain; charset=utf-8")},
	{FindA2AMediaType, "jsonrpc-octet-stream", t3JSONRPCCancel, swap(t3JSONRPCCancel, "application/a2a+json", "application/octet-stream")},
	{FindA2AMediaType, "rest-text-html", t3RestCancel, swap(t3RestCancel, "application/a2a+json", "text/html")},

	// Seed 003: "Its `error` object repeats the status in `code`, names the gRPC status in `status`, …"
	{FindStatusCodeNotHTTP, "rest-grpc-number", t3RestNotFound, swap(t3RestNotFound, `"code":404`, `"code":5`)},
	{FindStatusCodeNotHTTP, "rest-no-code", t3RestCancel, swap(t3RestCancel, `"code":400,`, ``)},
	{FindStatusCodeNotHTTP, "rest-http-200", t3RestBadRequest, swap(t3RestBadRequest, "400 Bad Request", "200 OK")},
	{FindStatusCodeNotHTTP, "aap-rest-grpc-number", twinA2ARest, swap(twinA2ARest, `"code":429`, `"code":8`)},
	{FindStatusNameMismatch, "rest-404-failed-precondition", t3RestNotFound, swap(t3RestNotFound, `"status":"NOT_FOUND"`, `"status":"FAILED_PRECONDITION"`)},
	{FindStatusNameMismatch, "rest-400-not-a-code-name", t3RestCancel, swap(t3RestCancel, `"status":"FAILED_PRECONDITION"`, `"status":"Bad Request"`)},
	{FindStatusNameMismatch, "rest-no-status", t3RestBadRequest, swap(t3RestBadRequest, `"status":"INVALID_ARGUMENT",`, ``)},
	{FindStatusNameMismatch, "aap-rest-429-unavailable-name", twinA2ARest, swap(twinA2ARest, `"status":"RESOURCE_EXHAUSTED"`, `"status":"INTERNAL"`)},

	// Seed 003: "The specification defines nine A2A errors and maps each one into every binding".
	{FindA2AReasonCodeMismatch, "jsonrpc-32001-task-not-cancelable", t3JSONRPCCancel, swap(t3JSONRPCCancel, `"code":-32002`, `"code":-32001`)},
	{FindA2AReasonCodeMismatch, "jsonrpc-32004-task-not-found", t3JSONRPCNotFound, swap(t3JSONRPCNotFound, `"code":-32001`, `"code":-32004`)},
	{FindA2AReasonCodeMismatch, "jsonrpc-32603-task-not-found", t3JSONRPCNotFound, swap(t3JSONRPCNotFound, `"code":-32001`, `"code":-32603`)},
	// The seeds' own examples carry no Content-Type: a reply without one is not judged.
	{FindA2AReasonCodeMismatch, "jsonrpc-no-content-type-32004", t3JSONRPCNoCT, swap(t3JSONRPCNoCT, `"code":-32001`, `"code":-32004`)},

	// Seed 003: "HTTP answers `400` for seven, and gRPC answers `FAILED_PRECONDITION` for six".
	{FindA2AStatusNotMapped, "rest-not-cancelable-409-v1.0.0", t3RestCancel, swap(t3RestCancel,
		"400 Bad Request", "409 Conflict", `"code":400,"status":"FAILED_PRECONDITION"`, `"code":409,"status":"ABORTED"`)},
	{FindA2AStatusNotMapped, "rest-task-not-found-400", t3RestNotFound, swap(t3RestNotFound,
		"404 Not Found", "400 Bad Request", `"code":404,"status":"NOT_FOUND"`, `"code":400,"status":"FAILED_PRECONDITION"`)},
	{FindA2AStatusNotMapped, "rest-content-type-415-v1.0.0", t3RestContentType, swap(t3RestContentType,
		"400 Bad Request", "415 Unsupported Media Type", `"code":400,"status":"INVALID_ARGUMENT"`, `"code":415,"status":"INVALID_ARGUMENT"`)},
	{FindA2AStatusNotMapped, "grpc-push-unimplemented-v1.0.0", t3GRPCPush, grpcRaw(grpcUnimplemented, "Push notifications are not supported", pushInfo)},
	{FindA2AStatusNotMapped, "grpc-not-cancelable-aborted", t3GRPCCancel, grpcRaw(grpcAborted, "Task cannot be canceled", cancelInfo)},
	{FindA2AStatusNotMapped, "jsonrpc-task-not-found-http-404", t3JSONRPCNotFound, swap(t3JSONRPCNotFound, "200 OK", "404 Not Found")},

	// Seed 003: "Validation errors carry a different detail type, a `google.rpc.BadRequest` that names the field".
	{FindBadRequestWithoutFields, "jsonrpc-empty-violations", t3JSONRPCBadRequest, swap(t3JSONRPCBadRequest,
		`[{"field":"message.messageId","description":"messageId is required"}]`, `[]`)},
	{FindBadRequestWithoutFields, "rest-violation-without-field", t3RestBadRequest, swap(t3RestBadRequest,
		`{"field":"message.messageId","description"`, `{"description"`)},
	{FindBadRequestWithoutFields, "grpc-no-violations", t3GRPCBadReq, grpcRaw(grpcInvalidArgument, "Invalid parameters", grpcDetails{reason: "INVALID_PARAMS", domain: domainA2A,
		bad: [][2]string{{"", "messageId is required"}}})},

	// Seed 003: "Every error carries a code, a message, and optional `details`".
	{FindMessageMissing, "jsonrpc-empty-message", t3JSONRPCNotFound, swap(t3JSONRPCNotFound, `"message":"Task not found"`, `"message":""`)},
	{FindMessageMissing, "rest-no-message", t3RestCancel, swap(t3RestCancel, `"message":"Task cannot be canceled",`, ``)},
	{FindMessageMissing, "grpc-no-message", t3GRPCCancel, grpcRaw(grpcFailedPrecondition, "", cancelInfo)},
	{FindMessageMissing, "aap-jsonrpc-no-message", twinA2AThrottle, swap(twinA2AThrottle, `"code":-32000,"message":"Per-key rate limit exceeded.",`, `"code":-32000,`)},

	// Seed 004: "All errors from the relay include the following fields".
	{FindRelayEnvelopeIncomplete, "rest-no-details", r4RestRateLimited, swap(r4RestRateLimited, `,"details":{}`, ``)},
	{FindRelayEnvelopeIncomplete, "rest-no-code", r4RestNotParticipant, swap(r4RestNotParticipant, `"code":"not_a_participant",`, ``)},
	{FindRelayEnvelopeIncomplete, "rest-no-message", r4RestInternal, swap(r4RestInternal, `"message":"Internal error. Quote the request_id to support.",`, ``)},
	{FindRelayEnvelopeIncomplete, "jsonrpc-no-request_id", r4JSONRPCNotFound, swap(r4JSONRPCNotFound, `"request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTF",`, ``)},
	{FindRelayEnvelopeIncomplete, "jsonrpc-no-symbol", r4JSONRPCNotFound, swap(r4JSONRPCNotFound, `"code":"recipient_not_found",`, ``)},
	{FindRelayEnvelopeIncomplete, "jsonrpc-details-null", r4JSONRPCInternal, swap(r4JSONRPCInternal, `"details":{}`, `"details":null`)},

	// Seed 004: "The numeric `error.code` is the JSON-RPC code."
	{FindRelayCodeMismatch, "rate_limited-32004", r4JSONRPCRateLimited, swap(r4JSONRPCRateLimited, `"code":-32003`, `"code":-32004`)},
	{FindRelayCodeMismatch, "recipient_not_found-32001", r4JSONRPCNotFound, swap(r4JSONRPCNotFound, `"code":-32004`, `"code":-32001`)},
	{FindRelayCodeMismatch, "internal-32603", r4JSONRPCInternal, swap(r4JSONRPCInternal, `"code":-32099`, `"code":-32603`)},

	// Seed 004: "Details are redacted."
	{FindRelayInternalNotRedacted, "rest-details-cause", r4RestInternal, swap(r4RestInternal,
		`"details":{}`, `"details":{"cause":"relation threads does not exist","table":"threads"}`)},
	{FindRelayInternalNotRedacted, "jsonrpc-panic-in-message", r4JSONRPCInternal, swap(r4JSONRPCInternal,
		`"message":"Internal error"`, `"message":"panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 42 [running]:\nrelay/store.(*Threads).Get(...)\n\t/app/store/threads.go:88"`)},
	{FindRelayInternalNotRedacted, "rest-driver-error-in-message", r4RestInternal, swap(r4RestInternal,
		`"message":"Internal error. Quote the request_id to support."`, `"message":"dial tcp db-primary:5432: connect: connection refused"`)},

	// Seed 004: "The `details` field includes a zod validation issue list."
	{FindRelayIssuesMissing, "rest-details-empty", r4RestInvalidParams, swap(r4RestInvalidParams,
		`"details":{"issues":[{"code":"invalid_type","expected":"string","received":"undefined","path":["recipient"],"message":"Required"}]}`, `"details":{}`)},
	{FindRelayIssuesMissing, "jsonrpc-issues-empty", r4JSONRPCInvalidParams, swap(r4JSONRPCInvalidParams,
		`"issues":[{"code":"too_small","minimum":1,"type":"string","path":["message","parts",0,"text"],"message":"String must contain at least 1 character(s)"}]`, `"issues":[]`)},
}

// TestRuleCases034: each violating reply is flagged by its rule, each clean
// twin by no rule; every rule of seeds 003 and 004 has at least two
// violating replies, and each twin differs from its violation.
func TestRuleCases034(t *testing.T) {
	perRule := map[Finding]int{}
	twins := map[string]bool{}
	for _, c := range ruleCases034 {
		if c.bad == c.twin {
			t.Fatalf("%s: the violating reply is its twin", c.name)
		}
		r, ok := RuleOf(c.rule)
		if !ok {
			t.Errorf("%s: %s is no rule of the table", c.name, c.rule)
			continue
		}
		if r.Seed != "003" && r.Seed != "004" {
			t.Errorf("%s: rule %s is of seed %s", c.name, c.rule, r.Seed)
		}
		twins[c.twin] = true
		if rec := decodeFindings(t, c.bad); !rec.HasFinding(c.rule) {
			t.Errorf("%s: not flagged %s; findings %v\n%s", c.name, c.rule, rec.Findings, c.bad)
		}
		perRule[c.rule]++
	}
	for tw := range twins {
		if rec := decodeFindings(t, tw); len(rec.Findings) != 0 {
			t.Errorf("clean twin flagged %v:\n%s", rec.Findings, tw)
		}
	}
	for i := range Rules {
		if r := &Rules[i]; (r.Seed == "003" || r.Seed == "004") && r.Name != FindErrorInfoMissing && perRule[r.Name] < 2 {
			t.Errorf("rule %s has %d violating replies; want at least 2", r.Name, perRule[r.Name])
		}
	}
}

// decodeCapture decodes a corpus capture as TestGolden does (with the
// method of the request beside it).
func decodeCapture(t *testing.T, path string) *Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := NewDecoder(Options{}).DecodeMessage(data, contextOf(path), 1764489600000, &rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rec
}

// TestA2APythonWrappingCaptures: a2a-sdk 1.3.0's real replies for an AAP
// RATE_LIMITED raised from a handler (an A2A InternalError whose ErrorInfo
// is INTERNAL_ERROR in a2a-protocol.org, the aap.error spread into its
// metadata) are read as the quota they are and flagged for the points where
// they depart from seed 000's A2A encoding. Over gRPC the SDK drops the
// metadata, so nothing of the AAP error reaches the wire: the reply is a
// typed InternalError and no AAP rule can see it (docs/conformance.md).
func TestA2APythonWrappingCaptures(t *testing.T) {
	dir := filepath.Join("testdata", "corpus", "a2a-python-1")
	for _, c := range []struct {
		file    string
		jsonrpc bool
	}{
		{"jsonrpc-aap-error-from-handler.http", true},
		{"jsonrpc-aap-error.http", true},
		{"jsonrpc-sse-aap-error-from-handler.http", true},
		{"rest-aap-error-from-handler.http", false},
		{"rest-aap-error.http", false},
		{"rest-sse-aap-error-from-handler.http", false},
	} {
		rec := decodeCapture(t, filepath.Join(dir, c.file))
		if rec.Kind != KindQuota || rec.Code != "RATE_LIMITED" || rec.Protocol != ProtocolAAP {
			t.Errorf("%s: %s %s %s; want aap quota RATE_LIMITED", c.file, rec.Protocol, rec.Kind, rec.Code)
		}
		want := []Finding{FindAAPReasonNotCode, FindAAPDomainWrong, FindAAPMetadataNotString, FindAAPPayloadNotStruct}
		if c.jsonrpc {
			want = append(want, FindAAPJSONRPCCodeMismatch)
		}
		for _, f := range want {
			if !rec.HasFinding(f) {
				t.Errorf("%s: not flagged %s; findings %v", c.file, f, rec.Findings)
			}
		}
		// The spread metadata does hold code, error_id, retryable and created_at.
		for _, f := range []Finding{FindAAPMetadataIncomplete, FindAAPCodeNotInMetadata} {
			if rec.HasFinding(f) {
				t.Errorf("%s: flagged %s; findings %v", c.file, f, rec.Findings)
			}
		}
	}
	for _, file := range []string{"grpc-aap-error-from-handler.grpc", "grpc-aap-error.grpc", "grpc-stream-aap-error-from-handler.grpc"} {
		rec := decodeCapture(t, filepath.Join(dir, file))
		if rec.Protocol != ProtocolA2A || rec.Code != "INTERNAL_ERROR" || !rec.Typed || len(rec.Findings) != 0 {
			t.Errorf("%s: %s %s typed %v findings %v; want a typed A2A INTERNAL_ERROR with no finding (the SDK sends no AAP error over gRPC)",
				file, rec.Protocol, rec.Code, rec.Typed, rec.Findings)
		}
	}
}

// TestRelayNeedsItsEnvelope: a body with a request_id is not taken for an
// AgentRelay error unless it has the symbol or the details object of seed
// 004's envelope (a gateway's {message, request_id} is no AgentRelay reply).
func TestRelayNeedsItsEnvelope(t *testing.T) {
	for _, body := range []string{
		`{"message":"API rate limit exceeded","request_id":"8f2c1e0a9b7d4c3e"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"request_id":"8f2c1e0a9b7d4c3e"}}}`,
	} {
		rec := decodeFindings(t, httpRawCT("429 Too Many Requests", "application/json", "Retry-After: 3\r\n", body))
		if rec.Protocol == ProtocolAgentRelay || rec.HasFinding(FindRelayEnvelopeIncomplete) {
			t.Errorf("%s: protocol %s findings %v; want no AgentRelay reading", body, rec.Protocol, rec.Findings)
		}
	}
	rec := decodeFindings(t, httpRawCT("404 Not Found", "application/json", "", `{"message":"No agent with handle 'ghost@acme'","request_id":"req_01HXY4K2VNJQP7R8MWDB3CSTF","details":{}}`))
	if rec.Protocol != ProtocolAgentRelay || !rec.HasFinding(FindRelayEnvelopeIncomplete) {
		t.Errorf("envelope without its symbol: protocol %s findings %v; want agentrelay, relay_envelope_incomplete", rec.Protocol, rec.Findings)
	}
}

// TestRelayIssuesAreFieldViolations: the zod issue list of an AgentRelay
// invalid_params becomes the record's field violations: the path joined
// with dots, the issue's code as the description (never its message, which
// can quote the value received).
func TestRelayIssuesAreFieldViolations(t *testing.T) {
	for _, c := range []struct {
		reply, field, desc string
	}{
		{r4RestInvalidParams, "recipient", "invalid_type"},
		{r4JSONRPCInvalidParams, "message.parts.0.text", "too_small"},
	} {
		rec := decodeFindings(t, c.reply)
		if len(rec.FieldViolations) != 1 || rec.FieldViolations[0].Field != c.field || rec.FieldViolations[0].Description != c.desc {
			t.Errorf("field violations %+v; want [{%s %s}]", rec.FieldViolations, c.field, c.desc)
		}
	}
	if rec := decodeFindings(t, r4RestRateLimited); len(rec.FieldViolations) != 0 {
		t.Errorf("rate_limited without issues: field violations %+v", rec.FieldViolations)
	}
	// Reading the issues costs no allocation once the Decoder is warm.
	if raceEnabled {
		return // allocation counts are not reliable under -race
	}
	d := NewDecoder(Options{KeepRaw: -1})
	var rec Record
	msg := []byte(r4JSONRPCInvalidParams)
	if n := testing.AllocsPerRun(100, func() { d.DecodeMessage(msg, nil, 1764489600000, &rec) }); n != 0 {
		t.Errorf("%v allocations per decode; want 0", n)
	}
}
