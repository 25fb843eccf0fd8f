package parse_test

// The planted-secret matrix of issue 11 ("No credential or customer value in
// a row"): every secret of testdata/redaction/planted.json at every place a
// reply can carry a value. This file builds the messages; leak_test.go
// decodes them and hunts for the planted values, and
// ingest/leak_integration_test.go sends the very same messages through Kafka,
// cmd/ingest and ClickHouse (it gets them from TestExportPlantedMessages, so
// the matrix is defined once). testdata/redaction/README.md explains the
// corpora.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// plantedSecret is one entry of testdata/redaction/planted.json.
type plantedSecret struct {
	Type   string   `json:"type"`
	Class  string   `json:"class"` // credential or customer
	Value  string   `json:"value"` // the exact string that must never be stored
	Text   string   `json:"text"`  // a sentence carrying it ({{SECRET}}), for message-like places
	Inline string   `json:"inline,omitempty"`
	Also   []string `json:"also,omitempty"` // fragments that must not be stored either
	Note   string   `json:"note,omitempty"`
}

const secretMarker = "{{SECRET}}"

// harmless stands in for the secret in the baseline message of every cell:
// the same message with nothing secret in it.
const harmless = "plainvalue"

func (s plantedSecret) text(v string) string {
	if s.Text == "" {
		return v
	}
	return strings.ReplaceAll(s.Text, secretMarker, v)
}

// inline is the compact form a value takes in a header, an identifier or a
// URL ("Bearer <token>", "https://svc:<password>@host/x"); the bare value
// when the entry names none.
func (s plantedSecret) inline(v string) string {
	if s.Inline == "" {
		return v
	}
	return strings.ReplaceAll(s.Inline, secretMarker, v)
}

// redactionDir is testdata/redaction at the module root.
func redactionDir() string { return filepath.Join("..", "testdata", "redaction") }

func loadPlanted(t testing.TB) []plantedSecret {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(redactionDir(), "planted.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Secrets []plantedSecret `json:"secrets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("planted.json: %v", err)
	}
	return doc.Secrets
}

type ordinaryText struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func loadOrdinary(t testing.TB) []ordinaryText {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(redactionDir(), "ordinary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Texts []ordinaryText `json:"texts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("ordinary.json: %v", err)
	}
	return doc.Texts
}

// --- locations ---

// plantForm says which form of a secret a location carries.
type plantForm int

const (
	formText       plantForm = iota // the sentence
	formInline                      // the compact form
	formTextLine                    // the sentence on one line (HTTP/1.1 and gRPC metadata lines cannot hold CR or LF)
	formInlineLine                  // the compact form on one line
)

// oneLine replaces CR and LF, which a header line cannot carry, by spaces.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

func (f plantForm) plant(s plantedSecret, v string) string {
	switch f {
	case formInline:
		return s.inline(v)
	case formTextLine:
		return oneLine(s.text(v))
	case formInlineLine:
		return oneLine(s.inline(v))
	}
	return s.text(v)
}

func (f plantForm) oneLine() bool { return f == formTextLine || f == formInlineLine }

// leakMsg is one Kafka message: its value and its record headers.
type leakMsg struct {
	Value   []byte            `json:"value"`
	Headers []parse.MsgHeader `json:"headers,omitempty"`
}

// genCtx is what a location builder needs besides the planted string.
type genCtx struct {
	eventID    string
	observedMS int64
}

// leakLocation is one place a reply can carry a value.
type leakLocation struct {
	name  string
	form  plantForm
	dead  parse.ErrReason // "" when the message must decode; else the dead-letter reason it must get
	build func(c genCtx, p string) leakMsg
}

// --- JSON helpers ---

