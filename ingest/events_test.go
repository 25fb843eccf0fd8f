package ingest_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// goodEvents returns n valid event JSON messages with distinct event ids,
// over a few agents, callers and reply shapes.
func goodEvents(run string, from, n int) []kafka.Message {
	now := time.Now().UnixMilli()
	out := make([]kafka.Message, 0, n)
	for i := from; i < from+n; i++ {
		var reply string
		switch i % 3 {
		case 0:
			reply = `{"binding":"jsonrpc","http_status":429,"headers":{"Content-Type":"application/json","Retry-After":"12"},"body_json":{"jsonrpc":"2.0","id":"req-%d","error":{"code":-32603,"message":"rate limited"}}}`
		case 1:
			reply = `{"binding":"http","http_status":503,"headers":{"Content-Type":"application/problem+json"},"body":"{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\"overloaded %d\"}"}`
		default:
			reply = `{"binding":"grpc","grpc":{"status":8,"message":"quota%%20exceeded%%20%d"}}`
		}
		reply = fmt.Sprintf(reply, i)
		v := fmt.Sprintf(`{"v":1,"event_id":"%s-%d","observed_at":%d,"source":{"kind":"gateway","id":"gw-1"},"agent":"agent-%d","caller":"caller-%d","method":"SendMessage","attempt":1,"request":{"jsonrpc_id":"req-%d","idempotency_key":"k-%d"},"reply":%s}`,
			run, i, now, i%7, i%13, i, i, reply)
		out = append(out, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(v)})
	}
	return out
}

// testMaxBytes is the decoder's size limit in the tests, below the broker's
// default message limit (1 MiB) so that an over-limit message can be produced.
const testMaxBytes = 64 << 10

// poisonEvents returns n messages that must be dead-lettered, cycling
// through the kinds issue 3 §5 names.
func poisonEvents(n int) []kafka.Message {
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	huge := `{"v":1,"observed_at":1,"reply":{"body":"` + strings.Repeat("x", testMaxBytes+10) + `"}}`
	kinds := [][]byte{
		[]byte(`{"v":1,"event_id":"truncated`),                                       // malformed JSON
		[]byte(`{"v":1,"observed_at":1,"reply":{"body_json":` + deep + `}}`),         // deep nesting
		[]byte("{\"v\":1,\"observed_at\":1,\"agent\":\"bad\xff\xfe\",\"reply\":{}}"), // invalid UTF-8
		[]byte(`{"v":"one","observed_at":"yesterday","reply":{}}`),                   // wrong types
		{}, // empty value
		[]byte("this is not JSON at all, just text"), // not JSON
		[]byte(`{"v":7,"observed_at":1,"reply":{}}`), // unknown contract version
	}
	out := make([]kafka.Message, 0, n)
	for i := 0; i < n; i++ {
		var v []byte
		if i%100 == 99 { // a few over the size limit: they are big
			v = []byte(huge)
		} else {
			v = bytes.Clone(kinds[i%len(kinds)])
		}
		out = append(out, kafka.Message{Key: []byte(fmt.Sprint("p", i)), Value: v})
	}
	return out
}

// interleave mixes b into a evenly.
func interleave(a, b []kafka.Message) []kafka.Message {
	out := make([]kafka.Message, 0, len(a)+len(b))
	step := 1
	if len(b) > 0 {
		step = max(len(a)/len(b), 1)
	}
	j := 0
	for i, m := range a {
		out = append(out, m)
		if i%step == step-1 && j < len(b) {
			out = append(out, b[j])
			j++
		}
	}
	return append(out, b[j:]...)
}
