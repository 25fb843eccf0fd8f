package main

// Captures from github.com/a2aproject/a2a-go v0.3.x (JSON-RPC and gRPC; that
// line has no REST server) and from the v2 module's v0.3 compatibility
// servers (a2acompat/a2av0 JSON-RPC + REST, a2agrpc/v0).

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	legacy "github.com/a2aproject/a2a-go/a2a"
	legacygrpc "github.com/a2aproject/a2a-go/a2agrpc"
	legacypb "github.com/a2aproject/a2a-go/a2apb"
	legacysrv "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

type v03Executor struct{}

func v03Text(m *legacy.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if t, ok := p.(legacy.TextPart); ok {
			return t.Text
		}
	}
	return ""
}

func (v03Executor) Execute(ctx context.Context, rc *legacysrv.RequestContext, q eventqueue.Queue) error {
	switch v03Text(rc.Message) {
	case "complete":
		if err := q.Write(ctx, legacy.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
		ev := legacy.NewStatusUpdateEvent(rc, legacy.TaskStateCompleted, nil)
		ev.Final = true
		return q.Write(ctx, ev)
	case "fail-task":
		if err := q.Write(ctx, legacy.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
		msg := legacy.NewMessageForTask(legacy.MessageRoleAgent, rc, legacy.TextPart{Text: "model backend returned HTTP 503"})
		ev := legacy.NewStatusUpdateEvent(rc, legacy.TaskStateFailed, msg)
		ev.Final = true
		return q.Write(ctx, ev)
	case "internal":
		return errors.New("database connection refused")
	case "internal-after-task":
		if err := q.Write(ctx, legacy.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
		return errors.New("worker crashed after the task was created")
	case "rate-limit":
		return legacy.NewError(legacy.ErrInternalError, "Caller orchestrator-7 exceeded 60 SendMessage calls per minute").
			WithDetails(map[string]any{"retryAfterSeconds": 12, "limit": 60, "caller": "orchestrator-7"})
	case "aap-error":
		return legacy.NewError(legacy.ErrServerError, "Per-key rate limit exceeded.").WithDetails(map[string]any{
			"type": "aap.error", "error_id": "err_01HZ9RATE01", "code": "RATE_LIMITED",
			"message": "Per-key rate limit exceeded.", "retryable": true,
			"details": map[string]any{"retry_after_ms": 30000}, "created_at": "2026-04-30T10:16:00Z",
		})
	case "unsupported-content-type":
		return legacy.NewError(legacy.ErrUnsupportedContentType, "output mode video/mp4 is not supported")
	case "unsupported-operation":
		return legacy.ErrUnsupportedOperation
	}
	return q.Write(ctx, legacy.NewMessage(legacy.MessageRoleAgent, legacy.TextPart{Text: "ok"}))
}

func (v03Executor) Cancel(ctx context.Context, rc *legacysrv.RequestContext, q eventqueue.Queue) error {
	return q.Write(ctx, legacy.NewStatusUpdateEvent(rc, legacy.TaskStateCanceled, nil))
}

type v03Gate struct{}

func (v03Gate) Before(ctx context.Context, cc *legacysrv.CallContext, req *legacysrv.Request) (context.Context, error) {
	if v, ok := cc.RequestMeta().Get("authorization"); ok && len(v) > 0 {
		switch v[0] {
		case "Bearer expired":
			return ctx, legacy.NewError(legacy.ErrUnauthenticated, "bearer token expired")
		case "Bearer readonly":
			return ctx, legacy.NewError(legacy.ErrUnauthorized, "caller readonly may not call "+cc.Method())
		}
	}
	return ctx, nil
}
func (v03Gate) After(ctx context.Context, cc *legacysrv.CallContext, resp *legacysrv.Response) error {
	return nil
}

func v03Msg(text string, withID bool) string {
	id := ""
	if withID {
		id = fmt.Sprintf(`"messageId":"msg-%s",`, text)
	}
	return fmt.Sprintf(`{"message":{"kind":"message",%s"role":"user","parts":[{"kind":"text","text":%q}]}}`, id, text)
}

func legacyPBSend(text string, withID bool) *legacypb.SendMessageRequest {
	m := &legacypb.Message{Role: legacypb.Role_ROLE_USER, Parts: []*legacypb.Part{{Part: &legacypb.Part_Text{Text: text}}}}
	if withID {
		m.MessageId = "msg-" + text
	}
	return &legacypb.SendMessageRequest{Request: m}
}

// v03Cases runs the JSON-RPC and gRPC cases shared by the v0.3 SDK and the
// v2 compat layer; restSrv is empty when there is no REST server.
func v03Cases(c *corpus, m, r served, hasREST bool, extH [2]string) {
	done := completedTaskID(m.http, "/jsonrpc", jrpc(1, "message/send", v03Msg("complete", true)))
	const missing = "00000000-0000-4000-8000-00000000dead"
	J := func(name, provoked, expect string, srv served, headers [][2]string, body []byte) {
		c.http(caseInfo{"jsonrpc-" + name, "jsonrpc", provoked, expect}, srv.http, "POST", "/jsonrpc", headers, body)
	}
	J("task-not-found", "tasks/get unknown id", "TaskNotFoundError -32001", m, jsonCT, jrpc("req-1", "tasks/get", `{"id":"`+missing+`"}`))
	J("task-not-cancelable", "tasks/cancel on a completed task", "TaskNotCancelableError -32002", m, jsonCT, jrpc("req-2", "tasks/cancel", `{"id":"`+done+`"}`))
	J("push-not-supported", "tasks/pushNotificationConfig/set, no push store", "PushNotificationNotSupportedError -32003", m, jsonCT,
		jrpc("req-3", "tasks/pushNotificationConfig/set", `{"taskId":"`+done+`","pushNotificationConfig":{"url":"https://client.example/hook"}}`))
	J("unsupported-operation", "executor returns ErrUnsupportedOperation", "UnsupportedOperationError -32004", m, jsonCT, jrpc("req-4", "message/send", v03Msg("unsupported-operation", true)))
	J("content-type-not-supported", "executor returns ErrUnsupportedContentType", "ContentTypeNotSupportedError -32005", m, jsonCT, jrpc("req-5", "message/send", v03Msg("unsupported-content-type", true)))
	J("extended-card-not-configured", "agent/getAuthenticatedExtendedCard, none configured", "AuthenticatedExtendedCardNotConfiguredError -32007", m, jsonCT,
		jrpc("req-7", "agent/getAuthenticatedExtendedCard", ""))
	J("invalid-params-missing-message-id", "message/send without messageId", "InvalidParams -32602", m, jsonCT, jrpc("req-10", "message/send", v03Msg("hi", false)))
	J("invalid-params-wrong-type", "tasks/get with id a number", "InvalidParams -32602", m, jsonCT, jrpc("req-10b", "tasks/get", `{"id":42}`))
	J("method-not-found", "v1.0 method name GetTask sent to a v0.3 server", "MethodNotFound -32601", m, jsonCT, jrpc("req-11", "GetTask", `{"id":"x"}`))
	J("parse-error", "body not JSON", "JSONParseError -32700", m, jsonCT, []byte(`{"jsonrpc":"2.0","id":"req-12","method":`))
	J("invalid-request-version", `"jsonrpc":"1.0"`, "InvalidRequest -32600", m, jsonCT, []byte(`{"jsonrpc":"1.0","id":"req-13","method":"tasks/get","params":{"id":"x"}}`))
	J("invalid-request-no-method", "method missing", "InvalidRequest -32600", m, jsonCT, []byte(`{"jsonrpc":"2.0","id":"req-15"}`))
	J("internal-error", "executor returns a plain Go error", "InternalError -32603", m, jsonCT, jrpc("req-17", "message/send", v03Msg("internal", true)))
	J("rate-limit-details", "executor returns a2a.Error(ErrInternalError) with a Details map", "InternalError -32603", m, jsonCT, jrpc("req-18", "message/send", v03Msg("rate-limit", true)))
	J("aap-error", "executor returns a2a.Error(ErrServerError) with the aap.error payload as Details", "AAP RATE_LIMITED (-32000)", m, jsonCT, jrpc("req-19", "message/send", v03Msg("aap-error", true)))
	J("unauthenticated", "Authorization: Bearer expired (app interceptor)", "Unauthenticated", m, withH([2]string{"Authorization", "Bearer expired"}), jrpc("req-21", "tasks/get", `{"id":"`+missing+`"}`))
	J("unauthorized", "Authorization: Bearer readonly (app interceptor)", "Unauthorized", m, withH([2]string{"Authorization", "Bearer readonly"}), jrpc("req-22", "tasks/get", `{"id":"`+missing+`"}`))
	J("task-failed", "message/send whose task ends failed", "- (task failed in result)", m, jsonCT, jrpc("req-23", "message/send", v03Msg("fail-task", true)))
	J("sse-task-failed", "message/stream whose task ends failed", "- (SSE, final status failed)", m, jsonCT, jrpc("req-24", "message/stream", v03Msg("fail-task", true)))
	J("sse-internal-error", "message/stream, executor errors before any event", "InternalError -32603 in SSE", m, jsonCT, jrpc("req-25", "message/stream", v03Msg("internal", true)))
	J("sse-error-after-task", "message/stream, executor errors after the Task event", "InternalError in SSE after an event", m, jsonCT, jrpc("req-26", "message/stream", v03Msg("internal-after-task", true)))
	J("sse-resubscribe-task-not-found", "tasks/resubscribe unknown id", "TaskNotFoundError -32001 in SSE", m, jsonCT, jrpc("req-27", "tasks/resubscribe", `{"id":"`+missing+`"}`))
	if r.http != "" {
		J("unsupported-operation-streaming", "message/stream, card streaming=false", "UnsupportedOperationError -32004", r, withH(extH), jrpc("req-28", "message/stream", v03Msg("hello", true)))
		J("extension-support-required", "no X-A2A-Extensions / A2A-Extensions header, extension required", "ExtensionSupportRequiredError", r, jsonCT, jrpc("req-29", "tasks/get", `{"id":"`+missing+`"}`))
		J("version-not-supported", "A2A-Version: 9.9 (app interceptor)", "VersionNotSupportedError", m, withH([2]string{"A2A-Version", "9.9"}), jrpc("req-30", "tasks/get", `{"id":"`+missing+`"}`))
	}

	if hasREST {
		R := func(name, provoked, expect string, srv served, method, path string, headers [][2]string, body []byte) {
			c.http(caseInfo{"rest-" + name, "rest", provoked, expect}, srv.http, method, path, headers, body)
		}
		R("task-not-found", "GET /v1/tasks/{unknown}", "TaskNotFoundError 404", m, "GET", "/v1/tasks/"+missing, nil, nil)
		R("task-not-cancelable", "POST /v1/tasks/{completed}:cancel", "TaskNotCancelableError", m, "POST", "/v1/tasks/"+done+":cancel", jsonCT, []byte(`{}`))
		R("push-not-supported", "POST /v1/tasks/{id}/pushNotificationConfigs", "PushNotificationNotSupportedError", m, "POST", "/v1/tasks/"+done+"/pushNotificationConfigs", jsonCT,
			[]byte(`{"name":"tasks/`+done+`/pushNotificationConfigs/cfg-1","pushNotificationConfig":{"url":"https://client.example/hook"}}`))
		R("unsupported-operation-streaming", "POST /v1/message:stream, streaming=false", "UnsupportedOperationError", r, "POST", "/v1/message:stream", withH(extH),
			[]byte(`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hello"}]}}`))
		R("extended-card-not-configured", "GET /v1/card, no producer", "ExtendedAgentCardNotConfiguredError", m, "GET", "/v1/card", nil, nil)
		R("invalid-params-missing-message-id", "POST /v1/message:send without messageId", "InvalidParams", m, "POST", "/v1/message:send", jsonCT,
			[]byte(`{"message":{"role":"ROLE_USER","content":[{"text":"hi"}]}}`))
		R("parse-error", "POST /v1/message:send, body not JSON", "JSONParseError", m, "POST", "/v1/message:send", jsonCT, []byte(`{"message":`))
		R("unknown-route", "GET /v1/nope", "404 from net/http mux", m, "GET", "/v1/nope", nil, nil)
		R("internal-error", "executor returns a plain Go error", "InternalError 500", m, "POST", "/v1/message:send", jsonCT,
			[]byte(`{"message":{"messageId":"m-int","role":"ROLE_USER","content":[{"text":"internal"}]}}`))
		R("aap-error", "executor returns the AAP a2a.Error", "AAP RATE_LIMITED", m, "POST", "/v1/message:send", jsonCT,
			[]byte(`{"message":{"messageId":"m-aap","role":"ROLE_USER","content":[{"text":"aap-error"}]}}`))
		R("unauthenticated", "Authorization: Bearer expired", "Unauthenticated 401", m, "GET", "/v1/tasks/"+missing, [][2]string{{"Authorization", "Bearer expired"}}, nil)
		R("sse-error-after-task", "POST /v1/message:stream, executor errors after first event", "InternalError in SSE", m, "POST", "/v1/message:stream", jsonCT,
			[]byte(`{"message":{"messageId":"m-iat","role":"ROLE_USER","content":[{"text":"internal-after-task"}]}}`))
		R("sse-internal-error", "POST /v1/message:stream, executor errors before any event", "InternalError in SSE", m, "POST", "/v1/message:stream", jsonCT,
			[]byte(`{"message":{"messageId":"m-i","role":"ROLE_USER","content":[{"text":"internal"}]}}`))
	}

	const svc = "/a2a.v1.A2AService/"
	G := func(name, provoked, expect string, srv served, method string, md [][2]string, msg proto.Message) {
		body, txt := pbBody(msg)
		c.grpc(caseInfo{"grpc-" + name, "grpc", provoked, expect}, srv.grpc, svc+method, md, body, txt)
	}
	G("task-not-found", "GetTask unknown id", "TaskNotFoundError NOT_FOUND", m, "GetTask", nil, &legacypb.GetTaskRequest{Name: "tasks/" + missing})
	G("task-not-cancelable", "CancelTask completed", "TaskNotCancelableError", m, "CancelTask", nil, &legacypb.CancelTaskRequest{Name: "tasks/" + done})
	G("push-not-supported", "CreateTaskPushNotificationConfig", "PushNotificationNotSupportedError", m, "CreateTaskPushNotificationConfig", nil,
		&legacypb.CreateTaskPushNotificationConfigRequest{Parent: "tasks/" + done, ConfigId: "cfg-1", Config: &legacypb.TaskPushNotificationConfig{
			Name: "tasks/" + done + "/pushNotificationConfigs/cfg-1", PushNotificationConfig: &legacypb.PushNotificationConfig{Url: "https://client.example/hook"}}})
	G("content-type-not-supported", "executor returns ErrUnsupportedContentType", "ContentTypeNotSupportedError", m, "SendMessage", nil, legacyPBSend("unsupported-content-type", true))
	G("extended-card-not-configured", "GetAgentCard, no extended card", "ExtendedCard not configured / card", m, "GetAgentCard", nil, &legacypb.GetAgentCardRequest{})
	G("invalid-params-missing-message-id", "SendMessage without message_id", "InvalidParams INVALID_ARGUMENT", m, "SendMessage", nil, legacyPBSend("hi", false))
	G("method-not-found", "unknown method", "UNIMPLEMENTED (grpc-go)", m, "Nope", nil, &legacypb.GetTaskRequest{Name: "tasks/x"})
	G("internal-error", "executor returns a plain Go error", "InternalError INTERNAL", m, "SendMessage", nil, legacyPBSend("internal", true))
	G("rate-limit-details", "executor returns a2a.Error with Details", "InternalError INTERNAL", m, "SendMessage", nil, legacyPBSend("rate-limit", true))
	G("aap-error", "executor returns the AAP a2a.Error", "AAP RATE_LIMITED", m, "SendMessage", nil, legacyPBSend("aap-error", true))
	G("unauthenticated", "authorization: Bearer expired", "UNAUTHENTICATED", m, "GetTask", [][2]string{{"authorization", "Bearer expired"}}, &legacypb.GetTaskRequest{Name: "tasks/" + missing})
	G("stream-task-failed", "SendStreamingMessage whose task ends failed", "- (grpc-status 0)", m, "SendStreamingMessage", nil, legacyPBSend("fail-task", true))
	G("stream-error-after-task", "SendStreamingMessage, executor errors after first event", "InternalError", m, "SendStreamingMessage", nil, legacyPBSend("internal-after-task", true))
	G("subscribe-task-not-found", "TaskSubscription unknown id", "TaskNotFoundError", m, "TaskSubscription", nil, &legacypb.TaskSubscriptionRequest{Name: "tasks/" + missing})
}

func captureA2AGoV03(root string) {
	c := newCorpus(root, "a2a-go-v0.3", "github.com/a2aproject/a2a-go", modVersion("github.com/a2aproject/a2a-go"))
	defer c.finish()
	h := legacysrv.NewHandler(v03Executor{}, legacysrv.WithCallInterceptor(v03Gate{}))
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", legacysrv.NewJSONRPCHandler(h))
	gs := grpc.NewServer()
	legacygrpc.NewHandler(h).RegisterWith(gs)
	hl, gl := listen(), listen()
	go http.Serve(hl, mux)
	go gs.Serve(gl)
	v03Cases(c, served{http: hl.Addr().String(), grpc: gl.Addr().String()}, served{}, false, [2]string{})
}

func captureA2AGoV2Compat(root string) {
	c := newCorpus(root, "a2a-go-v2-compat-v0.3", "github.com/a2aproject/a2a-go/v2 a2acompat/a2av0", modVersion("github.com/a2aproject/a2a-go/v2"))
	defer c.finish()
	mainH, restrictedH := newV2Handlers()
	m := serveV2(mainH, true)
	r := serveV2(restrictedH, true)
	v03Cases(c, m, r, true, [2]string{"X-A2A-Extensions", requiredExtURI})
}
