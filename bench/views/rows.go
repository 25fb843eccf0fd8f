package main

import (
	"fmt"
	"strings"

	"github.com/errtrail/errtrail/schema"
)

// The synthetic rows are generated on the server (INSERT … SELECT from
// system.numbers), so the client costs nothing and the server's CPU is the
// generation (measured alone by the "none" variants) plus the views.
//
// Row n of a variant's database is always the same row, so every variant
// stores the same data (bar the message length). The mix:
//   - 2,000 callers, each calling 3 of 50 agents; 90 % observed by the agent
//     itself, 10 % by a gateway;
//   - kinds weighted quota 35 %, overload 15 %, internal 20 %, unknown 10 %,
//     invalid_argument 10 %, unauthenticated 5 %, not_found 5 %, each with
//     its HTTP status, code and gRPC status; 60 % of the non-unknown rows typed;
//   - 1 % dead letters (dl_reason, dl_error, ~200 bytes of raw);
//   - ids: event_id 95 % (else the view uses the Kafka coordinates), error_id
//     70 %, request_id 80 %, http_request_id 50 %, message_id 40 %, task_id
//     10 %: 3.5 non-empty ids of the six kinds per row on average;
//   - 20 % of the rows with one or two findings;
//   - event time advancing at -event-rate events per second from one hour
//     before the run started; 4 Kafka partitions.
//
// The message is a kind-specific prefix followed by hex digits of hashes
// of the row number, cut to msgBytes: unique per row and not trivially
// compressible (hex has 4 bits of entropy per byte; LZ4 finds no repeats).

type kindDef struct {
	kind, code, grpc, prefix string
	http, retryable, weight  int
}