// js renders v as JSON the way producers in other languages do: no HTML
// escaping of <, > and &.
func js(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

type obj = map[string]any

// The event JSON of docs/event-contract.md, members in contract order.
type evSource struct {
	Kind string `json:"kind,omitempty"`
	ID   string `json:"id,omitempty"`
}

type evRequest struct {
	HTTPRequestID  string `json:"http_request_id,omitempty"`
	JSONRPCID      any    `json:"jsonrpc_id,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	TaskID         string `json:"task_id,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type evGRPC struct {
	Status   int    `json:"status"`
	Message  string `json:"message,omitempty"`
	Trailers any    `json:"trailers,omitempty"`
}

type evReply struct {
	Binding    string          `json:"binding,omitempty"`
	HTTPStatus int             `json:"http_status,omitempty"`
	Headers    any             `json:"headers,omitempty"`
	Body       *string         `json:"body,omitempty"`
	BodyBase64 string          `json:"body_base64,omitempty"`
	BodyJSON   json.RawMessage `json:"body_json,omitempty"`
	GRPC       *evGRPC         `json:"grpc,omitempty"`
}

type event struct {
	V          any        `json:"v"`
	EventID    string     `json:"event_id,omitempty"`
	ObservedAt int64      `json:"observed_at"`
	Source     *evSource  `json:"source,omitempty"`
	Agent      string     `json:"agent,omitempty"`
	Endpoint   string     `json:"endpoint,omitempty"`
	Caller     any        `json:"caller,omitempty"`
	Method     string     `json:"method,omitempty"`
	Attempt    int        `json:"attempt,omitempty"`
	Request    *evRequest `json:"request,omitempty"`
	Reply      evReply    `json:"reply"`
}

// base returns an event with the harmless context every cell starts from.
func (c genCtx) base() *event {
	return &event{
		V: 1, EventID: c.eventID, ObservedAt: c.observedMS,
		Source: &evSource{Kind: "gateway", ID: "gw-eu-1"},
		Agent:  "research-agent", Endpoint: "https://research.agents.example/a2a",
		Caller: "orchestrator-7", Method: "SendMessage", Attempt: 1,
		Request: &evRequest{HTTPRequestID: "req_01HXY4K2VN", JSONRPCID: "req-41",
			MessageID: "5b0c2a0e-2f5e-4b7e-9d38-4a1f0c6f3a11", TaskID: "task-7781", IdempotencyKey: "lead-7781"},
	}
}

func (e *event) msg() leakMsg { return leakMsg{Value: []byte(js(e))} }

func strp(s string) *string { return &s }

// httpEvent is an event whose reply is an HTTP response with a JSON body.
func (c genCtx) httpEvent(binding string, status int, hdrs map[string]string, body string) *event {
	e := c.base()
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range hdrs {
		h[k] = v
	}
	e.Reply = evReply{Binding: binding, HTTPStatus: status, Headers: h, Body: strp(body)}
	return e
}

// --- typed details, as JSON (A2A/AIP-193) and as protobuf (gRPC) ---

type detailSet struct {
	reason, domain string
	meta           [][2]string // ErrorInfo metadata, in order
	retrySec       int64       // RetryInfo; 0: none
	quota          *[2]string  // QuotaFailure violation: subject, description
	bad            [][2]string // BadRequest field violations: field, description
	requestID      string      // RequestInfo
	debug          string      // DebugInfo detail
}

// quotaDetails is the limiter's rejection of seed 002: a typed rate limit
// for one caller.
func quotaDetails() detailSet {
	return detailSet{reason: "RATE_LIMIT_EXCEEDED", domain: "agents.example.com",
		meta: [][2]string{{"policy", "per-caller"}, {"scope", "caller"}}, retrySec: 12,
		quota: &[2]string{"caller:orchestrator-7", "60 requests per 60 s"}}
}

// invalidDetails is a validation error with one field violation.
func invalidDetails(field, desc string) detailSet {
	return detailSet{bad: [][2]string{{field, desc}}}
}

func (d detailSet) setMeta(k, v string) detailSet {
	m := append([][2]string(nil), d.meta...)
	for i := range m {
		if m[i][0] == k {
			m[i][1] = v
			d.meta = m
			return d
		}
	}
	d.meta = append(m, [2]string{k, v})
	return d
}

const typePrefix = "type.googleapis.com/"

func (d detailSet) json() []any {
	var out []any
	if d.reason != "" || len(d.meta) > 0 {
		m := obj{}
		for _, kv := range d.meta {
			m[kv[0]] = kv[1]
		}
		out = append(out, obj{"@type": typePrefix + "google.rpc.ErrorInfo", "reason": d.reason, "domain": d.domain, "metadata": m})
	}
	if d.retrySec > 0 {
		out = append(out, obj{"@type": typePrefix + "google.rpc.RetryInfo", "retryDelay": strconv.FormatInt(d.retrySec, 10) + "s"})
	}
	if d.quota != nil {
		out = append(out, obj{"@type": typePrefix + "google.rpc.QuotaFailure",
			"violations": []any{obj{"subject": d.quota[0], "description": d.quota[1]}}})
	}
	if len(d.bad) > 0 {
		var fv []any
		for _, b := range d.bad {
			fv = append(fv, obj{"field": b[0], "description": b[1]})
		}
		out = append(out, obj{"@type": typePrefix + "google.rpc.BadRequest", "fieldViolations": fv})
	}
	if d.requestID != "" {
		out = append(out, obj{"@type": typePrefix + "google.rpc.RequestInfo", "requestId": d.requestID, "servingData": "edge-fra-3"})
	}
	if d.debug != "" {
		out = append(out, obj{"@type": typePrefix + "google.rpc.DebugInfo", "detail": d.debug,
			"stackEntries": []any{"agent.handle(SendMessage)", "limiter.check"}})
	}
	return out
}

// Protobuf wire format, written by hand: google.rpc.Status and the detail
// messages are a few length-delimited fields.
func pbVarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func pbLen(b []byte, field int, v []byte) []byte {
	b = pbVarint(b, uint64(field)<<3|2)
	b = pbVarint(b, uint64(len(v)))
	return append(b, v...)
}

func pbStr(b []byte, field int, s string) []byte { return pbLen(b, field, []byte(s)) }

func pbUint(b []byte, field int, v uint64) []byte {
	return pbVarint(pbVarint(b, uint64(field)<<3), v)
}

func pbAnyMsg(typeName string, msg []byte) []byte {
	return pbLen(pbStr(nil, 1, typePrefix+typeName), 2, msg)
}

// pbStatus is a serialized google.rpc.Status.
func pbStatus(code int, message string, d detailSet) []byte {
	b := pbUint(nil, 1, uint64(code))
	b = pbStr(b, 2, message)
	if d.reason != "" || len(d.meta) > 0 {
		ei := pbStr(pbStr(nil, 1, d.reason), 2, d.domain)
		for _, kv := range d.meta {
			ei = pbLen(ei, 3, pbStr(pbStr(nil, 1, kv[0]), 2, kv[1]))
		}
		b = pbLen(b, 3, pbAnyMsg("google.rpc.ErrorInfo", ei))
	}
	if d.retrySec > 0 {
		b = pbLen(b, 3, pbAnyMsg("google.rpc.RetryInfo", pbLen(nil, 1, pbUint(nil, 1, uint64(d.retrySec)))))
	}
	if d.quota != nil {
		v := pbStr(pbStr(nil, 1, d.quota[0]), 2, d.quota[1])
		b = pbLen(b, 3, pbAnyMsg("google.rpc.QuotaFailure", pbLen(nil, 1, v)))
	}
	if len(d.bad) > 0 {
		var br []byte
		for _, x := range d.bad {
			br = pbLen(br, 1, pbStr(pbStr(nil, 1, x[0]), 2, x[1]))
		}
		b = pbLen(b, 3, pbAnyMsg("google.rpc.BadRequest", br))
	}
	if d.requestID != "" {
		b = pbLen(b, 3, pbAnyMsg("google.rpc.RequestInfo", pbStr(pbStr(nil, 1, d.requestID), 2, "edge-fra-3")))
	}
	if d.debug != "" {
		b = pbLen(b, 3, pbAnyMsg("google.rpc.DebugInfo", pbStr(pbStr(nil, 1, "limiter.check"), 2, d.debug)))
	}
	return b
}

// grpcPercent encodes a grpc-message as gRPC does (bytes outside printable
// ASCII and '%'), and spaces too, as the example of docs/event-contract.md.
func grpcPercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// --- bodies ---

func jsonrpcError(code int, message string, data any) string {
	e := obj{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	return js(obj{"jsonrpc": "2.0", "id": "req-41", "error": e})
}

const quotaMessage = "Caller orchestrator-7 exceeded 60 SendMessage calls per minute"

func quotaJSONRPC() string { return jsonrpcError(-32603, quotaMessage, quotaDetails().json()) }

func rpcStatus(code int, status, message string, d detailSet) string {
	return js(obj{"error": obj{"code": code, "status": status, "message": message, "details": d.json()}})
}

func problemBody(title, detail string, errs []any, instance string) string {
	p := obj{"type": "https://agents.example/problems/rate-limited", "title": title, "status": 429, "detail": detail,
		"instance": instance}
	if errs != nil {
		p["errors"] = errs
	}
	return js(p)
}

type aapParts struct{ message, hint, errText, location, errorID string }

func aapDefaults() aapParts {
	return aapParts{message: "This deployment does not support features_all.",
		hint: "Read the published search capabilities before forming another query.", errText: "Filter is not advertised.",
		location: "/filters/features_all", errorID: "error_example_001"}
}

func (a aapParts) obj() obj {
	return obj{"type": "aap.error", "error_id": a.errorID, "code": "UNSUPPORTED_FILTER", "message": a.message, "retryable": false,
		"details":    obj{"errors": []any{obj{"instanceLocation": a.location, "keyword": "capability", "error": a.errText}}, "hint": a.hint},
		"created_at": "2026-10-24T15:00:00Z"}
}

func mcpToolResult(text string, structured any) string {
	r := obj{"content": []any{obj{"type": "text", "text": text}}, "isError": true}
	if structured != nil {
		r["structuredContent"] = structured
	}
	return js(obj{"jsonrpc": "2.0", "id": 7, "result": r})
}

func relayFlat(message, requestID string, details obj) string {
	return js(obj{"code": "rate_limited", "message": message, "request_id": requestID, "details": details})
}

func taskFailed(text string) string {
	return js(obj{"jsonrpc": "2.0", "id": "req-41", "result": obj{"task": obj{"id": "task-7781", "contextId": "ctx-19",
		"status": obj{"state": "TASK_STATE_FAILED", "message": obj{"role": "ROLE_AGENT", "messageId": "m-2",
			"parts": []any{obj{"text": text}}}}}}})
}

// --- raw forms ---

// kafkaContext is the context a tap sends as Kafka headers with a raw reply.
func (c genCtx) kafkaContext(key, value string) []parse.MsgHeader {
	hs := [][2]string{
		{"errtrail-v", "1"}, {"errtrail-event-id", c.eventID}, {"errtrail-observed-at", strconv.FormatInt(c.observedMS, 10)},
		{"errtrail-source-kind", "gateway"}, {"errtrail-source-id", "gw-eu-1"}, {"errtrail-agent", "research-agent"},
		{"errtrail-endpoint", "https://research.agents.example/a2a"}, {"errtrail-caller", "orchestrator-7"},
		{"errtrail-method", "SendMessage"}, {"errtrail-attempt", "1"}, {"errtrail-http-request-id", "req_01HXY4K2VN"},
		{"errtrail-jsonrpc-id", "req-41"}, {"errtrail-message-id", "5b0c2a0e-2f5e-4b7e-9d38-4a1f0c6f3a11"},
		{"errtrail-task-id", "task-7781"}, {"errtrail-idempotency-key", "lead-7781"}, {"errtrail-binding", "jsonrpc"},
	}
	out := make([]parse.MsgHeader, len(hs))
	for i, h := range hs {
		if h[0] == key {
			h[1] = value
		}
		out[i] = parse.MsgHeader{Key: h[0], Value: []byte(h[1])}
	}
	return out
}

// rawHTTP renders an HTTP/1.1 response; Content-Length is added unless the
// headers say chunked.
func rawHTTP(statusLine string, hdrs [][2]string, body string) []byte {
	var b strings.Builder
	b.WriteString(statusLine + "\r\n")
	chunked := false
	for _, h := range hdrs {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
		if strings.EqualFold(h[0], "Transfer-Encoding") {
			chunked = true
		}
	}
	if chunked {
		b.WriteString("\r\n")
		for rest := body; rest != ""; {
			n := min(len(rest), 64)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return []byte(b.String())
}

var jsonHeaders = [][2]string{{"Content-Type", "application/json"}, {"Retry-After", "12"}}

func (c genCtx) rawQuota(extra [][2]string, body string) leakMsg {
	return leakMsg{Value: rawHTTP("HTTP/1.1 429 Too Many Requests", append(append([][2]string(nil), jsonHeaders...), extra...), body),
		Headers: c.kafkaContext("", "")}
}

// grpcText renders the gRPC reply text form.
func grpcText(status int, encodedMessage string, extra [][2]string, details []byte) []byte {
	var b strings.Builder
	b.WriteString("GRPC 200\ncontent-type: application/grpc\n")
	fmt.Fprintf(&b, "grpc-status: %d\n", status)
	if encodedMessage != "" {
		b.WriteString("grpc-message: " + encodedMessage + "\n")
	}
	for _, h := range extra {
		b.WriteString(h[0] + ": " + h[1] + "\n")
	}
	if details != nil {
		b.WriteString("grpc-status-details-bin: " + base64.RawStdEncoding.EncodeToString(details) + "\n")
	}
	return []byte(b.String())
}

const grpcResourceExhausted, grpcInvalidArgument = 8, 3

func (c genCtx) grpcQuota(message string, d detailSet, extra [][2]string) leakMsg {
	return leakMsg{Value: grpcText(grpcResourceExhausted, grpcPercent(quotaMessage), extra, pbStatus(grpcResourceExhausted, message, d)),
		Headers: c.kafkaContext("", "")}
}

// --- the locations ---

func leakLocations() []leakLocation {
	var L []leakLocation
	add := func(name string, form plantForm, dead parse.ErrReason, build func(c genCtx, p string) leakMsg) {
		L = append(L, leakLocation{name, form, dead, build})
	}
	retry := map[string]string{"Retry-After": "12"}

	// JSON-RPC error (A2A over JSON-RPC), in an event.
	jr := func(name string, form plantForm, body func(p string) string) {
		add("jsonrpc."+name, form, "", func(c genCtx, p string) leakMsg { return c.httpEvent("jsonrpc", 429, retry, body(p)).msg() })
	}
	jr("error.message", formText, func(p string) string { return jsonrpcError(-32603, p, quotaDetails().json()) })
	for _, k := range []string{"policy", "scope", "error_id", "taskId", "customer_ref"} {
		jr("errorinfo.metadata."+k, formInline, func(p string) string {
			return jsonrpcError(-32603, quotaMessage, quotaDetails().setMeta(k, p).json())
		})
	}
	add("jsonrpc.errorinfo.metadata.method(no event method)", formInline, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, jsonrpcError(-32603, quotaMessage, quotaDetails().setMeta("method", p).json()))
		e.Method = ""
		return e.msg()
	})
	add("jsonrpc.errorinfo.metadata.taskId(no event task_id)", formInline, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, jsonrpcError(-32603, quotaMessage, quotaDetails().setMeta("taskId", p).json()))
		e.Request.TaskID = ""
		return e.msg()
	})
	jrInvalid := func(name string, form plantForm, d func(p string) detailSet) {
		add("jsonrpc."+name, form, "", func(c genCtx, p string) leakMsg {
			return c.httpEvent("jsonrpc", 200, nil, jsonrpcError(-32602, "Invalid parameters", d(p).json())).msg()
		})
	}
	jrInvalid("badrequest.field", formInline, func(p string) detailSet { return invalidDetails(p, "must be a registered skill id") })
	jrInvalid("badrequest.description", formText, func(p string) detailSet { return invalidDetails("message.parts[0].text", p) })
	jr("quotafailure.subject", formInline, func(p string) string {
		d := quotaDetails()
		d.quota = &[2]string{"caller:" + p, "60 requests per 60 s"}
		return jsonrpcError(-32603, quotaMessage, d.json())
	})
	add("jsonrpc.quotafailure.subject(no event caller)", formInline, "", func(c genCtx, p string) leakMsg {
		d := quotaDetails()
		d.quota = &[2]string{"caller:" + p, "60 requests per 60 s"}
		e := c.httpEvent("jsonrpc", 429, retry, jsonrpcError(-32603, quotaMessage, d.json()))
		e.Caller = nil
		return e.msg()
	})
	jr("quotafailure.description", formText, func(p string) string {
		d := quotaDetails()
		d.quota = &[2]string{"caller:orchestrator-7", p}
		return jsonrpcError(-32603, quotaMessage, d.json())
	})
	jr("requestinfo.requestId", formInline, func(p string) string {
		d := quotaDetails()
		d.requestID = p
		return jsonrpcError(-32603, quotaMessage, d.json())
	})
	jr("debuginfo.detail", formText, func(p string) string {
		d := quotaDetails()
		d.debug = p
		return jsonrpcError(-32603, quotaMessage, d.json())
	})
	jr("reply.id", formInline, func(p string) string {
		return js(obj{"jsonrpc": "2.0", "id": p, "error": obj{"code": -32603, "message": quotaMessage, "data": quotaDetails().json()}})
	})
	jr("aap.struct.message", formText, func(p string) string {
		return jsonrpcError(-32000, "Per-key rate limit exceeded.", []any{
			obj{"@type": typePrefix + "google.rpc.ErrorInfo", "reason": "RATE_LIMITED", "domain": "autoagentprotocol.org",
				"metadata": obj{"code": "RATE_LIMITED", "error_id": "err_01HZ9RATE01", "retryable": "true"}},
			obj{"@type": typePrefix + "google.protobuf.Struct", "value": obj{"type": "aap.error", "error_id": "err_01HZ9RATE01",
				"code": "RATE_LIMITED", "message": p, "retryable": true, "details": obj{"retry_after_ms": 30000}}}})
	})
	jr("relay.data.request_id", formInline, func(p string) string {
		return jsonrpcError(-32029, "Rate limit exceeded", obj{"code": "rate_limited", "request_id": p, "details": obj{"retry_after_ms": 14000}})
	})

	// HTTP+JSON google.rpc.Status.
	rs := func(name string, form plantForm, status int, body func(p string) string) {
		add("rpcstatus."+name, form, "", func(c genCtx, p string) leakMsg { return c.httpEvent("http", status, retry, body(p)).msg() })
	}
	rs("error.message", formText, 429, func(p string) string { return rpcStatus(429, "RESOURCE_EXHAUSTED", p, quotaDetails()) })
	rs("errorinfo.metadata.policy", formInline, 429, func(p string) string {
		return rpcStatus(429, "RESOURCE_EXHAUSTED", quotaMessage, quotaDetails().setMeta("policy", p))
	})
	rs("errorinfo.metadata.customer_email", formInline, 429, func(p string) string {
		return rpcStatus(429, "RESOURCE_EXHAUSTED", quotaMessage, quotaDetails().setMeta("customer_email", p))
	})
	rs("badrequest.field", formInline, 400, func(p string) string {
		return rpcStatus(400, "INVALID_ARGUMENT", "Invalid parameters", invalidDetails(p, "must be a registered skill id"))
	})
	rs("badrequest.description", formText, 400, func(p string) string {
		return rpcStatus(400, "INVALID_ARGUMENT", "Invalid parameters", invalidDetails("message.parts[0].text", p))
	})
	rs("quotafailure.subject", formInline, 429, func(p string) string {
		d := quotaDetails()
		d.quota = &[2]string{"caller:" + p, "60 requests per 60 s"}
		return rpcStatus(429, "RESOURCE_EXHAUSTED", quotaMessage, d)
	})

	// RFC 9457 problem details.
	pj := func(name string, form plantForm, body func(p string) string) {
		add("problem."+name, form, "", func(c genCtx, p string) leakMsg {
			return c.httpEvent("http", 429, map[string]string{"Retry-After": "12", "Content-Type": "application/problem+json"}, body(p)).msg()
		})
	}
	pj("detail", formText, func(p string) string { return problemBody("Too Many Requests", p, nil, "/a2a/requests/41") })
	pj("title", formText, func(p string) string { return js(obj{"type": "about:blank", "title": p, "status": 429}) })
	pj("errors.field", formInline, func(p string) string {
		return problemBody("Too Many Requests", "Caller is over its limit", []any{obj{"field": p, "message": "is not allowed"}}, "/a2a/requests/41")
	})
	pj("errors.message", formText, func(p string) string {
		return problemBody("Too Many Requests", "Caller is over its limit", []any{obj{"field": "params.message", "message": p}}, "/a2a/requests/41")
	})
	pj("instance", formInline, func(p string) string { return problemBody("Too Many Requests", "Caller is over its limit", nil, p) })

	// AAP aap.error, bare (PAP binding).
	aap := func(name string, form plantForm, set func(a *aapParts, p string)) {
		add("aap."+name, form, "", func(c genCtx, p string) leakMsg {
			a := aapDefaults()
			set(&a, p)
			return c.httpEvent("http", 422, nil, js(a.obj())).msg()
		})
	}
	aap("message", formText, func(a *aapParts, p string) { a.message = p })
	aap("details.hint", formText, func(a *aapParts, p string) { a.hint = p })
	aap("details.errors.error", formText, func(a *aapParts, p string) { a.errText = p })
	aap("details.errors.instanceLocation", formInline, func(a *aapParts, p string) { a.location = p })
	aap("error_id", formInline, func(a *aapParts, p string) { a.errorID = p })

	// MCP tool results (isError), method tools/call.
	mcp := func(name string, form plantForm, body func(p string) string) {
		add("mcp."+name, form, "", func(c genCtx, p string) leakMsg {
			e := c.httpEvent("jsonrpc", 200, nil, body(p))
			e.Method = "tools/call"
			return e.msg()
		})
	}
	mcp("content.text", formText, func(p string) string { return mcpToolResult(p, nil) })
	mcp("structuredContent.message", formText, func(p string) string {
		a := aapDefaults()
		a.message = p
		return mcpToolResult("This deployment does not support features_all.", a.obj())
	})
	mcp("content.text(aap.error JSON).message", formText, func(p string) string {
		a := aapDefaults()
		a.message = p
		return mcpToolResult(js(a.obj()), nil)
	})

	// AgentRelay.
	rl := func(name string, form plantForm, body func(p string) string) {
		add("relay."+name, form, "", func(c genCtx, p string) leakMsg {
			return c.httpEvent("http", 429, map[string]string{"Retry-After": "14"}, body(p)).msg()
		})
	}
	rl("flat.message", formText, func(p string) string {
		return relayFlat(p, "req_01HXY4K2VNJQP7R8MWDB3CSTG", obj{"retry_after_ms": 14000})
	})
	rl("flat.request_id", formInline, func(p string) string { return relayFlat("Rate limit exceeded", p, obj{"retry_after_ms": 14000}) })
	rl("flat.details.recipient", formInline, func(p string) string {
		return relayFlat("Rate limit exceeded", "req_01HXY4K2VNJQP7R8MWDB3CSTG", obj{"retry_after_ms": 14000, "recipient": p})
	})
	add("relay.frame.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("", 200, nil, js(obj{"v": 1, "type": "ERROR", "id": "frm-19", "ts": 1764489600,
			"payload": obj{"code": "recipient_not_found", "message": p, "fatal": false}})).msg()
	})

	// A2A v0.3 legacy flat bodies.
	add("legacy.a2a-js.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("http", 404, nil, js(obj{"code": -32001, "message": p, "data": []any{}})).msg()
	})
	add("legacy.a2a-java.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("http", 404, nil, js(obj{"error": "io.a2a.spec.TaskNotFoundError", "message": p})).msg()
	})
	add("legacy.a2a-java.unescaped(not JSON).message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("http", 400, nil, `{"error":"io.a2a.spec.InvalidParamsError","message":"invalid "params": `+p+`"}`).msg()
	})

	// Other bodies.
	add("json_string.body", formText, "", func(c genCtx, p string) leakMsg { return c.httpEvent("http", 500, nil, js(p)).msg() })
	add("unrecognized.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("http", 500, nil, js(obj{"ok": false, "message": p})).msg()
	})
	add("task_failed.status.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("jsonrpc", 200, nil, taskFailed(p)).msg()
	})
	add("html.body", formText, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("http", 502, map[string]string{"Content-Type": "text/html"}, "<html><body><h1>502 Bad Gateway</h1><p>"+p+"</p></body></html>")
		return e.msg()
	})
	sse := map[string]string{"Content-Type": "text/event-stream"}
	add("sse.error_event.message", formText, "", func(c genCtx, p string) leakMsg {
		body := "event: message\ndata: " + js(obj{"jsonrpc": "2.0", "id": "req-41", "result": obj{"kind": "status-update", "final": false,
			"status": obj{"state": "working"}}}) + "\n\nevent: error\ndata: " + jsonrpcError(-32603, p, quotaDetails().json()) + "\n\n"
		return c.httpEvent("jsonrpc", 200, sse, body).msg()
	})
	add("sse.earlier_event.text", formText, "", func(c genCtx, p string) leakMsg {
		body := "event: message\ndata: " + js(obj{"jsonrpc": "2.0", "id": "req-41", "result": obj{"kind": "artifact-update",
			"artifact": obj{"parts": []any{obj{"kind": "text", "text": p}}}}}) + "\n\nevent: error\ndata: " + quotaJSONRPC() + "\n\n"
		return c.httpEvent("jsonrpc", 200, sse, body).msg()
	})
	add("event.body_json.message", formText, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, "")
		e.Reply.Body = nil
		e.Reply.BodyJSON = json.RawMessage(jsonrpcError(-32603, p, quotaDetails().json()))
		return e.msg()
	})
	add("event.body_base64.message", formText, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, "")
		e.Reply.Body = nil
		e.Reply.BodyBase64 = base64.StdEncoding.EncodeToString([]byte(jsonrpcError(-32603, p, quotaDetails().json())))
		return e.msg()
	})

	// Reply headers of an event.
	for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token",
		"X-Customer-Email", "X-Request-Id", "X-RateLimit-Resource", "X-Debug-Info"} {
		form := formInline
		if h == "X-Debug-Info" {
			form = formText
		}
		add("headers."+h, form, "", func(c genCtx, p string) leakMsg {
			return c.httpEvent("jsonrpc", 429, map[string]string{"Retry-After": "12", h: p}, quotaJSONRPC()).msg()
		})
	}
	add("headers.RateLimit-Policy", formInline, "", func(c genCtx, p string) leakMsg {
		return c.httpEvent("jsonrpc", 429, map[string]string{"Retry-After": "12", "RateLimit-Policy": `"` + p + `";q=60;w=60`},
			jsonrpcError(-32029, "rate limited", nil)).msg()
	})
	add("headers(pairs).Authorization", formInline, "", func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, nil, quotaJSONRPC())
		e.Reply.Headers = [][2]string{{"Content-Type", "application/json"}, {"Retry-After", "12"}, {"Authorization", p}, {"authorization", p}}
		return e.msg()
	})

	// Context fields of the event.
	ctxField := func(name string, set func(e *event, p string)) {
		add("context."+name, formInline, "", func(c genCtx, p string) leakMsg {
			e := c.httpEvent("jsonrpc", 429, retry, quotaJSONRPC())
			set(e, p)
			return e.msg()
		})
	}
	ctxField("caller", func(e *event, p string) { e.Caller = p })
	ctxField("endpoint", func(e *event, p string) { e.Endpoint = p })
	ctxField("agent", func(e *event, p string) { e.Agent = p })
	ctxField("method", func(e *event, p string) { e.Method = p })
	ctxField("source.id", func(e *event, p string) { e.Source.ID = p })
	ctxField("request.http_request_id", func(e *event, p string) { e.Request.HTTPRequestID = p })
	ctxField("request.message_id", func(e *event, p string) { e.Request.MessageID = p })
	ctxField("request.task_id", func(e *event, p string) { e.Request.TaskID = p })
	ctxField("request.jsonrpc_id", func(e *event, p string) { e.Request.JSONRPCID = p })
	ctxField("request.idempotency_key", func(e *event, p string) { e.Request.IdempotencyKey = p })

	// The same context as Kafka headers of a raw HTTP/1.1 response.
	for _, k := range []string{"caller", "endpoint", "agent", "method", "source-id", "http-request-id", "message-id",
		"task-id", "jsonrpc-id", "idempotency-key"} {
		add("kafka.errtrail-"+k, formInline, "", func(c genCtx, p string) leakMsg {
			m := c.rawQuota(nil, quotaJSONRPC())
			m.Headers = c.kafkaContext("errtrail-"+k, p)
			return m
		})
	}

	// Raw HTTP/1.1 responses: body and header block.
	add("raw.body.message", formText, "", func(c genCtx, p string) leakMsg {
		return c.rawQuota(nil, jsonrpcError(-32603, p, quotaDetails().json()))
	})
	add("raw.body(chunked).message", formText, "", func(c genCtx, p string) leakMsg {
		return c.rawQuota([][2]string{{"Transfer-Encoding", "chunked"}}, jsonrpcError(-32603, p, quotaDetails().json()))
	})
	add("raw.status_line.reason", formTextLine, "", func(c genCtx, p string) leakMsg {
		return leakMsg{Value: rawHTTP("HTTP/1.1 429 Too Many Requests "+p, jsonHeaders, quotaJSONRPC()), Headers: c.kafkaContext("", "")}
	})
	for _, h := range []string{"Authorization", "Set-Cookie", "X-Api-Key", "X-Customer-Email", "X-Request-Id"} {
		add("raw.header."+h, formInlineLine, "", func(c genCtx, p string) leakMsg {
			return c.rawQuota([][2]string{{h, p}}, quotaJSONRPC())
		})
	}
	add("raw.header.X-Debug-Info", formTextLine, "", func(c genCtx, p string) leakMsg {
		return c.rawQuota([][2]string{{"X-Debug-Info", p}}, quotaJSONRPC())
	})

	// gRPC reply text form: grpc-message and grpc-status-details-bin.
	add("grpc.grpc-message", formText, "", func(c genCtx, p string) leakMsg {
		return leakMsg{Value: grpcText(grpcResourceExhausted, grpcPercent(p), nil, pbStatus(grpcResourceExhausted, quotaMessage, quotaDetails())),
			Headers: c.kafkaContext("", "")}
	})
	add("grpc.bin.status.message", formText, "", func(c genCtx, p string) leakMsg { return c.grpcQuota(p, quotaDetails(), nil) })
	for _, k := range []string{"policy", "scope", "error_id", "taskId", "customer_ref"} {
		add("grpc.bin.errorinfo.metadata."+k, formInline, "", func(c genCtx, p string) leakMsg {
			return c.grpcQuota(quotaMessage, quotaDetails().setMeta(k, p), nil)
		})
	}
	grpcInvalid := func(name string, form plantForm, d func(p string) detailSet) {
		add("grpc.bin."+name, form, "", func(c genCtx, p string) leakMsg {
			return leakMsg{Value: grpcText(grpcInvalidArgument, "Invalid%20parameters", nil, pbStatus(grpcInvalidArgument, "Invalid parameters", d(p))),
				Headers: c.kafkaContext("", "")}
		})
	}
	grpcInvalid("badrequest.field", formInline, func(p string) detailSet { return invalidDetails(p, "must be a registered skill id") })
	grpcInvalid("badrequest.description", formText, func(p string) detailSet { return invalidDetails("message.parts[0].text", p) })
	add("grpc.bin.quotafailure.subject", formInline, "", func(c genCtx, p string) leakMsg {
		d := quotaDetails()
		d.quota = &[2]string{"caller:" + p, "60 requests per 60 s"}
		return c.grpcQuota(quotaMessage, d, nil)
	})
	add("grpc.bin.quotafailure.description", formText, "", func(c genCtx, p string) leakMsg {
		d := quotaDetails()
		d.quota = &[2]string{"caller:orchestrator-7", p}
		return c.grpcQuota(quotaMessage, d, nil)
	})
	add("grpc.bin.requestinfo.requestId", formInline, "", func(c genCtx, p string) leakMsg {
		d := quotaDetails()
		d.requestID = p
		return c.grpcQuota(quotaMessage, d, nil)
	})
	for _, h := range []string{"authorization", "x-customer-email", "x-request-id"} {
		add("grpc.metadata."+h, formInlineLine, "", func(c genCtx, p string) leakMsg {
			return c.grpcQuota(quotaMessage, quotaDetails(), [][2]string{{h, p}})
		})
	}

	// gRPC in an event.
	grpcEvent := func(c genCtx, message string, d detailSet) *event {
		e := c.base()
		e.Reply = evReply{Binding: "grpc", GRPC: &evGRPC{Status: grpcResourceExhausted, Message: message,
			Trailers: map[string]string{"grpc-status-details-bin": base64.StdEncoding.EncodeToString(pbStatus(grpcResourceExhausted, quotaMessage, d))}}}
		return e
	}
	add("event.grpc.message(percent-encoded)", formText, "", func(c genCtx, p string) leakMsg {
		return grpcEvent(c, grpcPercent(p), quotaDetails()).msg()
	})
	add("event.grpc.message(plain)", formText, "", func(c genCtx, p string) leakMsg { return grpcEvent(c, p, quotaDetails()).msg() })
	add("event.grpc.trailers.bin.errorinfo.metadata.customer_ref", formInline, "", func(c genCtx, p string) leakMsg {
		return grpcEvent(c, grpcPercent(quotaMessage), quotaDetails().setMeta("customer_ref", p)).msg()
	})

	// Messages dead-lettered for another reason: their raw bytes are kept.
	add("dead.bad_version.headers.X-Api-Key", formInline, parse.ErrBadVersion, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, map[string]string{"Retry-After": "12", "X-Api-Key": p}, quotaJSONRPC())
		e.V = 2
		return e.msg()
	})
	add("dead.bad_version.message", formText, parse.ErrBadVersion, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, jsonrpcError(-32603, p, quotaDetails().json()))
		e.V = 2
		return e.msg()
	})
	add("dead.invalid_json.event(truncated)", formText, parse.ErrInvalidJSON, func(c genCtx, p string) leakMsg {
		full := js(c.httpEvent("jsonrpc", 429, retry, jsonrpcError(-32603, p, quotaDetails().json())))
		return leakMsg{Value: []byte(full[:len(full)-3])}
	})
	add("dead.invalid_json.body", formText, parse.ErrInvalidJSON, func(c genCtx, p string) leakMsg {
		return c.httpEvent("jsonrpc", 429, retry, `{"jsonrpc":"2.0","id":"req-41","error":{"code":-32603,"message":"`+p+`","data":[`).msg()
	})
	add("dead.wrong_type.caller", formInline, parse.ErrWrongType, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, quotaJSONRPC())
		e.Caller = obj{"api_key": p}
		return e.msg()
	})
	add("dead.too_deep.body_json", formText, parse.ErrTooDeep, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, retry, "")
		e.Reply.Body = nil
		e.Reply.BodyJSON = json.RawMessage(`{"note":` + js(p) + `,"x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`)
		return e.msg()
	})
	add("dead.not_an_error.result", formText, parse.ErrNotAnError, func(c genCtx, p string) leakMsg {
		return c.httpEvent("jsonrpc", 200, nil, js(obj{"jsonrpc": "2.0", "id": 7,
			"result": obj{"content": []any{obj{"type": "text", "text": p}}, "isError": false}})).msg()
	})
	add("dead.bad_http.status_line", formTextLine, parse.ErrBadHTTP, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte("HTTP/1.1 4x9 " + p + "\r\nContent-Type: text/plain\r\n\r\n"), Headers: c.kafkaContext("", "")}
	})
	add("dead.bad_http.header_line", formTextLine, parse.ErrBadHTTP, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n: " + p + "\r\n\r\n" + quotaJSONRPC()),
			Headers: c.kafkaContext("", "")}
	})
	add("dead.bad_grpc.grpc-status", formText, parse.ErrBadGRPC, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte("GRPC 200\ngrpc-message: " + grpcPercent(p) + "\ngrpc-status: RESOURCE_EXHAUSTED\n"), Headers: c.kafkaContext("", "")}
	})

	// Issue 25 §6: header values a dead letter kept. A value folded over
	// continuation lines (obsolete line folding: the reply cannot be
	// framed), the same raw reply after a leading space (read as event
	// JSON, invalid), and a dead-lettered event's header and trailer values
	// off the allow-list, also a token split across two headers.
	add("dead.bad_http.folded_header", formText, parse.ErrBadHTTP, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nX-Client-Key: " + fold(p) +
			"\r\n\tcontinued\r\n\r\n" + quotaJSONRPC()), Headers: c.kafkaContext("", "")}
	})
	add("dead.bad_grpc.folded_metadata", formText, parse.ErrBadGRPC, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte("GRPC 200\ncontent-type: application/grpc\nx-client-key: " + strings.ReplaceAll(p, "\n", "\n ") +
			"\n continued\ngrpc-status: 8\n"), Headers: c.kafkaContext("", "")}
	})
	add("dead.invalid_json.raw_http_after_space", formText, parse.ErrInvalidJSON, func(c genCtx, p string) leakMsg {
		return leakMsg{Value: []byte(" HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nX-Client-Key: " + fold(p) +
			"\r\nX-Customer-Note: " + oneLine(p) + "\r\n\r\n" + quotaJSONRPC()), Headers: c.kafkaContext("", "")}
	})
	add("dead.bad_version.headers.X-Customer-Note", formText, parse.ErrBadVersion, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, map[string]string{"Retry-After": "12", "X-Customer-Note": p}, quotaJSONRPC())
		e.V = 2
		return e.msg()
	})
	add("dead.bad_version.headers(pairs).split_token", formInline, parse.ErrBadVersion, func(c genCtx, p string) leakMsg {
		e := c.httpEvent("jsonrpc", 429, nil, quotaJSONRPC())
		e.Reply.Headers = [][2]string{{"Content-Type", "application/json"}, {"X-Auth-Scheme", "Bearer"}, {"X-Auth-Value", p}}
		e.V = 2
		return e.msg()
	})
	add("dead.bad_version.grpc.trailers.x-note", formText, parse.ErrBadVersion, func(c genCtx, p string) leakMsg {
		e := c.base()
		e.V = 2
		e.Reply = evReply{Binding: "grpc", GRPC: &evGRPC{Status: grpcResourceExhausted, Message: grpcPercent(quotaMessage),
			Trailers: map[string]string{"x-note": p}}}
		return e.msg()
	})
	return L
}

