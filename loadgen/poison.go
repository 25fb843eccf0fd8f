package loadgen

import (
	"bytes"
	"strconv"
)

// poisonValue returns a Kafka message value of the given poison kind. Each
// carries the run's context where its form allows (an event_id, agent and
// caller), so a dead-letter row can be traced back to this tool:
//
//   - malformed_json: an event cut off in the middle of a member
//   - too_large: a well-formed event whose body is tooLarge bytes (over the
//     ingester's 1 MiB limit); highly compressible
//   - too_deep: a well-formed event whose reply.body_json nests 200 levels
//   - invalid_utf8: an event whose body string holds bytes that are not UTF-8
//   - wrong_types: well-formed JSON with the required members mistyped
//     (v and observed_at as strings, reply.http_status as a string)
//   - empty: a zero-length value
//   - not_json: plain text that is neither JSON, HTTP/1.x nor the gRPC form
func poisonValue(kind, id string, observedMS int64, agent, caller string, tooLarge int) []byte {
	head := func() []byte {
		b := []byte(`{"v":1,"event_id":`)
		b = appendJSONString(b, id)
		b = append(b, `,"observed_at":`...)
		b = strconv.AppendInt(b, observedMS, 10)
		b = append(b, `,"agent":`...)
		b = appendJSONString(b, agent)
		b = append(b, `,"caller":`...)
		b = appendJSONString(b, caller)
		return b
	}
	switch kind {
	case PoisonMalformedJSON:
		b := head()
		b = append(b, `,"reply":{"binding":"jsonrpc","http_status":429,"body":"{\"jsonrpc\":\"2.0\",\"error\":{\"co`...)
		return b
	case PoisonTooLarge:
		b := head()
		b = append(b, `,"reply":{"binding":"http","http_status":429,"headers":{"Content-Type":"application/json"},"body":"{\"error\":{\"code\":429,\"message\":\"`...)
		pad := tooLarge - len(b) - 16
		if pad < 0 {
			pad = 0
		}
		b = append(b, bytes.Repeat([]byte("x"), pad)...)
		return append(b, `\"}}"}}`...)
	case PoisonTooDeep:
		b := head()
		b = append(b, `,"reply":{"binding":"http","http_status":429,"body_json":`...)
		const depth = 200
		b = append(b, bytes.Repeat([]byte(`{"a":`), depth)...)
		b = append(b, '1')
		b = append(b, bytes.Repeat([]byte(`}`), depth)...)
		return append(b, `}}`...)
	case PoisonInvalidUTF8:
		b := head()
		b = append(b, `,"reply":{"binding":"http","http_status":429,"body":"rate limit `...)
		b = append(b, "\xff\xfe\xc3\x28"...) // not UTF-8
		b = append(b, ` exceeded"}}`...)
		return b
	case PoisonWrongTypes:
		b := []byte(`{"v":"1","event_id":`)
		b = appendJSONString(b, id)
		b = append(b, `,"observed_at":"`...)
		b = strconv.AppendInt(b, observedMS, 10)
		b = append(b, `","agent":`...)
		b = appendJSONString(b, agent)
		b = append(b, `,"caller":`...)
		b = appendJSONString(b, caller)
		b = append(b, `,"attempt":"first","reply":{"binding":"http","http_status":"429","body":["not","a","string"]}}`...)
		return b
	case PoisonEmpty:
		return []byte{}
	default: // not_json
		return []byte("upstream connect error or disconnect/reset before headers. reset reason: connection termination (" + id + ")")
	}
}
