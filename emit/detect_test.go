package emit

import (
	"bytes"
	"testing"
)

func TestDetectTable(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		ct     string
		body   string
		want   bool
	}{
		{"400", 400, "application/json", `{"error":{"code":400}}`, true},
		{"429 empty", 429, "", ``, true},
		{"503 text", 503, "text/plain", `down`, true},
		{"302", 302, "text/html", `moved`, false},
		{"jsonrpc error in 200", 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`, true},
		{"jsonrpc error null + result", 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":null,"result":{"ok":true}}`, false},
		{"mcp isError", 200, "application/json", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}`, true},
		{"mcp isError false", 200, "application/json", `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":false}}`, false},
		{"task failed v1", 200, "application/json", `{"jsonrpc":"2.0","id":3,"result":{"task":{"id":"t1","status":{"state":"TASK_STATE_FAILED"}}}}`, true},
		{"task failed v0.3", 200, "application/json", `{"jsonrpc":"2.0","id":3,"result":{"kind":"task","id":"t1","status":{"state":"failed"}}}`, true},
		{"rest task failed", 200, "application/a2a+json", `{"task":{"id":"t1","status":{"state":"TASK_STATE_FAILED"}}}`, true},
		{"task completed mentions failed", 200, "application/json", `{"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED","message":{"parts":[{"text":"the \"error\" word, failed"}]}}}}}`, false},
		{"json result", 200, "application/json", `{"jsonrpc":"2.0","id":4,"result":{"id":"t1"}}`, false},
		{"batch with error", 200, "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601}}]`, true},
		{"non-JSON 200", 200, "text/html", `<p>error</p>`, false},
		{"sse error event", 200, "text/event-stream", "event: error\ndata: {\"error\":{\"code\":500}}\n\n", true},
		{"sse task failed", 200, "text/event-stream", "data: {\"result\":{\"task\":{\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\ndata: {\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_FAILED\"}}}}\n\n", true},
		{"sse success", 200, "text/event-stream", "data: {\"result\":{\"statusUpdate\":{\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n", false},
	} {
		got := IsErrorStatus(c.status)
		if !got {
			switch KindOf(c.ct) {
			case BodyJSON:
				got = JSONIsError([]byte(c.body))
			case BodySSE:
				s := NewSSEScanner(1 << 10)
				s.Write([]byte(c.body))
				s.End()
				got = s.Found()
			}
		}
		if got != c.want {
			t.Errorf("%s: error = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestSSEScannerChunking feeds a stream one byte at a time and in one piece:
// the same error event comes out, framed so the decoder reads it.
func TestSSEScannerChunking(t *testing.T) {
	stream := []byte("id: 1\r\ndata: {\"result\":{\"task\":{\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\r\n\r\n" +
		"event: error\ndata: {\"jsonrpc\":\"2.0\",\n" + "data: \"error\":{\"code\":-32603}}\n\n: keepalive\n\n")
	whole := NewSSEScanner(1 << 10)
	whole.Write(stream)
	whole.End()
	bytewise := NewSSEScanner(1 << 10)
	for i := range stream {
		bytewise.Write(stream[i : i+1])
	}
	bytewise.End()
	want := "event: error\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"error\":{\"code\":-32603}}\n\n"
	if string(whole.ErrorEvent()) != want || !bytes.Equal(whole.ErrorEvent(), bytewise.ErrorEvent()) {
		t.Fatalf("error event %q / %q; want %q", whole.ErrorEvent(), bytewise.ErrorEvent(), want)
	}
	// An event over the bound is not inspected (and not kept).
	big := NewSSEScanner(32)
	big.Write([]byte("event: error\ndata: " + string(bytes.Repeat([]byte("x"), 100)) + "\n\n"))
	if big.Found() {
		t.Fatal("an event over the bound was inspected")
	}
}

func TestParseRequestIDs(t *testing.T) {
	var info RequestInfo
	if !ParseJSONRPC([]byte(`{"jsonrpc":"2.0","id":"req-41","method":"SendMessage","params":{"message":{"messageId":"m-1","taskId":"t-1","metadata":{"idempotencyKey":"lead-7781"}}}}`), &info) {
		t.Fatal("not a JSON-RPC request")
	}
	if info.Method != "SendMessage" || string(info.Request.JSONRPCID) != `"req-41"` || info.Request.MessageID != "m-1" ||
		info.Request.TaskID != "t-1" || info.Request.IdempotencyKey != "lead-7781" {
		t.Fatalf("got %+v", info)
	}
	info = RequestInfo{}
	ParseJSONRPC([]byte(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-9"}}`), &info)
	if string(info.Request.JSONRPCID) != "7" || info.Request.TaskID != "t-9" {
		t.Fatalf("got %+v", info)
	}
	for _, c := range []struct{ m, p, method, task string }{
		{"POST", "/message:send", "SendMessage", ""},
		{"POST", "/tenant-a/message:stream", "SendStreamingMessage", ""},
		{"GET", "/tasks/t-1", "GetTask", "t-1"},
		{"POST", "/v1/tasks/t-2:cancel", "CancelTask", "t-2"},
		{"POST", "/tasks/t-3:subscribe", "SubscribeToTask", "t-3"},
		{"POST", "/tasks/t-4/pushNotificationConfigs", "CreateTaskPushNotificationConfig", "t-4"},
		{"GET", "/tasks/t-5/pushNotificationConfigs/c1", "GetTaskPushNotificationConfig", "t-5"},
		{"GET", "/extendedAgentCard", "GetExtendedAgentCard", ""},
	} {
		info = RequestInfo{}
		if !ParseRoute(c.m, c.p, nil, &info) || info.Method != c.method || info.Request.TaskID != c.task {
			t.Errorf("%s %s: %+v", c.m, c.p, info)
		}
	}
	if ParseRoute("GET", "/nope", nil, &info) {
		t.Error("/nope is an A2A route")
	}
}