// fold writes a header value over continuation lines (RFC 9112's obsolete
// line folding): each line break of v becomes CRLF and a space.
func fold(v string) string { return strings.ReplaceAll(v, "\n", "\r\n ") }

// --- needles: the forms in which a planted value must not appear ---

// needles returns every form of s's value (as the location planted it) and
// of its fragments: as is, JSON-escaped once and twice, percent-encoded
// (URL query, URL path, gRPC) and percent-decoded. Searches are
// case-insensitive, which covers lowercase and uppercase forms.
func needles(s plantedSecret, f plantForm) []string {
	bases := []string{s.Value}
	if f.oneLine() {
		bases[0] = oneLine(s.Value)
	}
	bases = append(bases, s.Also...)
	seen := map[string]bool{}
	var out []string
	addN := func(n string) {
		if len(n) < 6 || seen[strings.ToLower(n)] {
			return
		}
		seen[strings.ToLower(n)] = true
		out = append(out, n)
	}
	for _, b := range bases {
		addN(b)
		esc := jsonInner(b, false)
		addN(esc)
		addN(jsonInner(esc, false))
		addN(jsonInner(b, true))
		addN(url.QueryEscape(b))
		addN(url.PathEscape(b))
		addN(grpcPercent(b))
		if d, err := url.PathUnescape(b); err == nil {
			addN(d)
		}
	}
	return out
}

// jsonInner is s as a JSON string without the quotes.
func jsonInner(s string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// --- the matrix ---

// leakCell is one secret planted at one location, with its harmless twin.
type leakCell struct {
	ID       string // the event id, unique in the matrix
	Secret   int    // index into the planted corpus
	Loc      int    // index into leakLocations()
	Msg      leakMsg
	Baseline leakMsg // the same message with harmless in place of the secret
	Needles  []string
}

// buildMatrix plants every secret at every location.
func buildMatrix(secrets []plantedSecret, locs []leakLocation, observedMS int64) []leakCell {
	var cells []leakCell
	for li, l := range locs {
		for si, s := range secrets {
			id := fmt.Sprintf("leak-%03d-%02d", li, si)
			c := genCtx{eventID: id, observedMS: observedMS}
			cells = append(cells, leakCell{
				ID: id, Secret: si, Loc: li,
				Msg:      l.build(c, l.form.plant(s, s.Value)),
				Baseline: l.build(c, l.form.plant(s, harmless)),
				Needles:  needles(s, l.form),
			})
		}
	}
	return cells
}
