package main

// Captures from github.com/a2aproject/a2a-go/v2: JSON-RPC, HTTP+JSON (REST)
// and gRPC servers sharing one RequestHandler, plus the module's A2A v0.3
// compatibility servers (a2acompat/a2av0 JSON-RPC and REST, a2agrpc/v0).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

const requiredExtURI = "https://errtrail.example/ext/required/v1"

// v2Executor decides its behaviour from the text of the first message part.
type v2Executor struct{}

func firstText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			return string(t)
		}
	}
	return ""
}

// rateLimitError is an executor error carrying seed-002 style details.
func v2RateLimitError() error {
	return a2a.NewError(a2a.ErrInternalError, "Caller orchestrator-7 exceeded 60 SendMessage calls per minute").
		WithTypedDetails(
			errordetails.NewErrorInfo("RATE_LIMIT_EXCEEDED", "research.agents.example", map[string]string{
				"limit": "60", "window": "60s", "caller": "orchestrator-7",
			}),
			errordetails.NewTyped("type.googleapis.com/google.rpc.RetryInfo", map[string]any{"retryDelay": "12s"}),
			errordetails.NewTyped("type.googleapis.com/google.rpc.QuotaFailure", map[string]any{
				"violations": []any{map[string]any{
					"subject": "caller:orchestrator-7", "description": "60 SendMessage calls per minute",
					"quotaId": "SendMessagePerMinutePerCaller", "quotaValue": "60",
				}},
			}),
		)
}

// v2AAPError carries an AAP aap.error payload the way seed 000 describes for
// A2A (ErrorInfo in the AAP domain + a google.protobuf.Struct).
func v2AAPError() error {
	payload := map[string]any{
		"type": "aap.error", "error_id": "err_01HZ9RATE01", "code": "RATE_LIMITED",
		"message": "Per-key rate limit exceeded.", "retryable": true,
		"details":    map[string]any{"retry_after_ms": 30000},
		"created_at": "2026-04-30T10:16:00Z",
	}
	return a2a.NewError(a2a.ErrServerError, "Per-key rate limit exceeded.").
		WithTypedDetails(errordetails.NewErrorInfo("RATE_LIMITED", "autoagentprotocol.org", map[string]string{
			"code": "RATE_LIMITED", "error_id": "err_01HZ9RATE01", "retryable": "true", "created_at": "2026-04-30T10:16:00Z",
		})).
		WithDetails(payload)
}

// v2GRPCStatusError returns a real grpc status error (RESOURCE_EXHAUSTED with
// RetryInfo) from the executor, to see how each binding passes it through.
func v2GRPCStatusError() error {
	st := status.New(codes.ResourceExhausted, "quota exhausted for caller orchestrator-7")
	st, _ = st.WithDetails(
		&errdetails.ErrorInfo{Reason: "RATE_LIMIT_EXCEEDED", Domain: "research.agents.example"},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(12e9)},
	)
	return st.Err()
}

func (v2Executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		switch firstText(ec.Message) {
		case "complete":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		case "fail-task":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				return
			}
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("model backend returned HTTP 503"))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, msg), nil)
		case "internal":
			yield(nil, errors.New("database connection refused"))
		case "internal-after-task":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			yield(nil, errors.New("worker crashed after the task was created"))
		case "rate-limit":
			yield(nil, v2RateLimitError())
		case "aap-error":
			yield(nil, v2AAPError())
		case "grpc-status":
			yield(nil, v2GRPCStatusError())
		case "unsupported-content-type":
			yield(nil, a2a.NewError(a2a.ErrUnsupportedContentType, "output mode video/mp4 is not supported"))
		case "no-events":
			// yield nothing: the SDK reports an invalid agent response
		default:
			yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("ok")), nil)
		}
	}
}

