package parse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allocCase is one reply of TestDecodeAllocs: one per envelope the decoder
// produces, and per carrier (raw HTTP, SSE stream, gRPC text form, event
// JSON). Inputs come from testdata; the few envelopes that no kept reply
// shows are written inline.
type allocCase struct {
	name string
	file string   // under testdata/
	in   []byte   // when no file has this envelope
	env  Envelope // what the reply decodes to; "" for a decode error

	// Allocations per decode in steady state: with the raw body not kept
	// (KeepRaw < 0) and with the default KeepRaw. Zero unless a comment
	// says why not.
	allocs, allocsKept float64
}

// keptBody is the cost of Options.KeepRaw today, on every reply with a
// body: redact.Raw allocates its scratch copy of the body on each call (and
// a second buffer when its text pass replaces something).
const keptBody = 1

var allocCases = []allocCase{
	{name: "jsonrpc_error/http", file: "seeds/seed002-jsonrpc-429.http", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/sse", file: "corpus/a2a-go-v0.3/jsonrpc-sse-internal-error.http", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/event-body-json", file: "cases/event-body-json.json", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/event-body-base64", file: "cases/event-body-base64.json", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/aap-struct", file: "seeds/seed000-a2a-rate-limited.http", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/relay-data-object", file: "seeds/seed004-relay-jsonrpc-recipient-not-found.http", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "jsonrpc_error/mcp", file: "corpus/mcp-typescript/json-resource-not-found.http", env: EnvJSONRPCError, allocsKept: keptBody},
	{name: "rpc_status/http", file: "seeds/seed002-rest-429.http", env: EnvRPCStatus, allocsKept: keptBody},
	{name: "rpc_status/sse", file: "corpus/a2a-go-v2/rest-sse-internal-error.http", env: EnvRPCStatus, allocsKept: keptBody},
	{name: "problem_json", env: EnvProblem, allocsKept: keptBody,
		in: httpResp(400, map[string]string{"Content-Type": "application/problem+json"},
			`{"type":"https://a2a-protocol.org/errors/version-not-supported","title":"Protocol Version Not Supported","status":400,"detail":"The requested A2A protocol version 2.0 is not supported","supportedVersions":["0.3"]}`)},
	{name: "legacy_flat/js", file: "corpus/a2a-js-0.3/rest-parse-error.http", env: EnvLegacyFlat, allocsKept: keptBody},
	// a2a-java's v0.3 body that is not valid JSON: the validator's
	// *DecodeError (errAt) is allocated, then dropped when the legacy reader
	// (reply.go, legacyJavaInvalid) succeeds.
	{name: "legacy_flat/java-invalid-json", env: EnvLegacyFlat, allocs: 1, allocsKept: 1 + keptBody,
		in: httpResp(422, jsonCT, `{"error":"io.a2a.spec.InvalidParamsError","message":"bad "quote" here"}`)},
	{name: "aap_error", file: "seeds/seed000-pap-unsupported-filter.http", env: EnvAAPError, allocsKept: keptBody},
	{name: "mcp_tool_result/http", file: "seeds/seed000-mcp-unsupported-filter.http", env: EnvMCPToolResult, allocsKept: keptBody},
	{name: "mcp_tool_result/sse", file: "corpus/mcp-go/sse-tool-error.http", env: EnvMCPToolResult, allocsKept: keptBody},
	// Issue 25's seed 000 paths: a PAP aap.error wrapped in "error", an MCP
	// result without isError whose JSON copy differs from structuredContent
	// (both copies walked and compared), a message with a stack trace.
	{name: "aap_error/wrapped", env: EnvAAPError, allocsKept: keptBody,
		in: httpResp(429, map[string]string{"Retry-After": "5"}, `{"error":`+pap429Body+`}`)},
	{name: "mcp_tool_result/not-is-error-mismatch", env: EnvMCPToolResult, allocsKept: keptBody,
		in: []byte(strings.Replace(strings.Replace(twinMCPHeader, `"isError":true,`, ``, 1), `\"retryable\":false`, `\"retryable\":true`, 1))},
	{name: "aap_error/stack-trace", env: EnvAAPError, allocsKept: keptBody,
		in: httpResp(422, jsonCT, strings.Replace(papBody, `Filter is not advertised.`, `at com.dealer.Filters.check(Filters.java:12)`, 1))},
	{name: "relay_flat", file: "seeds/seed004-relay-rest-rate-limited.http", env: EnvRelayFlat, allocsKept: keptBody},
	{name: "relay_frame", env: EnvRelayFrame, allocsKept: keptBody,
		in: httpResp(503, jsonCT, `{"v":1,"type":"BUSY","id":"m-1","ts":1764489600000,"payload":{"retry_after_ms":250,"queue_depth":9}}`)},
	{name: "grpc_status/details", file: "cases/grpc-resource-exhausted.grpc", env: EnvGRPCStatus},
	{name: "grpc_status/no-details", file: "cases/grpc-resource-exhausted-local.grpc", env: EnvGRPCStatus},
	{name: "grpc_status/aap-struct", file: "corpus/a2a-go-v2/grpc-aap-error.grpc", env: EnvGRPCStatus},
	{name: "grpc_status/event", file: "cases/event-grpc.json", env: EnvGRPCStatus},
	{name: "task_failed/http", file: "corpus/a2a-go-v2/jsonrpc-task-failed.http", env: EnvTaskFailed, allocsKept: keptBody},
	{name: "task_failed/sse", file: "corpus/a2a-go-v0.3/jsonrpc-sse-task-failed.http", env: EnvTaskFailed, allocsKept: keptBody},
	{name: "none", file: "seeds/seed002-bare-500.http", env: EnvNone, allocsKept: keptBody}, // a text/plain body
	{name: "json_string", env: EnvJSONString, allocsKept: keptBody,
		in: httpResp(404, jsonCT, `"Task not found"`)},
	{name: "unrecognized", env: EnvUnrecognized, allocsKept: keptBody,
		in: httpResp(503, jsonCT, `{"state":"draining"}`)},

	// Known allocations, kept at today's figure so that a change either way
	// shows.
	//
	// A decode error returns a new *DecodeError (errAt): one allocation per
	// dead letter.
	{name: "decode-error/not-an-error", file: "corpus/a2a-go-v2/grpc-stream-task-failed.grpc", allocs: 1, allocsKept: 1},
	// A message text holding a digit run that starts with 00 (here a UUID,
	// 00000000-0000-4000-…) is checked as an international phone number:
	// package redact's phone detector calls phonenumbers.Parse, which
	// allocates.
	// 22 of the kept replies (a2a-js "Task not found: <uuid>") pay this; with
	// the body kept, the body's own text pass meets the UUID a second time.
	{name: "phone-candidate-in-message/grpc", file: "corpus/a2a-js-1/grpc-task-not-found.grpc", env: EnvGRPCStatus, allocs: 56, allocsKept: 56},
	{name: "phone-candidate-in-message/jsonrpc", file: "corpus/a2a-js-1/jsonrpc-task-not-found.http", env: EnvJSONRPCError, allocs: 56, allocsKept: 2*56 + keptBody},
}

// TestDecodeAllocs checks the package doc's claim: once a Decoder and a
// Record are warm, decoding a reply allocates nothing. Each case decodes its
// reply once, then counts allocations over repeated decodes of the same
// reply into the same Record.
func TestDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under -race: the race detector allocates and makes sync.Pool drop items, so allocation counts mean nothing; run without -race")
	}
	envs := map[Envelope]bool{}
	for _, c := range allocCases {
		data, hs := c.in, []MsgHeader(nil)
		if c.file != "" {
			p := filepath.Join("testdata", c.file)
			var err error
			if data, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
			hs = contextOf(p)
		}
		envs[c.env] = true
		for _, kept := range []bool{false, true} {
			opt, want, label := Options{KeepRaw: -1}, c.allocs, "raw body not kept"
			if kept {
				opt, want, label = Options{}, c.allocsKept, "default KeepRaw"
			}
			t.Run(c.name+"/"+map[bool]string{false: "nokeep", true: "keep"}[kept], func(t *testing.T) {
				d := NewDecoder(opt)
				var rec Record
				err := d.DecodeMessage(data, hs, 1764489600000, &rec)
				switch {
				case c.env == "" && err == nil:
					t.Fatalf("decoded as %s, want a decode error", rec.Envelope)
				case c.env != "" && err != nil:
					t.Fatalf("decode: %v", err)
				case c.env != "" && rec.Envelope != c.env:
					t.Fatalf("envelope %s, want %s", rec.Envelope, c.env)
				}
				got := testing.AllocsPerRun(50, func() {
					d.DecodeMessage(data, hs, 1764489600000, &rec)
				})
				switch {
				case got > want:
					t.Errorf("%s: %v allocations per decode in steady state, want %v", label, got, want)
				case got < want:
					t.Errorf("%s: %v allocations per decode, fewer than the %v recorded here: lower the figure", label, got, want)
				}
			})
		}
	}
	for _, e := range []Envelope{EnvNone, EnvJSONRPCError, EnvRPCStatus, EnvProblem, EnvLegacyFlat, EnvAAPError,
		EnvMCPToolResult, EnvRelayFlat, EnvRelayFrame, EnvGRPCStatus, EnvTaskFailed, EnvJSONString, EnvUnrecognized} {
		if !envs[e] {
			t.Errorf("no allocation case decodes to envelope %s", e)
		}
	}
}
