package main

// Drives SDK servers written in other languages (JS, Python). Each server
// script prints one line "READY {json}" with its listen addresses; the cases
// below are then sent over raw sockets exactly like the Go SDK cases.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	legacypb "github.com/a2aproject/a2a-go/a2apb"
	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"
)

type extServers struct {
	Main       served `json:"main"`
	Restricted served `json:"restricted"`
}

func (s *served) UnmarshalJSON(b []byte) error {
	var v struct{ HTTP, GRPC string }
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.http, s.grpc = v.HTTP, v.GRPC
	return nil
}

// startExt runs cmd (in dir) and waits for its READY line.
func startExt(dir string, env []string, name string, args ...string) (*exec.Cmd, extServers) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.Create(os.TempDir() + "/errtrail-capture-" + strings.ReplaceAll(strings.Join(args, "_"), "/", "_") + ".log")
	must(err)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	_ = logf
	must(err)
	must(cmd.Start())
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "READY ") {
				lines <- strings.TrimPrefix(sc.Text(), "READY ")
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-lines:
		var s extServers
		must(json.Unmarshal([]byte(l), &s))
		return cmd, s
	case <-time.After(60 * time.Second):
		stopExt(cmd)
		panic("server did not become ready: " + name + " " + strings.Join(args, " "))
	}
}

