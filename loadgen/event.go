package loadgen

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// Body forms of the event contract (Config.BodyForm).
const (
	BodyString = "string" // reply.body: the body as UTF-8 text (default)
	BodyJSON   = "json"   // reply.body_json: a JSON body embedded as JSON
	BodyMixed  = "mixed"  // half of the events each way, chosen by event id
)

// event is one observation of one reply, as published (docs/event-contract.md).
type event struct {
	id         string
	observedMS int64
	sourceKind string // agent, gateway
	sourceID   string
	req        *request
	rep        reply

	kind Kind // what the manifest counts it as
}

// appendEvent writes the event JSON (contract v1). Every member the contract
// requires is always written: v, observed_at, and for HTTP replies
// reply.http_status, for gRPC replies reply.grpc.status; the body is sent as
// reply.body (UTF-8 text) when there is one, or as reply.body_json when form
// asks for it and the body is JSON.
func appendEvent(b []byte, e *event, form string) []byte {
	q := e.req
	b = append(b, `{"v":1,"event_id":`...)
	b = appendJSONString(b, e.id)
	b = append(b, `,"observed_at":`...)
	b = strconv.AppendInt(b, e.observedMS, 10)
	b = append(b, `,"source":{"kind":"`...)
	b = append(b, e.sourceKind...)
	b = append(b, `","id":`...)
	b = appendJSONString(b, e.sourceID)
	b = append(b, `},"agent":`...)
	b = appendJSONString(b, q.agent.Name)
	b = append(b, `,"endpoint":`...)
	b = appendJSONString(b, q.agent.Endpoint)
	b = append(b, `,"caller":`...)
	b = appendJSONString(b, q.caller)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, q.method)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(q.attempt), 10)
	b = append(b, `,"request":{"http_request_id":`...)
	b = appendJSONString(b, q.httpReqID)
	b = append(b, `,"jsonrpc_id":`...)
	b = appendJSONString(b, q.jsonrpcID)
	b = append(b, `,"message_id":`...)
	b = appendJSONString(b, q.messageID)
	b = append(b, `,"task_id":`...)
	b = appendJSONString(b, q.taskID)
	b = append(b, `,"idempotency_key":`...)
	b = appendJSONString(b, q.idemKey)
	b = append(b, `},"reply":{"binding":"`...)
	r := &e.rep
	b = append(b, r.binding...)
	b = append(b, '"')
	if r.status != 0 {
		b = append(b, `,"http_status":`...)
		b = strconv.AppendInt(b, int64(r.status), 10)
	}
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, r.headers)
	if r.binding == "grpc" {
		b = append(b, `,"grpc":{"status":`...)
		b = strconv.AppendInt(b, int64(r.grpcStatus), 10)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, r.grpcMessage)
		b = append(b, `,"trailers":`...)
		b = appendHeaders(b, r.grpcTrailers)
		b = append(b, '}')
	}
	if r.body != nil || r.binding != "grpc" {
		if embedJSON(form, e.id, r.body) {
			b = append(b, `,"body_json":`...)
			b = append(b, r.body...)
		} else {
			b = append(b, `,"body":`...)
			b = appendJSONString(b, string(r.body))
		}
	}
	return append(b, `}}`...)
}

// appendPad adds "x_pad" with n bytes of printable padding as the last
// member of the event object that ev (a complete event) holds.
func appendPad(ev []byte, n int) []byte {
	const pattern = "errtrail-padding-"
	ev = append(ev[:len(ev)-1], `,"x_pad":"`...)
	for i := 0; i < n; i++ {
		ev = append(ev, pattern[i%len(pattern)])
	}
	return append(ev, `"}`...)
}

func appendHeaders(b []byte, h [][2]string) []byte {
	b = append(b, '{')
	for i, kv := range h {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, kv[0])
		b = append(b, ':')
		b = appendJSONString(b, kv[1])
	}
	return append(b, '}')
}

// embedJSON decides whether a body goes out as body_json.
func embedJSON(form, id string, body []byte) bool {
	switch form {
	case BodyJSON:
	case BodyMixed:
		h := fnv.New32a()
		h.Write([]byte(id))
		if h.Sum32()%2 == 0 {
			return false
		}
	default:
		return false
	}
	return len(body) > 0 && json.Valid(body)
}