func (v2Executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// v2Gate is an application CallInterceptor: the SDK does not check
// A2A-Version nor authenticate, so an app raises these SDK errors itself.
type v2Gate struct {
	a2asrv.PassthroughCallInterceptor
}

func (v2Gate) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	sp := cc.ServiceParams()
	if v, ok := sp.Get(a2a.SvcParamVersion); ok && len(v) > 0 && v[0] != "" && v[0] != "1.0" && v[0] != "0.3" {
		return ctx, nil, a2a.NewError(a2a.ErrVersionNotSupported, fmt.Sprintf("A2A version %s is not supported", v[0]))
	}
	if v, ok := sp.Get("authorization"); ok && len(v) > 0 {
		switch v[0] {
		case "Bearer expired":
			return ctx, nil, a2a.NewError(a2a.ErrUnauthenticated, "bearer token expired")
		case "Bearer readonly":
			return ctx, nil, a2a.NewError(a2a.ErrUnauthorized, "caller readonly may not call "+cc.Method())
		}
	}
	return ctx, nil, nil
}

type served struct {
	http string // host:port of the HTTP server (JSON-RPC at /jsonrpc, REST at /)
	grpc string // host:port of the gRPC server
}

func listen() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	return l
}

// serveV2 starts the v1.0 servers for handler h, and if compat is true the
// v0.3 compatibility servers instead.
func serveV2(h a2asrv.RequestHandler, compat bool) served {
	mux := http.NewServeMux()
	gs := grpc.NewServer()
	if compat {
		mux.Handle("/jsonrpc", a2av0.NewJSONRPCHandler(h))
		mux.Handle("/", a2av0.NewRESTHandler(h))
		grpcv0.NewHandler(h).RegisterWith(gs)
	} else {
		mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
		mux.Handle("/", a2asrv.NewRESTHandler(h))
		grpcv1.NewHandler(h).RegisterWith(gs)
	}
	hl, gl := listen(), listen()
	go http.Serve(hl, mux)
	go gs.Serve(gl)
	return served{http: hl.Addr().String(), grpc: gl.Addr().String()}
}

func newV2Handlers() (main, restricted a2asrv.RequestHandler) {
	main = a2asrv.NewHandler(v2Executor{},
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: true}),
		a2asrv.WithCallInterceptors(v2Gate{}))
	restricted = a2asrv.NewHandler(v2Executor{},
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{
			Extensions: []a2a.AgentExtension{{URI: requiredExtURI, Required: true}},
		}),
		a2asrv.WithCallInterceptors(v2Gate{}))
	return
}

// --- request builders -------------------------------------------------------

func jrpc(id any, method string, params string) []byte {
	idj := "null"
	switch v := id.(type) {
	case string:
		idj = fmt.Sprintf("%q", v)
	case int:
		idj = fmt.Sprint(v)
	}
	if params == "" {
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, idj, method))
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idj, method, params))
}

func v2Msg(text string) string {
	return fmt.Sprintf(`{"message":{"messageId":"msg-%s","role":"ROLE_USER","parts":[{"text":%q}]}}`, text, text)
}

func pbSend(text string, withID bool) *pb.SendMessageRequest {
	m := &pb.Message{Role: pb.Role_ROLE_USER, Parts: []*pb.Part{{Content: &pb.Part_Text{Text: text}}}}
	if withID {
		m.MessageId = "msg-" + text
	}
	return &pb.SendMessageRequest{Message: m}
}

func pbBody(m proto.Message) ([]byte, string) {
	b, err := proto.Marshal(m)
	must(err)
	// protojson output is deliberately unstable; re-indent for stable .req files.
	j, err := protojson.Marshal(m)
	must(err)
	var out bytes.Buffer
	must(json.Indent(&out, j, "", "  "))
	return grpcFrame(b), out.String()
}

var jsonCT = [][2]string{{"Content-Type", "application/json"}}

func withH(extra ...[2]string) [][2]string { return append(append([][2]string{}, jsonCT...), extra...) }