func stopExt(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// setupTaskID posts body and digs result.task.id (v1.0) or result.id (v0.3)
// out of the JSON reply (setup only, not captured).
func setupTaskID(url string, headers [][2]string, body []byte) string {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	must(err)
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := http.DefaultClient.Do(req)
	must(err)
	defer resp.Body.Close()
	var v struct {
		Result struct {
			ID   string `json:"id"`
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
		ID string `json:"id"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &v)
	for _, id := range []string{v.Result.Task.ID, v.Result.ID, v.Task.ID, v.ID} {
		if id != "" {
			return id
		}
	}
	panic(fmt.Sprintf("no task id from %s: %s", url, raw))
}

// v1Target says where a spec-v1.0 server mounts its bindings.
type v1Target struct {
	jsonrpc, rest string // JSON-RPC path, REST prefix
	grpcSvc       string // e.g. /lf.a2a.v1.A2AService/
	version       [2]string
	extHeader     string
}

// v1Cases provokes the A2A v1.0 errors over JSON-RPC, REST and gRPC.
func v1Cases(c *corpus, m, r served, t v1Target) {
	vh := t.version
	hj := [][2]string{{"Content-Type", "application/json"}, vh}
	ext := [2]string{t.extHeader, requiredExtURI}
	done := setupTaskID("http://"+m.http+t.jsonrpc, hj, jrpc(1, "SendMessage", v2Msg("complete")))
	const missing = "00000000-0000-4000-8000-00000000dead"
	J := func(name, provoked, expect string, srv served, headers [][2]string, body []byte) {
		c.http(caseInfo{"jsonrpc-" + name, "jsonrpc", provoked, expect}, srv.http, "POST", t.jsonrpc, headers, body)
	}
	with := func(extra ...[2]string) [][2]string { return append(append([][2]string{}, hj...), extra...) }
	J("task-not-found", "GetTask unknown id", "TaskNotFoundError -32001", m, hj, jrpc("req-1", "GetTask", `{"id":"`+missing+`"}`))
	J("task-not-cancelable", "CancelTask on a COMPLETED task", "TaskNotCancelableError -32002", m, hj, jrpc("req-2", "CancelTask", `{"id":"`+done+`"}`))
	J("push-not-supported", "CreateTaskPushNotificationConfig, agent without push", "PushNotificationNotSupportedError -32003", m, hj,
		jrpc("req-3", "CreateTaskPushNotificationConfig", `{"taskId":"`+done+`","url":"https://client.example/hook"}`))
	J("unsupported-operation-streaming", "SendStreamingMessage, card streaming=false", "UnsupportedOperationError -32004", r, with(ext), jrpc("req-4", "SendStreamingMessage", v2Msg("hello")))
	J("unsupported-operation-extended-card", "GetExtendedAgentCard, card extendedAgentCard=false", "UnsupportedOperationError -32004", r, with(ext), jrpc("req-4b", "GetExtendedAgentCard", `{}`))
	J("unsupported-operation-executor", "executor throws UnsupportedOperationError", "UnsupportedOperationError -32004", m, hj, jrpc("req-4c", "SendMessage", v2Msg("unsupported-operation")))
	J("content-type-not-supported", "executor raises ContentTypeNotSupported", "ContentTypeNotSupportedError -32005", m, hj, jrpc("req-5", "SendMessage", v2Msg("unsupported-content-type")))
	J("content-type-header", "Content-Type: text/plain on the JSON-RPC endpoint", "ContentTypeNotSupportedError -32005 or parse error", m, [][2]string{{"Content-Type", "text/plain"}, vh},
		jrpc("req-5b", "GetTask", `{"id":"`+missing+`"}`))
	J("accepted-output-modes", "SendMessage with configuration.acceptedOutputModes=[video/mp4]", "ContentTypeNotSupportedError -32005 (if the SDK checks)", m, hj,
		jrpc("req-5c", "SendMessage", `{"message":{"messageId":"msg-aom","role":"ROLE_USER","parts":[{"text":"hello"}]},"configuration":{"acceptedOutputModes":["video/mp4"]}}`))
	J("invalid-agent-response", "executor publishes no event", "InvalidAgentResponseError -32006", m, hj, jrpc("req-6", "SendMessage", v2Msg("no-events")))
	J("extended-card-not-configured", "GetExtendedAgentCard, capability on but none configured", "ExtendedAgentCardNotConfiguredError -32007", m, hj, jrpc("req-7", "GetExtendedAgentCard", `{}`))
	J("extension-support-required", "request without the required extension", "ExtensionSupportRequiredError -32008", r, hj, jrpc("req-8", "GetTask", `{"id":"`+missing+`"}`))
	J("version-not-supported", "A2A-Version: 9.9", "VersionNotSupportedError -32009", m, [][2]string{{"Content-Type", "application/json"}, {"A2A-Version", "9.9"}}, jrpc("req-9", "GetTask", `{"id":"`+missing+`"}`))
	J("no-version-header", "v1.0 GetTask without an A2A-Version header (empty = 0.3)", "see capture", m, jsonCT, jrpc("req-9b", "GetTask", `{"id":"`+missing+`"}`))
	J("invalid-params-missing-message-id", "SendMessage, message without messageId", "InvalidParams -32602", m, hj, jrpc("req-10", "SendMessage", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	J("invalid-params-wrong-type", "GetTask with params.id a number", "InvalidParams -32602", m, hj, jrpc("req-10b", "GetTask", `{"id":42}`))
	J("method-not-found", "unknown method", "MethodNotFound -32601", m, hj, jrpc("req-11", "tasks/get", `{"id":"x"}`))
	J("parse-error", "body not JSON", "JSONParseError -32700", m, hj, []byte(`{"jsonrpc":"2.0","id":"req-12","method":`))
	J("invalid-request-version", `"jsonrpc":"1.0"`, "InvalidRequest -32600", m, hj, []byte(`{"jsonrpc":"1.0","id":"req-13","method":"GetTask","params":{"id":"x"}}`))
	J("invalid-request-id-object", "id is an object", "InvalidRequest -32600", m, hj, []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`))
	J("invalid-request-no-method", "method missing", "InvalidRequest -32600", m, hj, []byte(`{"jsonrpc":"2.0","id":"req-15"}`))
	J("internal-error", "executor throws a plain error", "InternalError -32603", m, hj, jrpc("req-17", "SendMessage", v2Msg("internal")))
	J("rate-limit-details", "executor raises an app error with retry details (as the SDK allows)", "InternalError -32603 + retry hints", m, hj, jrpc("req-18", "SendMessage", v2Msg("rate-limit")))
	J("aap-error", "executor raises an app error carrying the AAP aap.error fields", "AAP RATE_LIMITED", m, hj, jrpc("req-19", "SendMessage", v2Msg("aap-error")))
	J("unauthenticated", "Authorization: Bearer expired (app auth rejects)", "authentication failure", m, with([2]string{"Authorization", "Bearer expired"}), jrpc("req-21", "GetTask", `{"id":"`+missing+`"}`))
	J("id-zero", "TaskNotFound with JSON-RPC id 0", "TaskNotFoundError -32001", m, hj, jrpc(0, "GetTask", `{"id":"`+missing+`"}`))
	J("task-failed", "SendMessage whose task ends FAILED", "- (task FAILED in result)", m, hj, jrpc("req-23", "SendMessage", v2Msg("fail-task")))
	J("sse-task-failed", "SendStreamingMessage whose task ends FAILED", "- (SSE, final status FAILED)", m, hj, jrpc("req-24", "SendStreamingMessage", v2Msg("fail-task")))
	J("sse-internal-error", "SendStreamingMessage, executor throws before any event", "InternalError in SSE", m, hj, jrpc("req-25", "SendStreamingMessage", v2Msg("internal")))
	J("sse-error-after-task", "SendStreamingMessage, executor throws after the Task event", "InternalError in SSE after an event", m, hj, jrpc("req-26", "SendStreamingMessage", v2Msg("internal-after-task")))
	J("sse-subscribe-task-not-found", "SubscribeToTask unknown id", "TaskNotFoundError in SSE", m, hj, jrpc("req-27", "SubscribeToTask", `{"id":"`+missing+`"}`))
	J("sse-rate-limit-details", "SendStreamingMessage, executor raises the rate-limit app error", "error in SSE", m, hj, jrpc("req-28", "SendStreamingMessage", v2Msg("rate-limit")))

	p := t.rest
	R := func(name, provoked, expect string, srv served, method, path string, headers [][2]string, body []byte) {
		c.http(caseInfo{"rest-" + name, "rest", provoked, expect}, srv.http, method, p+path, headers, body)
	}
	hv := [][2]string{vh}
	R("task-not-found", "GET /tasks/{unknown}", "TaskNotFoundError 404", m, "GET", "/tasks/"+missing, hv, nil)
	R("task-not-cancelable", "POST /tasks/{completed}:cancel", "TaskNotCancelableError 400", m, "POST", "/tasks/"+done+":cancel", hj, []byte(`{}`))
	R("push-not-supported", "POST /tasks/{id}/pushNotificationConfigs", "PushNotificationNotSupportedError 400", m, "POST", "/tasks/"+done+"/pushNotificationConfigs", hj,
		[]byte(`{"taskId":"`+done+`","url":"https://client.example/hook"}`))
	R("unsupported-operation-streaming", "POST /message:stream, streaming=false", "UnsupportedOperationError 400", r, "POST", "/message:stream", with(ext), []byte(v2Msg("hello")))
	R("unsupported-operation-extended-card", "GET /extendedAgentCard, extendedAgentCard=false", "UnsupportedOperationError 400", r, "GET", "/extendedAgentCard", [][2]string{vh, ext}, nil)
	R("content-type-not-supported", "executor raises ContentTypeNotSupported", "ContentTypeNotSupportedError 400", m, "POST", "/message:send", hj, []byte(v2Msg("unsupported-content-type")))
	R("content-type-header", "POST /message:send with Content-Type: text/plain", "ContentTypeNotSupportedError 400 or parse error", m, "POST", "/message:send",
		[][2]string{{"Content-Type", "text/plain"}, vh}, []byte(v2Msg("hello")))
	R("invalid-agent-response", "executor publishes no event", "InvalidAgentResponseError 500", m, "POST", "/message:send", hj, []byte(v2Msg("no-events")))
	R("extended-card-not-configured", "GET /extendedAgentCard, none configured", "ExtendedAgentCardNotConfiguredError 400", m, "GET", "/extendedAgentCard", hv, nil)
	R("extension-support-required", "GET /tasks/{id} without the required extension", "ExtensionSupportRequiredError 400", r, "GET", "/tasks/"+missing, hv, nil)
	R("version-not-supported", "A2A-Version: 9.9", "VersionNotSupportedError 400", m, "GET", "/tasks/"+missing, [][2]string{{"A2A-Version", "9.9"}}, nil)
	R("version-not-supported-query", "?A2A-Version=9.9 query parameter", "VersionNotSupportedError 400 (if the query is read)", m, "GET", "/tasks/"+missing+"?A2A-Version=9.9", nil, nil)
	R("invalid-params-missing-message-id", "POST /message:send without messageId", "InvalidParams 400", m, "POST", "/message:send", hj, []byte(`{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	R("parse-error", "POST /message:send, body not JSON", "JSONParseError 400", m, "POST", "/message:send", hj, []byte(`{"message":`))
	R("unknown-route", "GET /nope", "404 (framework)", m, "GET", "/nope", hv, nil)
	R("internal-error", "executor throws a plain error", "InternalError 500", m, "POST", "/message:send", hj, []byte(v2Msg("internal")))
	R("rate-limit-details", "executor raises the rate-limit app error", "500 + retry hints", m, "POST", "/message:send", hj, []byte(v2Msg("rate-limit")))
	R("aap-error", "executor raises the AAP app error", "AAP RATE_LIMITED", m, "POST", "/message:send", hj, []byte(v2Msg("aap-error")))
	R("unauthenticated", "Authorization: Bearer expired", "authentication failure", m, "GET", "/tasks/"+missing, [][2]string{vh, {"Authorization", "Bearer expired"}}, nil)
	R("task-failed", "POST /message:send whose task ends FAILED", "- (task FAILED in result)", m, "POST", "/message:send", hj, []byte(v2Msg("fail-task")))
	R("sse-task-failed", "POST /message:stream whose task ends FAILED", "- (SSE, final status FAILED)", m, "POST", "/message:stream", hj, []byte(v2Msg("fail-task")))
	R("sse-internal-error", "POST /message:stream, executor throws before any event", "InternalError in SSE", m, "POST", "/message:stream", hj, []byte(v2Msg("internal")))
	R("sse-error-after-task", "POST /message:stream, executor throws after the first event", "InternalError in SSE after an event", m, "POST", "/message:stream", hj, []byte(v2Msg("internal-after-task")))
	R("sse-subscribe-task-not-found", "POST /tasks/{unknown}:subscribe", "TaskNotFoundError", m, "POST", "/tasks/"+missing+":subscribe", hj, []byte(`{}`))

	if m.grpc == "" {
		return
	}
	G := func(name, provoked, expect string, srv served, method string, md [][2]string, msg proto.Message) {
		body, txt := pbBody(msg)
		c.grpc(caseInfo{"grpc-" + name, "grpc", provoked, expect}, srv.grpc, t.grpcSvc+method, md, body, txt)
	}
	gv := [2]string{strings.ToLower(vh[0]), vh[1]}
	mv := [][2]string{gv}
	extMD := [2]string{strings.ToLower(t.extHeader), requiredExtURI}
	G("task-not-found", "GetTask unknown id", "TaskNotFoundError NOT_FOUND", m, "GetTask", mv, &pb.GetTaskRequest{Id: missing})
	G("task-not-cancelable", "CancelTask on a COMPLETED task", "TaskNotCancelableError FAILED_PRECONDITION", m, "CancelTask", mv, &pb.CancelTaskRequest{Id: done})
	G("push-not-supported", "CreateTaskPushNotificationConfig", "PushNotificationNotSupportedError FAILED_PRECONDITION", m, "CreateTaskPushNotificationConfig", mv,
		&pb.TaskPushNotificationConfig{TaskId: done, Url: "https://client.example/hook"})
	G("unsupported-operation-streaming", "SendStreamingMessage, streaming=false", "UnsupportedOperationError FAILED_PRECONDITION", r, "SendStreamingMessage", [][2]string{gv, extMD}, pbSend("hello", true))
	G("unsupported-operation-extended-card", "GetExtendedAgentCard, extendedAgentCard=false", "UnsupportedOperationError FAILED_PRECONDITION", r, "GetExtendedAgentCard", [][2]string{gv, extMD}, &pb.GetExtendedAgentCardRequest{})
	G("content-type-not-supported", "executor raises ContentTypeNotSupported", "ContentTypeNotSupportedError INVALID_ARGUMENT", m, "SendMessage", mv, pbSend("unsupported-content-type", true))
	G("invalid-agent-response", "executor publishes no event", "InvalidAgentResponseError INTERNAL", m, "SendMessage", mv, pbSend("no-events", true))
	G("extended-card-not-configured", "GetExtendedAgentCard, none configured", "ExtendedAgentCardNotConfiguredError FAILED_PRECONDITION", m, "GetExtendedAgentCard", mv, &pb.GetExtendedAgentCardRequest{})
	G("extension-support-required", "GetTask without the required extension", "ExtensionSupportRequiredError FAILED_PRECONDITION", r, "GetTask", mv, &pb.GetTaskRequest{Id: missing})
	G("version-not-supported", "a2a-version: 9.9", "VersionNotSupportedError FAILED_PRECONDITION", m, "GetTask", [][2]string{{"a2a-version", "9.9"}}, &pb.GetTaskRequest{Id: missing})
	G("invalid-params-missing-message-id", "SendMessage without message_id", "InvalidParams INVALID_ARGUMENT", m, "SendMessage", mv, pbSend("hi", false))
	G("method-not-found", "unknown method", "UNIMPLEMENTED", m, "Nope", mv, &pb.GetTaskRequest{Id: missing})
	c.grpc(caseInfo{"grpc-parse-error", "grpc", "GetTask with a request message that is not valid protobuf", "INTERNAL / INVALID_ARGUMENT"}, m.grpc, t.grpcSvc+"GetTask", mv,
		grpcFrame([]byte{0x12, 0xff, 0x01}), "raw message bytes: 12 ff 01 (truncated length-delimited field)")
	G("internal-error", "executor throws a plain error", "InternalError INTERNAL/UNKNOWN", m, "SendMessage", mv, pbSend("internal", true))
	G("rate-limit-details", "executor raises the rate-limit app error", "retry hints", m, "SendMessage", mv, pbSend("rate-limit", true))
	G("aap-error", "executor raises the AAP app error", "AAP RATE_LIMITED", m, "SendMessage", mv, pbSend("aap-error", true))
	G("unauthenticated", "authorization: Bearer expired", "UNAUTHENTICATED", m, "GetTask", [][2]string{gv, {"authorization", "Bearer expired"}}, &pb.GetTaskRequest{Id: missing})
	G("stream-task-failed", "SendStreamingMessage whose task ends FAILED", "- (grpc-status 0)", m, "SendStreamingMessage", mv, pbSend("fail-task", true))
	G("stream-internal-error", "SendStreamingMessage, executor throws before any event", "INTERNAL", m, "SendStreamingMessage", mv, pbSend("internal", true))
	G("stream-error-after-task", "SendStreamingMessage, executor throws after first event", "INTERNAL after one message", m, "SendStreamingMessage", mv, pbSend("internal-after-task", true))
	G("subscribe-task-not-found", "SubscribeToTask unknown id", "TaskNotFoundError NOT_FOUND", m, "SubscribeToTask", mv, &pb.SubscribeToTaskRequest{Id: missing})
}

// v03CompatCases sends v0.3-shaped requests to a v1.0 SDK's compat layer.
func v03CompatCases(c *corpus, m served, jsonrpcPath, restPrefix, grpcSvc string, hdr [][2]string) {
	hj := append([][2]string{{"Content-Type", "application/json"}}, hdr...)
	done := setupTaskID("http://"+m.http+jsonrpcPath, hj, jrpc(1, "message/send", v03Msg("complete", true)))
	const missing = "00000000-0000-4000-8000-00000000dead"
	J := func(name, provoked, expect string, body []byte) {
		c.http(caseInfo{"v03-jsonrpc-" + name, "jsonrpc", provoked, expect}, m.http, "POST", jsonrpcPath, hj, body)
	}
	J("task-not-found", "v0.3 tasks/get unknown id", "TaskNotFoundError -32001", jrpc("req-1", "tasks/get", `{"id":"`+missing+`"}`))
	J("task-not-cancelable", "v0.3 tasks/cancel completed task", "TaskNotCancelableError -32002", jrpc("req-2", "tasks/cancel", `{"id":"`+done+`"}`))
	J("push-not-supported", "v0.3 tasks/pushNotificationConfig/set", "PushNotificationNotSupportedError -32003",
		jrpc("req-3", "tasks/pushNotificationConfig/set", `{"taskId":"`+done+`","pushNotificationConfig":{"url":"https://client.example/hook"}}`))
	J("extended-card-not-configured", "v0.3 agent/getAuthenticatedExtendedCard", "AuthenticatedExtendedCardNotConfiguredError -32007", jrpc("req-7", "agent/getAuthenticatedExtendedCard", ""))
	J("invalid-params-missing-message-id", "v0.3 message/send without messageId", "InvalidParams -32602", jrpc("req-10", "message/send", v03Msg("hi", false)))
	J("method-not-found", "unknown v0.3 method", "MethodNotFound -32601", jrpc("req-11", "tasks/nope", `{}`))
	J("internal-error", "executor throws", "InternalError -32603", jrpc("req-17", "message/send", v03Msg("internal", true)))
	J("rate-limit-details", "executor raises the rate-limit app error", "error with retry hints", jrpc("req-18", "message/send", v03Msg("rate-limit", true)))
	J("sse-error-after-task", "v0.3 message/stream, executor throws after first event", "error in SSE", jrpc("req-26", "message/stream", v03Msg("internal-after-task", true)))
	if restPrefix != "" {
		R := func(name, provoked, expect, method, path string, body []byte) {
			c.http(caseInfo{"v03-rest-" + name, "rest", provoked, expect}, m.http, method, restPrefix+path, hj, body)
		}
		R("task-not-found", "v0.3 GET /v1/tasks/{unknown}", "TaskNotFoundError 404", "GET", "/v1/tasks/"+missing, nil)
		R("task-not-cancelable", "v0.3 POST /v1/tasks/{completed}:cancel", "TaskNotCancelableError", "POST", "/v1/tasks/"+done+":cancel", []byte(`{}`))
		R("invalid-params-missing-message-id", "v0.3 POST /v1/message:send without messageId", "InvalidParams", "POST", "/v1/message:send",
			[]byte(`{"message":{"role":"ROLE_USER","content":[{"text":"hi"}]}}`))
		R("parse-error", "v0.3 POST /v1/message:send, body not JSON", "JSONParseError", "POST", "/v1/message:send", []byte(`{"message":`))
		R("internal-error", "v0.3 POST /v1/message:send, executor throws", "InternalError 500", "POST", "/v1/message:send",
			[]byte(`{"message":{"messageId":"m-int","role":"ROLE_USER","content":[{"text":"internal"}]}}`))
		R("extended-card-not-configured", "v0.3 GET /v1/card", "extended card not configured", "GET", "/v1/card", nil)
	}
	if grpcSvc != "" && m.grpc != "" {
		G := func(name, provoked, expect, method string, msg proto.Message) {
			body, txt := pbBody(msg)
			c.grpc(caseInfo{"v03-grpc-" + name, "grpc", provoked, expect}, m.grpc, grpcSvc+method, nil, body, txt)
		}
		G("task-not-found", "v0.3 GetTask unknown id", "TaskNotFoundError NOT_FOUND", "GetTask", &legacypb.GetTaskRequest{Name: "tasks/" + missing})
		G("task-not-cancelable", "v0.3 CancelTask completed", "TaskNotCancelableError", "CancelTask", &legacypb.CancelTaskRequest{Name: "tasks/" + done})
		G("invalid-params-missing-message-id", "v0.3 SendMessage without message_id", "InvalidParams", "SendMessage", legacyPBSend("hi", false))
		G("internal-error", "v0.3 SendMessage, executor throws", "INTERNAL/UNKNOWN", "SendMessage", legacyPBSend("internal", true))
		G("rate-limit-details", "v0.3 SendMessage, rate-limit app error", "retry hints", "SendMessage", legacyPBSend("rate-limit", true))
	}
}

func captureA2AJS1(root string) {
	cmd, s := startExt("../js", nil, "node", "server-v1.mjs")
	defer stopExt(cmd)
	c := newCorpus(root, "a2a-js-1", "@a2a-js/sdk", npmVersion("a2a-js-1"))
	defer c.finish()
	v1Cases(c, s.Main, s.Restricted, v1Target{jsonrpc: "/jsonrpc", rest: "/rest", grpcSvc: "/lf.a2a.v1.A2AService/",
		version: [2]string{"A2A-Version", "1.0"}, extHeader: "A2A-Extensions"})
	handlerErrorCases(c, s.Main, true, "/jsonrpc", "/rest", "/lf.a2a.v1.A2AService/", [][2]string{{"A2A-Version", "1.0"}})
	v03CompatCases(c, s.Main, "/jsonrpc", "/legacy", "/a2a.v1.A2AService/", [][2]string{{"A2A-Version", "0.3"}})
}

func npmVersion(alias string) string {
	b, err := os.ReadFile("../js/node_modules/" + alias + "/package.json")
	if err != nil {
		return "unknown"
	}
	var v struct{ Version string }
	_ = json.Unmarshal(b, &v)
	return v.Version
}

func captureA2AJS03(root string) {
	cmd, s := startExt("../js", nil, "node", "server-v03.mjs")
	defer stopExt(cmd)
	c := newCorpus(root, "a2a-js-0.3", "@a2a-js/sdk", npmVersion("a2a-js-03"))
	defer c.finish()
	v03Cases(c, s.Main, s.Restricted, true, [2]string{"X-A2A-Extensions", requiredExtURI})
	handlerErrorCases(c, s.Main, false, "/jsonrpc", "", "/a2a.v1.A2AService/", nil)
}

// handlerErrorCases: errors raised by an app wrapper around the SDK request
// handler (before the executor), for SDKs that turn executor exceptions into
// a FAILED task instead of an error reply.
func handlerErrorCases(c *corpus, m served, v1 bool, jsonrpcPath, restPrefix, grpcSvc string, hdr [][2]string) {
	hj := append([][2]string{{"Content-Type", "application/json"}}, hdr...)
	md := [][2]string{}
	for _, h := range hdr {
		md = append(md, [2]string{strings.ToLower(h[0]), h[1]})
	}
	for _, k := range []struct{ text, what, expect string }{
		{"rate-limit-handler", "request-handler wrapper rejects with a rate-limit error carrying retry details", "InternalError + retry hints"},
		{"aap-error-handler", "request-handler wrapper rejects with the AAP aap.error payload", "AAP RATE_LIMITED"},
	} {
		name := strings.TrimSuffix(k.text, "-handler") + "-from-handler"
		if v1 {
			c.http(caseInfo{"jsonrpc-" + name, "jsonrpc", k.what, k.expect}, m.http, "POST", jsonrpcPath, hj, jrpc("req-h", "SendMessage", v2Msg(k.text)))
			c.http(caseInfo{"jsonrpc-sse-" + name, "jsonrpc", k.what + " (SendStreamingMessage)", k.expect}, m.http, "POST", jsonrpcPath, hj, jrpc("req-hs", "SendStreamingMessage", v2Msg(k.text)))
			c.http(caseInfo{"rest-" + name, "rest", k.what, k.expect}, m.http, "POST", restPrefix+"/message:send", hj, []byte(v2Msg(k.text)))
			c.http(caseInfo{"rest-sse-" + name, "rest", k.what + " (message:stream)", k.expect}, m.http, "POST", restPrefix+"/message:stream", hj, []byte(v2Msg(k.text)))
			body, txt := pbBody(pbSend(k.text, true))
			c.grpc(caseInfo{"grpc-" + name, "grpc", k.what, k.expect}, m.grpc, grpcSvc+"SendMessage", md, body, txt)
			body, txt = pbBody(pbSend(k.text, true))
			c.grpc(caseInfo{"grpc-stream-" + name, "grpc", k.what + " (SendStreamingMessage)", k.expect}, m.grpc, grpcSvc+"SendStreamingMessage", md, body, txt)
		} else {
			c.http(caseInfo{"jsonrpc-" + name, "jsonrpc", k.what, k.expect}, m.http, "POST", jsonrpcPath, hj, jrpc("req-h", "message/send", v03Msg(k.text, true)))
			c.http(caseInfo{"jsonrpc-sse-" + name, "jsonrpc", k.what + " (message/stream)", k.expect}, m.http, "POST", jsonrpcPath, hj, jrpc("req-hs", "message/stream", v03Msg(k.text, true)))
			rb := []byte(`{"message":{"messageId":"m-h","role":"ROLE_USER","content":[{"text":"` + k.text + `"}]}}`)
			c.http(caseInfo{"rest-" + name, "rest", k.what, k.expect}, m.http, "POST", restPrefix+"/v1/message:send", hj, rb)
			body, txt := pbBody(legacyPBSend(k.text, true))
			c.grpc(caseInfo{"grpc-" + name, "grpc", k.what, k.expect}, m.grpc, grpcSvc+"SendMessage", md, body, txt)
		}
	}
}

func captureA2APython(root string) {
	cmd, s := startExt("../python", nil, ".venv/bin/python", "server.py")
	defer stopExt(cmd)
	c := newCorpus(root, "a2a-python-1", "a2a-sdk (PyPI)", pipVersion("a2a-sdk"))
	defer c.finish()
	v1Cases(c, s.Main, s.Restricted, v1Target{jsonrpc: "/jsonrpc", rest: "/rest", grpcSvc: "/lf.a2a.v1.A2AService/",
		version: [2]string{"A2A-Version", "1.0"}, extHeader: "A2A-Extensions"})
	handlerErrorCases(c, s.Main, true, "/jsonrpc", "/rest", "/lf.a2a.v1.A2AService/", [][2]string{{"A2A-Version", "1.0"}})
	v03CompatCases(c, s.Main, "/jsonrpc", "/rest", "/a2a.v1.A2AService/", [][2]string{{"A2A-Version", "0.3"}})
}

func pipVersion(dist string) string {
	out, err := exec.Command("../python/.venv/bin/python", "-c",
		"import importlib.metadata as m; print(m.version('"+dist+"'))").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
