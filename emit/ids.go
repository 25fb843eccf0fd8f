package emit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// This file finds the ids a request carries: the protocol method, the
// JSON-RPC id, the A2A messageId and taskId, the idempotency key, from a
// JSON-RPC request body, an A2A HTTP+JSON route and body, and headers.

// RequestInfo is what a request says about itself. Strings may be views of
// the request bytes they were read from.
type RequestInfo struct {
	Method  string
	Request Request
	Attempt int
}

// ParseJSONRPC reads a JSON-RPC request (or the first member of a batch):
// method, id, and from params the A2A messageId and taskId (params.message
// for SendMessage, params.id for GetTask/CancelTask/SubscribeToTask,
// params.taskId for push configs) and an idempotency key in metadata
// (params.metadata, params.message.metadata or MCP params._meta, key
// idempotencyKey or idempotency_key). It reports whether b was a JSON-RPC
// request at all.
func ParseJSONRPC(b []byte, info *RequestInfo) bool {
	v := trimSpace(b)
	if len(v) > 0 && v[0] == '[' {
		e := skipValue(v, skipSpace(v, 1), 1)
		if e < 0 {
			return false
		}
		v = trimSpace(v[skipSpace(v, 1):e])
	}
	if !isObject(v) {
		return false
	}
	var top [3][]byte
	pick(v, rpcKeys[:], top[:])
	method, ok := jsonString(top[0])
	if !ok {
		return false
	}
	info.Method = method
	if id := top[1]; len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		info.Request.JSONRPCID = json.RawMessage(id)
	}
	params := top[2]
	if !isObject(params) {
		return true
	}
	var p [5][]byte
	pick(params, paramsKeys[:], p[:])
	a2aFields(p[0], p[1], p[2], info)
	if info.Request.TaskID == "" {
		if s := stringOf(p[3]); s != "" && isTaskMethod(method) {
			info.Request.TaskID = s
		}
	}
	if info.Request.IdempotencyKey == "" {
		info.Request.IdempotencyKey = metaKey(p[4])
	}
	return true
}

// The members read, in the order of their slots.
var (
	rpcKeys     = [...]string{"method", "id", "params"}
	paramsKeys  = [...]string{"message", "taskId", "metadata", "id", "_meta"}
	messageKeys = [...]string{"messageId", "taskId", "metadata"}
	metaKeys    = [...]string{"idempotencyKey", "idempotency_key"}
)

// a2aParams reads the message and task ids and the idempotency key from an
// A2A request object (JSON-RPC params or an HTTP+JSON body).
func a2aParams(p []byte, info *RequestInfo) {
	var f [3][]byte
	pick(p, paramsKeys[:3], f[:])
	a2aFields(f[0], f[1], f[2], info)
}

// a2aFields reads the ids from a request's message, taskId and metadata
// members.
func a2aFields(msg, taskID, metadata []byte, info *RequestInfo) {
	if isObject(msg) {
		var m [3][]byte
		pick(msg, messageKeys[:], m[:])
		info.Request.MessageID = stringOf(m[0])
		if t := stringOf(m[1]); t != "" {
			info.Request.TaskID = t
		}
		if info.Request.IdempotencyKey == "" {
			info.Request.IdempotencyKey = metaKey(m[2])
		}
	}
	if info.Request.TaskID == "" {
		info.Request.TaskID = stringOf(taskID)
	}
	if info.Request.IdempotencyKey == "" {
		info.Request.IdempotencyKey = metaKey(metadata)
	}
}

func metaKey(md []byte) string {
	if !isObject(md) {
		return ""
	}
	var k [2][]byte
	pick(md, metaKeys[:], k[:])
	if s := stringOf(k[0]); s != "" {
		return s
	}
	return stringOf(k[1])
}

// isTaskMethod: the methods whose params.id is a task id (A2A v1 and v0.3).
func isTaskMethod(m string) bool {
	switch m {
	case "GetTask", "CancelTask", "SubscribeToTask", "tasks/get", "tasks/cancel", "tasks/resubscribe":
		return true
	}
	return false
}

// ParseRoute maps an A2A HTTP+JSON request (v1 and v0.3 paths, with or
// without a tenant or /v1 prefix) to its method and task id, and reads the
// ids of a JSON body when one is given. It reports whether the route is one
// of A2A's.
func ParseRoute(httpMethod, path string, body []byte, info *RequestInfo) bool {
	var m string
	switch {
	case strings.HasSuffix(path, "/message:send"):
		m = "SendMessage"
	case strings.HasSuffix(path, "/message:stream"):
		m = "SendStreamingMessage"
	case strings.HasSuffix(path, "/extendedAgentCard"), strings.HasSuffix(path, "/card"):
		m = "GetExtendedAgentCard"
	case strings.HasSuffix(path, "/tasks"):
		m = "ListTasks"
	default:
		i := strings.LastIndex(path, "/tasks/")
		if i < 0 {
			return false
		}
		rest := path[i+len("/tasks/"):]
		id, sub, _ := strings.Cut(rest, "/")
		id, verb, _ := strings.Cut(id, ":")
		if id == "" {
			return false
		}
		info.Request.TaskID = id
		switch {
		case strings.HasPrefix(sub, "pushNotificationConfigs"):
			switch {
			case httpMethod == http.MethodPost:
				m = "CreateTaskPushNotificationConfig"
			case httpMethod == http.MethodDelete:
				m = "DeleteTaskPushNotificationConfig"
			case strings.Contains(sub, "/"):
				m = "GetTaskPushNotificationConfig"
			default:
				m = "ListTaskPushNotificationConfigs"
			}
		case sub != "":
			return false
		case verb == "cancel":
			m = "CancelTask"
		case verb == "subscribe":
			m = "SubscribeToTask"
		case verb == "" && httpMethod == http.MethodGet:
			m = "GetTask"
		default:
			return false
		}
	}
	info.Method = m
	if isObject(trimSpace(body)) {
		a2aParams(trimSpace(body), info)
	}
	return true
}

// FromHeaders reads the ids a request carries in headers (names as
// configured; empty names are skipped): request id, attempt, idempotency
// key; and the W3C traceparent header, always.
func FromHeaders(h http.Header, requestID, attempt, idempotency string, info *RequestInfo) {
	if v := h.Get("Traceparent"); v != "" {
		info.Request.TraceID, info.Request.SpanID, _ = ParseTraceparent(v)
	}
	if requestID != "" {
		if v := h.Get(requestID); v != "" {
			info.Request.HTTPRequestID = v
		}
	}
	if attempt != "" {
		if v := h.Get(attempt); v != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 1 && n <= 65535 {
				info.Attempt = n
			}
		}
	}
	if idempotency != "" {
		if v := h.Get(idempotency); v != "" {
			info.Request.IdempotencyKey = v
		}
	}
}