var kinds = []kindDef{
	{"quota", "RATE_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED", "Rate limit exceeded for this caller", 429, 1, 7},
	{"overload", "OVERLOADED", "UNAVAILABLE", "Service overloaded, try again later", 503, 1, 3},
	{"internal", "INTERNAL", "INTERNAL", "Internal error while handling the request", 500, -1, 4},
	{"unknown", "", "UNKNOWN", "Bad gateway", 502, -1, 2},
	{"invalid_argument", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid argument in request params", 400, 0, 2},
	{"unauthenticated", "UNAUTHENTICATED", "UNAUTHENTICATED", "Missing or invalid credentials", 401, 0, 1},
	{"not_found", "NOT_FOUND", "NOT_FOUND", "Task not found", 404, 0, 1},
}

// kindArrays renders SQL array literals with one slot per weight unit, so
// that arr[ki] with ki uniform in 1..len picks a kind by its weight.
func kindArrays() (slots int, arr func(f func(k kindDef) string) string) {
	var list []kindDef
	for _, k := range kinds {
		for i := 0; i < k.weight; i++ {
			list = append(list, k)
		}
	}
	return len(list), func(f func(k kindDef) string) string {
		s := make([]string, len(list))
		for i, k := range list {
			s[i] = f(k)
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// fillQuery inserts rows n = off … off+rows-1 into db.landing.
func fillQuery(db string, off, rows int64, msgBytes int, base int64, rate int64) string {
	slots, arr := kindArrays()
	str := func(f func(k kindDef) string) string {
		return arr(func(k kindDef) string { return quote(f(k)) })
	}
	num := func(f func(k kindDef) int) string {
		return arr(func(k kindDef) string { return fmt.Sprint(f(k)) })
	}
	// hex() of a UInt64 gives 1-16 digits (no leading zero bytes); 12 per
	// hash is a safe lower bound for sizing the array.
	hashes := msgBytes/12 + 4
	expr := map[string]string{
		"dead":                 "dead",
		"event_id":             "if(cityHash64(n, 2) % 20 = 0, '', lower(concat(hex(cityHash64(n, 3)), hex(cityHash64(n, 4)))))",
		"observed_at":          "toDateTime(ts)",
		"observed_at_ms":       "ts * 1000 + n % 1000",
		"ingested_at":          "now()",
		"kafka_topic":          "'errtrail.replies'",
		"kafka_partition":      "toInt32(n % 4)",
		"kafka_offset":         "toInt64(intDiv(n, 4))",
		"source_kind":          "sk",
		"source_id":            "concat(sk, '-', toString(cityHash64(n, 6) % 8))",
		"agent":                "concat('agent-', toString(agent_n))",
		"endpoint":             "concat('https://agent-', toString(agent_n), '.example.com/a2a')",
		"caller":               "concat('caller-', toString(caller_n))",
		"method":               "['message/send', 'message/stream', 'tasks/get', 'SendMessage'][1 + cityHash64(n, 13) % 4]",
		"attempt":              "toUInt16(1 + (cityHash64(n, 14) % 10 = 0))",
		"http_request_id":      "if(cityHash64(n, 15) % 10 < 5, concat('h-', lower(hex(cityHash64(n, 16)))), '')",
		"jsonrpc_id":           "if(binding = 'jsonrpc', toString(n % 10000), '')",
		"message_id":           "if(cityHash64(n, 17) % 10 < 4, concat('msg-', lower(hex(cityHash64(n, 18)))), '')",
		"task_id":              "if(cityHash64(n, 19) % 10 = 0, concat('task-', lower(hex(cityHash64(n, 20)))), '')",
		"idempotency_key_hash": "if(cityHash64(n, 21) % 5 = 0, cityHash64(n, 22), 0)",
		"protocol":             "if(bi < 8, 'a2a', 'mcp')",
		"binding":              "binding",
		"envelope":             "multiIf(binding = 'jsonrpc', 'jsonrpc_error', binding = 'grpc', 'grpc_status', 'problem_json')",
		"http_status":          "toUInt16(" + num(func(k kindDef) int { return k.http }) + "[ki])",
		"grpc_status":          "if(binding = 'grpc', " + str(func(k kindDef) string { return k.grpc }) + "[ki], '')",
		"jsonrpc_code":         "toInt32(if(binding = 'jsonrpc', -32603, 0))",
		"code":                 "if(typed = 1, " + str(func(k kindDef) string { return k.code }) + "[ki], '')",
		"reason":               "if(typed = 1, " + str(func(k kindDef) string { return k.code }) + "[ki], '')",
		"domain":               "if(typed = 1, 'agents.example.com', '')",
		"kind":                 "kind",
		"typed":                "typed",
		"retryable":            "toInt8(" + num(func(k kindDef) int { return k.retryable }) + "[ki])",
		"retryable_source":     "if(typed = 1, 'reason', 'status')",
		"retry_after_ms":       "toInt64(if(kind = 'quota' AND cityHash64(n, 23) % 10 < 6, 1000 * (1 + cityHash64(n, 24) % 30), -1))",
		"retry_after_source":   "if(kind = 'quota' AND cityHash64(n, 23) % 10 < 6, 'retry_after_header', '')",
		"limit_name":           "if(kind = 'quota', ['per-caller', 'per-agent', 'tokens-per-minute'][1 + cityHash64(n, 25) % 3], '')",
		"scope":                "if(kind = 'quota', 'caller', '')",
		"error_id":             "if(cityHash64(n, 26) % 10 < 7, concat('err_', lower(hex(cityHash64(n, 27)))), '')",
		"request_id":           "if(cityHash64(n, 28) % 10 < 8, concat('req_', lower(hex(cityHash64(n, 29)))), '')",
		"message": fmt.Sprintf("substring(concat(%s[ki], ': ', arrayStringConcat(arrayMap(i -> hex(cityHash64(n, 1000 + i)), range(%d)))), 1, %d)",
			str(func(k kindDef) string { return k.prefix }), hashes, msgBytes),
		"violation_fields":       "if(kind = 'invalid_argument', ['params.message.parts'], emptyArrayString())",
		"violation_descriptions": "if(kind = 'invalid_argument', ['must not be empty'], emptyArrayString())",
		"findings":               "multiIf(fd < 15, [fl[1 + cityHash64(n, 31) % 6]], fd < 20, [fl[1 + cityHash64(n, 31) % 6], fl[1 + cityHash64(n, 32) % 6]], emptyArrayString())",
		"dl_reason":              "if(dead = 1, ['bad_json', 'too_large', 'no_reply', 'schema'][1 + cityHash64(n, 33) % 4], '')",
		"dl_error":               "if(dead = 1, concat('invalid character at offset ', toString(cityHash64(n, 34) % 4096)), '')",
		"raw":                    "if(dead = 1, arrayStringConcat(arrayMap(i -> hex(cityHash64(n, 2000 + i)), range(13))), '')",
		// Each agent on one of two versions, a few agents mid-deploy.
		"source_version": "concat('1.', toString(agent_n % 7), '.', toString(if(agent_n % 10 = 0, cityHash64(n, 35) % 2, 0)))",
	}
	// Columns computed once per row and used by several landing columns.
	inner := []string{
		fmt.Sprintf("number + %d AS n", off),
		fmt.Sprintf("toUInt64(%d + intDiv(n, %d) - cityHash64(n, 5) %% 5) AS ts", base, rate),
		"toUInt8(cityHash64(n, 1) % 100 = 0) AS dead",
		"cityHash64(n, 7) % 2000 AS caller_n",
		"(caller_n * 7 + cityHash64(n, 8) % 3) % 50 AS agent_n",
		fmt.Sprintf("1 + cityHash64(n, 9) %% %d AS ki", slots),
		"cityHash64(n, 10) % 10 AS bi",
		"multiIf(bi < 6, 'jsonrpc', bi < 8, 'grpc', 'http+json') AS binding",
		"if(cityHash64(n, 11) % 10 = 0, 'gateway', 'agent') AS sk",
		str(func(k kindDef) string { return k.kind }) + "[ki] AS kind",
		"toUInt8(kind != 'unknown' AND cityHash64(n, 12) % 10 < 6) AS typed",
		"cityHash64(n, 30) % 100 AS fd",
		"['missing_retry_after', 'untyped_5xx', 'no_error_id', 'status_mismatch', 'bad_envelope', 'non_standard_code'] AS fl",
	}
	var names, sel []string
	for _, c := range schema.LandingColumns {
		e, ok := expr[c.Name]
		if !ok {
			panic("fillQuery: no expression for landing column " + c.Name)
		}
		names = append(names, c.Name)
		sel = append(sel, e)
	}
	return fmt.Sprintf("INSERT INTO %s.%s (%s)\nSELECT\n    %s\nFROM (SELECT\n    %s\nFROM system.numbers LIMIT %d)",
		db, schema.TableLanding, strings.Join(names, ", "), strings.Join(sel, ",\n    "),
		strings.Join(inner, ",\n    "), rows)
}
