package loadgen

import (
	"strconv"
	"time"
)

// Kind is what a produced reply means, as the scenario simulated it. It is
// the truth the manifest counts: a gateway that strips a quota reply still
// produced a "quota" event whose observation lost its reason.
type Kind string

const (
	KindQuota    Kind = "quota"    // the caller's limiter rejected the call (429, RESOURCE_EXHAUSTED)
	KindOverload Kind = "overload" // the agent fails for everyone (503, UNAVAILABLE, AGENT_OVERLOADED)
	KindUntyped  Kind = "untyped"  // a bare 500: no typed reason, quota and crash look alike
)

// request is one call as the caller sent it.
type request struct {
	agent     *Agent
	caller    string
	method    string
	attempt   int
	httpReqID string
	jsonrpcID string
	messageID string
	taskID    string
	idemKey   string
}

// reply is one error reply before it is wrapped in an event.
type reply struct {
	binding      string // jsonrpc, http, grpc
	status       int    // HTTP status; 0 for gRPC
	headers      [][2]string
	body         []byte
	grpcStatus   int
	grpcMessage  string
	grpcTrailers [][2]string
}

// rejection is the limiter's single decision that each shape encodes (seed
// 002: "one decision, three encoders").
type rejection struct {
	kind    Kind
	delay   int // seconds, >= 1; 0 for untyped
	limit   Limit
	at      time.Time
	errorID string
	variant int // picks among equivalent renderings (bare 500 forms)
}

func (r *rejection) reason() string {
	if r.kind == KindOverload {
		return "AGENT_OVERLOADED"
	}
	return "RATE_LIMIT_EXCEEDED"
}

func (r *rejection) message(q *request) string {
	if r.kind == KindOverload {
		return "Agent " + q.agent.Name + " is overloaded; try again later"
	}
	return "Caller " + q.caller + " exceeded " + fmtRate(r.limit.RatePerMin) + " " + q.method + " calls per minute"
}