// completedTaskID creates a completed task through the JSON-RPC binding
// (setup, not captured) and returns its id.
func completedTaskID(addr, path string, body []byte) string {
	resp, err := rawHTTP(addr, httpRequest("POST", addr, path, jsonCT, body), 10e9)
	must(err)
	s := string(resp)
	i := strings.Index(s, `"id":"`)
	if i < 0 {
		panic("no task id in " + s)
	}
	s = s[i+6:]
	return s[:strings.IndexByte(s, '"')]
}

func captureA2AGoV2(root string) {
	c := newCorpus(root, "a2a-go-v2", "github.com/a2aproject/a2a-go/v2", modVersion("github.com/a2aproject/a2a-go/v2"))
	defer c.finish()
	mainH, restrictedH := newV2Handlers()
	m := serveV2(mainH, false)
	r := serveV2(restrictedH, false)
	const svc = "/lf.a2a.v1.A2AService/"
	extH := [2]string{"A2A-Extensions", requiredExtURI}

	done := completedTaskID(m.http, "/jsonrpc", jrpc(1, "SendMessage", v2Msg("complete")))
	const missing = "00000000-0000-4000-8000-00000000dead"

	// ---- JSON-RPC ----
	J := func(name, provoked, expect string, srv served, headers [][2]string, body []byte) {
		c.http(caseInfo{"jsonrpc-" + name, "jsonrpc", provoked, expect}, srv.http, "POST", "/jsonrpc", headers, body)
	}
	J("task-not-found", "GetTask for an unknown id", "TaskNotFoundError -32001", m, jsonCT, jrpc("req-1", "GetTask", `{"id":"`+missing+`"}`))
	J("task-not-cancelable", "CancelTask on a COMPLETED task", "TaskNotCancelableError -32002", m, jsonCT, jrpc("req-2", "CancelTask", `{"id":"`+done+`"}`))
	J("push-not-supported", "CreateTaskPushNotificationConfig, agent without push", "PushNotificationNotSupportedError -32003", m, jsonCT,
		jrpc("req-3", "CreateTaskPushNotificationConfig", `{"taskId":"`+done+`","url":"https://client.example/hook"}`))
	J("push-get-not-supported", "GetTaskPushNotificationConfig, agent without push", "PushNotificationNotSupportedError -32003", m, jsonCT,
		jrpc("req-3b", "GetTaskPushNotificationConfig", `{"taskId":"`+done+`","id":"cfg-1"}`))
	J("unsupported-operation-streaming", "SendStreamingMessage to an agent whose card has streaming=false", "UnsupportedOperationError -32004", r, withH(extH),
		jrpc("req-4", "SendStreamingMessage", v2Msg("hello")))
	J("unsupported-operation-extended-card", "GetExtendedAgentCard, card has extendedAgentCard=false", "UnsupportedOperationError -32004", r, withH(extH),
		jrpc("req-4b", "GetExtendedAgentCard", `{}`))
	J("content-type-not-supported", "executor returns a2a.ErrUnsupportedContentType (the SDK itself never checks content types)", "ContentTypeNotSupportedError -32005", m, jsonCT,
		jrpc("req-5", "SendMessage", v2Msg("unsupported-content-type")))

	J("extended-card-not-configured", "GetExtendedAgentCard, capability on but no card producer", "ExtendedAgentCardNotConfiguredError -32007", m, jsonCT,
		jrpc("req-7", "GetExtendedAgentCard", `{}`))
	J("extension-support-required", "any call without the A2A-Extensions header to an agent with a required extension", "ExtensionSupportRequiredError -32008", r, jsonCT,
		jrpc("req-8", "GetTask", `{"id":"`+missing+`"}`))
	J("version-not-supported", "A2A-Version: 9.9 (raised by an app CallInterceptor; the SDK does not check versions)", "VersionNotSupportedError -32009", m,
		withH([2]string{"A2A-Version", "9.9"}), jrpc("req-9", "GetTask", `{"id":"`+missing+`"}`))
	J("invalid-params-missing-message-id", "SendMessage with a message without messageId", "InvalidParams -32602", m, jsonCT,
		jrpc("req-10", "SendMessage", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	J("invalid-params-wrong-type", "GetTask with params.id a number", "InvalidParams -32602", m, jsonCT, jrpc("req-10b", "GetTask", `{"id":42}`))
	J("method-not-found", "unknown method", "MethodNotFound -32601", m, jsonCT, jrpc("req-11", "tasks/get", `{"id":"x"}`))
	J("parse-error", "body is not JSON", "JSONParseError -32700", m, jsonCT, []byte(`{"jsonrpc":"2.0","id":"req-12","method":`))
	J("invalid-request-version", `"jsonrpc":"1.0"`, "InvalidRequest -32600", m, jsonCT, []byte(`{"jsonrpc":"1.0","id":"req-13","method":"GetTask","params":{"id":"x"}}`))
	J("invalid-request-id-object", "id is an object", "InvalidRequest -32600", m, jsonCT, []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`))
	J("invalid-request-no-method", "method missing", "InvalidRequest -32600", m, jsonCT, []byte(`{"jsonrpc":"2.0","id":"req-15"}`))
	c.http(caseInfo{"jsonrpc-invalid-request-get", "jsonrpc", "HTTP GET on the JSON-RPC endpoint", "InvalidRequest -32600"}, m.http, "GET", "/jsonrpc", nil, nil)
	J("wrong-content-type", "Content-Type: text/plain with a valid GetTask body (the SDK ignores Content-Type)", "TaskNotFoundError -32001 (no content-type check)", m,
		[][2]string{{"Content-Type", "text/plain"}}, jrpc("req-16", "GetTask", `{"id":"`+missing+`"}`))
	J("internal-error", "executor returns a plain Go error", "InternalError -32603", m, jsonCT, jrpc("req-17", "SendMessage", v2Msg("internal")))
	J("rate-limit-details", "executor returns a2a.Error(ErrInternalError) with ErrorInfo(own domain)+RetryInfo+QuotaFailure typed details", "InternalError -32603 + RetryInfo", m, jsonCT,
		jrpc("req-18", "SendMessage", v2Msg("rate-limit")))
	J("aap-error", "executor returns a2a.Error(ErrServerError) with Details=aap.error payload and an ErrorInfo in domain autoagentprotocol.org", "AAP RATE_LIMITED (-32000)", m, jsonCT,
		jrpc("req-19", "SendMessage", v2Msg("aap-error")))
	J("grpc-status-from-executor", "executor returns a grpc status error RESOURCE_EXHAUSTED with RetryInfo", "InternalError -32603", m, jsonCT, jrpc("req-20", "SendMessage", v2Msg("grpc-status")))
	J("unauthenticated", "Authorization: Bearer expired (app interceptor returns a2a.ErrUnauthenticated)", "Unauthenticated -31401", m,
		withH([2]string{"Authorization", "Bearer expired"}), jrpc("req-21", "GetTask", `{"id":"`+missing+`"}`))
	J("unauthorized", "Authorization: Bearer readonly (app interceptor returns a2a.ErrUnauthorized)", "Unauthorized -31403", m,
		withH([2]string{"Authorization", "Bearer readonly"}), jrpc("req-22", "GetTask", `{"id":"`+missing+`"}`))
	J("id-zero", "TaskNotFound with JSON-RPC id 0 (id echo check)", "TaskNotFoundError -32001", m, jsonCT, jrpc(0, "GetTask", `{"id":"`+missing+`"}`))
	J("task-failed", "SendMessage whose task ends TASK_STATE_FAILED (a result, not an error)", "- (task FAILED in result)", m, jsonCT, jrpc("req-23", "SendMessage", v2Msg("fail-task")))
	// streaming
	J("sse-task-failed", "SendStreamingMessage whose task ends FAILED", "- (SSE stream, final status FAILED)", m, jsonCT, jrpc("req-24", "SendStreamingMessage", v2Msg("fail-task")))
	J("sse-internal-error", "SendStreamingMessage, executor errors before any event", "InternalError -32603 in SSE", m, jsonCT, jrpc("req-25", "SendStreamingMessage", v2Msg("internal")))
	J("sse-error-after-task", "SendStreamingMessage, executor errors after the first Task event", "InternalError -32603 in SSE after an event", m, jsonCT,
		jrpc("req-26", "SendStreamingMessage", v2Msg("internal-after-task")))
	J("sse-subscribe-task-not-found", "SubscribeToTask for an unknown id", "TaskNotFoundError -32001 in SSE", m, jsonCT, jrpc("req-27", "SubscribeToTask", `{"id":"`+missing+`"}`))
	J("sse-rate-limit-details", "SendStreamingMessage, executor returns the rate-limit a2a.Error", "InternalError -32603 + RetryInfo in SSE", m, jsonCT,
		jrpc("req-28", "SendStreamingMessage", v2Msg("rate-limit")))

	// ---- HTTP+JSON ----
	R := func(name, provoked, expect string, srv served, method, path string, headers [][2]string, body []byte) {
		c.http(caseInfo{"rest-" + name, "rest", provoked, expect}, srv.http, method, path, headers, body)
	}
	R("task-not-found", "GET /tasks/{unknown}", "TaskNotFoundError 404", m, "GET", "/tasks/"+missing, nil, nil)
	R("task-not-cancelable", "POST /tasks/{completed}:cancel", "TaskNotCancelableError 400", m, "POST", "/tasks/"+done+":cancel", jsonCT, []byte(`{}`))
	R("push-not-supported", "POST /tasks/{id}/pushNotificationConfigs", "PushNotificationNotSupportedError 400", m, "POST", "/tasks/"+done+"/pushNotificationConfigs", jsonCT,
		[]byte(`{"taskId":"`+done+`","url":"https://client.example/hook"}`))
	R("unsupported-operation-streaming", "POST /message:stream, streaming=false", "UnsupportedOperationError 400", r, "POST", "/message:stream", withH(extH), []byte(v2Msg("hello")))
	R("unsupported-operation-extended-card", "GET /extendedAgentCard, extendedAgentCard=false", "UnsupportedOperationError 400", r, "GET", "/extendedAgentCard", [][2]string{extH}, nil)
	R("content-type-not-supported", "executor returns a2a.ErrUnsupportedContentType", "ContentTypeNotSupportedError 400", m, "POST", "/message:send", jsonCT, []byte(v2Msg("unsupported-content-type")))

	R("extended-card-not-configured", "GET /extendedAgentCard, no producer", "ExtendedAgentCardNotConfiguredError 400", m, "GET", "/extendedAgentCard", nil, nil)
	R("extension-support-required", "GET /tasks/{id} without A2A-Extensions", "ExtensionSupportRequiredError 400", r, "GET", "/tasks/"+missing, nil, nil)
	R("version-not-supported", "A2A-Version: 9.9 (app interceptor)", "VersionNotSupportedError 400", m, "GET", "/tasks/"+missing, [][2]string{{"A2A-Version", "9.9"}}, nil)
	R("version-not-supported-query", "?A2A-Version=9.9 query parameter (not read by the SDK)", "TaskNotFoundError 404 (query param ignored)", m, "GET", "/tasks/"+missing+"?A2A-Version=9.9", nil, nil)
	R("invalid-params-missing-message-id", "POST /message:send, message without messageId", "InvalidParams 400", m, "POST", "/message:send", jsonCT,
		[]byte(`{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	R("parse-error", "POST /message:send, body not JSON", "JSONParseError 400", m, "POST", "/message:send", jsonCT, []byte(`{"message":`))
	R("invalid-history-length", "GET /tasks/{id}?historyLength=abc", "InvalidRequest/InvalidParams 400", m, "GET", "/tasks/"+done+"?historyLength=abc", nil, nil)
	R("unknown-route", "GET /nope (no such route)", "404 from net/http mux (not an A2A body)", m, "GET", "/nope", nil, nil)
	R("method-not-allowed", "DELETE /message:send", "405 from net/http mux", m, "DELETE", "/message:send", nil, nil)
	R("internal-error", "executor returns a plain Go error", "InternalError 500", m, "POST", "/message:send", jsonCT, []byte(v2Msg("internal")))
	R("rate-limit-details", "executor returns a2a.Error with ErrorInfo+RetryInfo+QuotaFailure", "InternalError 500 + RetryInfo", m, "POST", "/message:send", jsonCT, []byte(v2Msg("rate-limit")))
	R("aap-error", "executor returns the AAP a2a.Error", "AAP RATE_LIMITED", m, "POST", "/message:send", jsonCT, []byte(v2Msg("aap-error")))
	R("grpc-status-from-executor", "executor returns a grpc status error", "InternalError 500", m, "POST", "/message:send", jsonCT, []byte(v2Msg("grpc-status")))
	R("unauthenticated", "Authorization: Bearer expired", "Unauthenticated 401", m, "GET", "/tasks/"+missing, [][2]string{{"Authorization", "Bearer expired"}}, nil)
	R("unauthorized", "Authorization: Bearer readonly", "Unauthorized 403", m, "GET", "/tasks/"+missing, [][2]string{{"Authorization", "Bearer readonly"}}, nil)
	R("task-failed", "POST /message:send whose task ends FAILED", "- (task FAILED in result)", m, "POST", "/message:send", jsonCT, []byte(v2Msg("fail-task")))
	R("sse-task-failed", "POST /message:stream whose task ends FAILED", "- (SSE stream, final status FAILED)", m, "POST", "/message:stream", jsonCT, []byte(v2Msg("fail-task")))
	R("sse-internal-error", "POST /message:stream, executor errors before any event", "InternalError in SSE", m, "POST", "/message:stream", jsonCT, []byte(v2Msg("internal")))
	R("sse-error-after-task", "POST /message:stream, executor errors after first event", "InternalError in SSE after an event", m, "POST", "/message:stream", jsonCT, []byte(v2Msg("internal-after-task")))
	R("sse-subscribe-task-not-found", "POST /tasks/{unknown}:subscribe", "TaskNotFoundError in SSE", m, "POST", "/tasks/"+missing+":subscribe", jsonCT, []byte(`{}`))

	// ---- gRPC ----
	G := func(name, provoked, expect string, srv served, method string, md [][2]string, msg proto.Message) {
		body, txt := pbBody(msg)
		c.grpc(caseInfo{"grpc-" + name, "grpc", provoked, expect}, srv.grpc, svc+method, md, body, txt)
	}
	extMD := [2]string{"a2a-extensions", requiredExtURI}
	G("task-not-found", "GetTask unknown id", "TaskNotFoundError NOT_FOUND", m, "GetTask", nil, &pb.GetTaskRequest{Id: missing})
	G("task-not-cancelable", "CancelTask on a COMPLETED task", "TaskNotCancelableError FAILED_PRECONDITION", m, "CancelTask", nil, &pb.CancelTaskRequest{Id: done})
	G("push-not-supported", "CreateTaskPushNotificationConfig", "PushNotificationNotSupportedError FAILED_PRECONDITION", m, "CreateTaskPushNotificationConfig", nil,
		&pb.TaskPushNotificationConfig{TaskId: done, Url: "https://client.example/hook"})
	G("unsupported-operation-streaming", "SendStreamingMessage, streaming=false", "UnsupportedOperationError FAILED_PRECONDITION", r, "SendStreamingMessage", [][2]string{extMD}, pbSend("hello", true))
	G("unsupported-operation-extended-card", "GetExtendedAgentCard, extendedAgentCard=false", "UnsupportedOperationError FAILED_PRECONDITION", r, "GetExtendedAgentCard", [][2]string{extMD}, &pb.GetExtendedAgentCardRequest{})
	G("content-type-not-supported", "executor returns a2a.ErrUnsupportedContentType", "ContentTypeNotSupportedError INVALID_ARGUMENT", m, "SendMessage", nil, pbSend("unsupported-content-type", true))

	G("extended-card-not-configured", "GetExtendedAgentCard, no producer", "ExtendedAgentCardNotConfiguredError FAILED_PRECONDITION", m, "GetExtendedAgentCard", nil, &pb.GetExtendedAgentCardRequest{})
	G("extension-support-required", "GetTask without a2a-extensions metadata", "ExtensionSupportRequiredError FAILED_PRECONDITION", r, "GetTask", nil, &pb.GetTaskRequest{Id: missing})
	G("version-not-supported", "a2a-version: 9.9 metadata (app interceptor)", "VersionNotSupportedError FAILED_PRECONDITION", m, "GetTask", [][2]string{{"a2a-version", "9.9"}}, &pb.GetTaskRequest{Id: missing})
	G("invalid-params-missing-message-id", "SendMessage, message without message_id", "InvalidParams INVALID_ARGUMENT", m, "SendMessage", nil, pbSend("hi", false))
	G("method-not-found", "unknown method /lf.a2a.v1.A2AService/Nope", "UNIMPLEMENTED (grpc-go)", m, "Nope", nil, &pb.GetTaskRequest{Id: missing})
	{ // undecodable request message
		ci := caseInfo{"grpc-parse-error", "grpc", "GetTask with a request message that is not valid protobuf", "INTERNAL (grpc-go unmarshal error)"}
		body := grpcFrame([]byte{0x12, 0xff, 0x01})
		c.grpc(ci, m.grpc, svc+"GetTask", nil, body, "raw message bytes: 12 ff 01 (truncated length-delimited field)")
	}
	G("internal-error", "executor returns a plain Go error", "InternalError INTERNAL", m, "SendMessage", nil, pbSend("internal", true))
	G("rate-limit-details", "executor returns a2a.Error with ErrorInfo+RetryInfo+QuotaFailure", "InternalError INTERNAL + RetryInfo", m, "SendMessage", nil, pbSend("rate-limit", true))
	G("aap-error", "executor returns the AAP a2a.Error", "AAP RATE_LIMITED", m, "SendMessage", nil, pbSend("aap-error", true))
	G("grpc-status-from-executor", "executor returns a grpc status RESOURCE_EXHAUSTED with ErrorInfo+RetryInfo", "RESOURCE_EXHAUSTED passed through", m, "SendMessage", nil, pbSend("grpc-status", true))
	G("unauthenticated", "authorization: Bearer expired", "Unauthenticated UNAUTHENTICATED", m, "GetTask", [][2]string{{"authorization", "Bearer expired"}}, &pb.GetTaskRequest{Id: missing})
	G("unauthorized", "authorization: Bearer readonly", "Unauthorized PERMISSION_DENIED", m, "GetTask", [][2]string{{"authorization", "Bearer readonly"}}, &pb.GetTaskRequest{Id: missing})
	G("stream-task-failed", "SendStreamingMessage whose task ends FAILED", "- (grpc-status 0, final status FAILED)", m, "SendStreamingMessage", nil, pbSend("fail-task", true))
	G("stream-internal-error", "SendStreamingMessage, executor errors before any event", "InternalError INTERNAL", m, "SendStreamingMessage", nil, pbSend("internal", true))
	G("stream-error-after-task", "SendStreamingMessage, executor errors after first event", "InternalError INTERNAL after one message", m, "SendStreamingMessage", nil, pbSend("internal-after-task", true))
	G("subscribe-task-not-found", "SubscribeToTask unknown id", "TaskNotFoundError NOT_FOUND", m, "SubscribeToTask", nil, &pb.SubscribeToTaskRequest{Id: missing})
}