func fmtRate(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// render encodes a rejection in the agent's shape.
func render(q *request, r *rejection) reply {
	a := q.agent
	if a.corpus != nil {
		return a.corpus.render(q, r)
	}
	if r.kind == KindUntyped || a.Shape == "bare500" {
		return renderBare(q, r)
	}
	switch a.Shape {
	case "a2a-http":
		return renderA2AHTTP(q, r)
	case "a2a-grpc":
		return renderGRPC(q, r)
	case "aap":
		if r.kind == KindQuota {
			return renderAAP(q, r)
		}
	case "agentrelay", "agentrelay-rest":
		if r.kind == KindQuota {
			return renderAgentRelay(q, r)
		}
		if a.Shape == "agentrelay-rest" {
			return renderA2AHTTP(q, r)
		}
	}
	// a2a-jsonrpc, and the overload replies of shapes that define no
	// overload error of their own (AAP, AgentRelay over JSON-RPC).
	return renderA2AJSONRPC(q, r)
}

func retryHeaders(r *rejection, ct string) [][2]string {
	h := [][2]string{{"Content-Type", ct}, {"Retry-After", strconv.Itoa(r.delay)}}
	if r.kind == KindQuota {
		q := fmtRate(r.limit.RatePerMin)
		h = append(h,
			[2]string{"RateLimit-Policy", `"` + r.limit.Policy + `";q=` + q + `;w=60`},
			[2]string{"RateLimit", `"` + r.limit.Policy + `";r=0;t=` + strconv.Itoa(r.delay)})
	}
	return h
}

// appendDetails writes the google.rpc detail objects of seed 002.
func appendDetails(b []byte, q *request, r *rejection, withMethod bool) []byte {
	scope := "caller"
	if r.kind == KindOverload {
		scope = "agent"
	}
	b = append(b, `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"`...)
	b = append(b, r.reason()...)
	b = append(b, `","domain":`...)
	b = appendJSONString(b, q.agent.Domain)
	b = append(b, `,"metadata":{"policy":`...)
	b = appendJSONString(b, r.limit.Policy)
	b = append(b, `,"scope":"`...)
	b = append(b, scope...)
	b = append(b, '"')
	if withMethod {
		b = append(b, `,"method":`...)
		b = appendJSONString(b, q.method)
	}
	b = append(b, `}},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
	b = strconv.AppendInt(b, int64(r.delay), 10)
	b = append(b, `s"}`...)
	if r.kind == KindQuota {
		b = append(b, `,{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":`...)
		b = appendJSONString(b, "caller:"+q.caller)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, fmtRate(r.limit.RatePerMin)+" requests per 60 s")
		b = append(b, `}]}`...)
	}
	return append(b, ']')
}

// renderA2AHTTP is seed 002's HTTP+JSON google.rpc.Status reply.
func renderA2AHTTP(q *request, r *rejection) reply {
	status, grpcName := 429, "RESOURCE_EXHAUSTED"
	if r.kind == KindOverload {
		status, grpcName = 503, "UNAVAILABLE"
	}
	b := make([]byte, 0, 768)
	b = append(b, `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"status":"`...)
	b = append(b, grpcName...)
	b = append(b, `","message":`...)
	b = appendJSONString(b, r.message(q))
	b = append(b, `,"details":`...)
	b = appendDetails(b, q, r, true)
	b = append(b, `}}`...)
	return reply{binding: "http", status: status, headers: retryHeaders(r, "application/a2a+json"), body: b}
}

// renderA2AJSONRPC is seed 002's JSON-RPC -32603 reply with typed data.
func renderA2AJSONRPC(q *request, r *rejection) reply {
	status := q.agent.JSONRPCStatus
	msg := "Rate limit exceeded"
	if r.kind == KindOverload {
		status, msg = 503, "Agent overloaded"
	}
	b := make([]byte, 0, 768)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendJSONString(b, q.jsonrpcID)
	b = append(b, `,"error":{"code":-32603,"message":"`...)
	b = append(b, msg...)
	b = append(b, `","data":`...)
	b = appendDetails(b, q, r, false)
	b = append(b, `}}`...)
	return reply{binding: "jsonrpc", status: status, headers: retryHeaders(r, "application/json"), body: b}
}

// renderGRPC is RESOURCE_EXHAUSTED (8) or UNAVAILABLE (14) with the same
// details in grpc-status-details-bin.
func renderGRPC(q *request, r *rejection) reply {
	code := 8
	if r.kind == KindOverload {
		code = 14
	}
	msg := r.message(q)
	scope := "caller"
	if r.kind == KindOverload {
		scope = "agent"
	}
	details := [][]byte{
		pbErrorInfo(r.reason(), q.agent.Domain, [][2]string{{"method", q.method}, {"policy", r.limit.Policy}, {"scope", scope}}),
		pbRetryInfo(r.delay),
	}
	if r.kind == KindQuota {
		details = append(details, pbQuotaFailure("caller:"+q.caller, fmtRate(r.limit.RatePerMin)+" requests per 60 s"))
	}
	return reply{
		binding:     "grpc",
		headers:     [][2]string{{"content-type", "application/grpc"}},
		grpcStatus:  code,
		grpcMessage: percentEncode(msg),
		grpcTrailers: [][2]string{
			{"grpc-status", strconv.Itoa(code)},
			{"grpc-message", percentEncode(msg)},
			{"grpc-status-details-bin", grpcStatusBin(code, msg, details...)},
		},
	}
}

// renderAAP is seed 000's complete A2A throttle response (RATE_LIMITED,
// ErrorInfo first, aap.error in a google.protobuf.Struct), over HTTP 200 as
// JSON-RPC errors travel.
func renderAAP(q *request, r *rejection) reply {
	created := r.at.UTC().Format(time.RFC3339)
	b := make([]byte, 0, 900)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendJSONString(b, q.jsonrpcID)
	b = append(b, `,"error":{"code":-32000,"message":"Per-key rate limit exceeded.","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"autoagentprotocol.org","metadata":{"code":"RATE_LIMITED","error_id":"`...)
	b = append(b, r.errorID...)
	b = append(b, `","retryable":"true","created_at":"`...)
	b = append(b, created...)
	b = append(b, `"}},{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"`...)
	b = append(b, r.errorID...)
	b = append(b, `","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":`...)
	b = strconv.AppendInt(b, int64(r.delay)*1000, 10)
	b = append(b, `},"created_at":"`...)
	b = append(b, created...)
	b = append(b, `"}}]}}`...)
	return reply{binding: "jsonrpc", status: 200,
		headers: [][2]string{{"Content-Type", "application/json"}, {"Retry-After", strconv.Itoa(r.delay)}}, body: b}
}

// renderAgentRelay is seed 004's rate_limited error: JSON-RPC -32003 for
// POST /a2a, or the flat REST envelope, both with HTTP 429 and Retry-After.
func renderAgentRelay(q *request, r *rejection) reply {
	b := make([]byte, 0, 300)
	rest := q.agent.Shape == "agentrelay-rest"
	if rest {
		b = append(b, `{"code":"rate_limited","message":"Rate limit exceeded","request_id":`...)
		b = appendJSONString(b, q.httpReqID)
		b = append(b, `,"details":{}}`...)
	} else {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = appendJSONString(b, q.jsonrpcID)
		b = append(b, `,"error":{"code":-32003,"message":"Rate limit exceeded","data":{"code":"rate_limited","request_id":`...)
		b = appendJSONString(b, q.httpReqID)
		b = append(b, `,"details":{}}}}`...)
	}
	binding := "jsonrpc"
	if rest {
		binding = "http"
	}
	return reply{binding: binding, status: 429,
		headers: [][2]string{{"Content-Type", "application/json"}, {"Retry-After", strconv.Itoa(r.delay)}}, body: b}
}

// renderBare is a 500 without a typed reason, in one of the forms seen in
// the field: a proxy's text page, a framework's JSON, a JSON-RPC -32603
// without data, an HTML error page; gRPC agents send INTERNAL alone.
func renderBare(q *request, r *rejection) reply {
	if q.agent.Shape == "a2a-grpc" {
		return reply{binding: "grpc", headers: [][2]string{{"content-type", "application/grpc"}},
			grpcStatus: 13, grpcMessage: "internal%20error",
			grpcTrailers: [][2]string{{"grpc-status", "13"}, {"grpc-message", "internal%20error"}}}
	}
	switch r.variant % 4 {
	case 0:
		return reply{binding: "http", status: 500, headers: [][2]string{{"Content-Type", "text/plain; charset=utf-8"}},
			body: []byte("Internal Server Error")}
	case 1:
		return reply{binding: "http", status: 500, headers: [][2]string{{"Content-Type", "application/json"}},
			body: []byte(`{"error":"internal server error"}`)}
	case 2:
		b := append([]byte(`{"jsonrpc":"2.0","id":`), appendJSONString(nil, q.jsonrpcID)...)
		b = append(b, `,"error":{"code":-32603,"message":"Internal error"}}`...)
		return reply{binding: "jsonrpc", status: 500, headers: [][2]string{{"Content-Type", "application/json"}}, body: b}
	default:
		return reply{binding: "http", status: 500, headers: [][2]string{{"Content-Type", "text/html"}},
			body: []byte("<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n</body>\r\n</html>\r\n")}
	}
}

// gatewayView is what a gateway in front of the agent passes on: the status
// rewritten (429 → 502) and/or the body stripped, as seed 002 warns; a
// pass-through gateway only adds its Via header.
func gatewayView(rep reply, f *Fault) reply {
	out := rep
	out.headers = append([][2]string(nil), rep.headers...)
	if f.passThrough {
		// A history's gateway (history.go): the agent's reply as it was.
		out.headers = append(out.headers, [2]string{"Via", "1.1 " + f.Gateway})
		return out
	}
	if rep.binding == "grpc" {
		// A gateway that terminates gRPC answers in HTTP terms.
		out = reply{binding: "http", status: 502, headers: [][2]string{{"Content-Type", "text/plain"}},
			body: []byte("upstream connect error or disconnect/reset before headers")}
	}
	rewrite := f.RewriteTo != 0 && len(f.RewriteFrom) == 0
	for _, s := range f.RewriteFrom {
		rewrite = rewrite || s == out.status
	}
	if rewrite && f.RewriteTo != 0 {
		out.status = f.RewriteTo
	}
	if f.StripBody {
		out.body = nil
		h := out.headers[:0]
		for _, kv := range out.headers {
			if kv[0] != "Content-Type" {
				h = append(h, kv)
			}
		}
		out.headers = append(h, [2]string{"Content-Length", "0"})
	}
	out.headers = append(out.headers, [2]string{"Via", "1.1 " + f.Gateway})
	return out
}

// percentEncode encodes a grpc-message value: bytes outside printable ASCII
// and '%' become %XX.
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '%' && c != ' ' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
