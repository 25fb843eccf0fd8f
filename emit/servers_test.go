package emit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/emit/internal/emittest"
	"github.com/errtrail/errtrail/internal/stackload"
)

// a2aAgent is a real a2a-go agent (JSON-RPC at /jsonrpc, HTTP+JSON at /)
// behind the seed-002 rate limiter.
func a2aAgent() http.Handler {
	h := a2asrv.NewHandler(emittest.AgentExec{}, a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	mux.Handle("/", a2asrv.NewRESTHandler(h))
	return rateLimiter(mux)
}

type searchIn struct {
	Make string `json:"make"`
}

// mcpServer is a real go-sdk MCP server over streamable HTTP.
func mcpServer() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "emit-test", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search_inventory", Description: "search"},
		func(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			if in.Make == "fail" {
				return nil, nil, errors.New("inventory backend timed out after 30s")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 vehicles"}}}, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

type call struct {
	name, method, path, body string
	hdr                      map[string]string
	wantEvent                bool
	wantCode                 string // parse.Record.Code, "" for any
}

const missingTask = "00000000-0000-4000-8000-00000000dead"

func jrpc(id, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, id, method, params)
}

func msg(id, text string) string {
	return fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}`, id, text)
}

var a2aCalls = []call{
	{"jsonrpc-task-not-found", "POST", "/jsonrpc", jrpc("r1", "GetTask", `{"id":"`+missingTask+`"}`), nil, true, "TASK_NOT_FOUND"},
	{"jsonrpc-invalid-params", "POST", "/jsonrpc", jrpc("r2", "SendMessage", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`), nil, true, ""},
	{"jsonrpc-unsupported-operation", "POST", "/jsonrpc", jrpc("r3", "GetExtendedAgentCard", `{}`), nil, true, "UNSUPPORTED_OPERATION"},
	{"jsonrpc-executor-failure", "POST", "/jsonrpc", jrpc("r4", "SendMessage", msg("m-4", "crash")), nil, true, ""},
	{"jsonrpc-rate-limited", "POST", "/jsonrpc", jrpc("req-41", "SendMessage", msg("m-5", "hi")), map[string]string{"X-Caller": "orchestrator-7", "Idempotency-Key": "lead-7781"}, true, "RATE_LIMIT_EXCEEDED"},
	{"jsonrpc-stream-failed", "POST", "/jsonrpc", jrpc("r6", "SendStreamingMessage", msg("m-6", "fail-task")), nil, true, "TASK_FAILED"},
	{"jsonrpc-success", "POST", "/jsonrpc", jrpc("r7", "SendMessage", msg("m-7", "hello")), nil, false, ""},
	{"rest-task-not-found", "GET", "/tasks/" + missingTask, "", nil, true, "TASK_NOT_FOUND"},
	{"rest-invalid-params", "POST", "/message:send", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`, nil, true, ""},
	{"rest-unsupported-operation", "GET", "/extendedAgentCard", "", nil, true, "UNSUPPORTED_OPERATION"},
	{"rest-executor-failure", "POST", "/message:send", msg("m-10", "crash"), nil, true, ""},
	{"rest-rate-limited", "POST", "/message:send", msg("m-11", "hi"), map[string]string{"X-Caller": "orchestrator-7"}, true, "RATE_LIMIT_EXCEEDED"},
	{"rest-stream-failed", "POST", "/message:stream", msg("m-12", "fail-task"), nil, true, "TASK_FAILED"},
	{"rest-success", "POST", "/message:send", msg("m-13", "hello"), nil, false, ""},
}

var mcpCalls = []call{
	{"mcp-protocol-error", "POST", "/", jrpc("p1", "tools/call", `{"name":"no_such_tool","arguments":{}}`), nil, true, ""},
	{"mcp-tool-error", "POST", "/", jrpc("p2", "tools/call", `{"name":"search_inventory","arguments":{"make":"fail"}}`), nil, true, "TOOL_ERROR"},
	{"mcp-success", "POST", "/", jrpc("p3", "tools/call", `{"name":"search_inventory","arguments":{"make":"vw"}}`), nil, false, ""},
}

// do sends one call with a unique X-Request-Id and returns the wire bytes.
func do(t *testing.T, c *wire, base string, cl call) []byte {
	t.Helper()
	var body io.Reader
	if cl.body != "" {
		body = strings.NewReader(cl.body)
	}
	req, _ := http.NewRequest(cl.method, base+cl.path, body)
	if cl.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Request-Id", cl.name)
	req.Header.Set("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl")
	for k, v := range cl.hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", cl.name, err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	return c.Last()
}

// TestRealServersThroughKafka wraps a real a2a-go agent (JSON-RPC and
// HTTP+JSON) and a real go-sdk MCP server with the middleware, provokes
// their errors, reads the events back from the stack's Kafka broker and
// checks each: valid under the schema, no credential, and decoded by parse
// (as ingest decodes) into the same record as the bytes the client received
// on the wire, and stored by ingest with it (the agent's version
// included). Successes publish nothing.
func TestRealServersThroughKafka(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	pub, err := newKafkaSink(brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Agent: "research-agent", Source: Source{ID: "agent-eu-1", Version: "3.1.0"}, Caller: CallerFromHeader("X-Caller")}
	a2aSrv := httptest.NewServer(Handler(a2aAgent(), pub, cfg))
	defer a2aSrv.Close()
	cfg.Agent = "inventory-mcp"
	mcpSrv := httptest.NewServer(Handler(mcpServer(), pub, cfg))
	defer mcpSrv.Close()

	c := newWire()
	wires := map[string][]byte{}
	want := map[string]call{}
	for _, cl := range a2aCalls {
		wires[cl.name] = do(t, c, a2aSrv.URL, cl)
		want[cl.name] = cl
	}
	for _, cl := range mcpCalls {
		wires[cl.name] = do(t, c, mcpSrv.URL, cl)
		want[cl.name] = cl
	}
	n := 0
	for _, cl := range want {
		if cl.wantEvent {
			n++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	evs := readEvents(t, brokers, topic, n)
	seen := map[string]bool{}
	var stored []stackload.StoredCase
	for _, ev := range evs {
		validEvent(t, ev)
		if strings.Contains(string(ev), "eyJhbGciOiJIUzI1NiJ9") {
			t.Errorf("token in event %s", ev)
		}
		ctx := parseEventContext(t, ev)
		name := ctx.Request.HTTPRequestID
		cl, ok := want[name]
		if !ok || !cl.wantEvent || seen[name] {
			t.Errorf("unexpected event %s", ev)
			continue
		}
		seen[name] = true
		rec := sameRecord(t, name, ev, wires[name], "")
		stored = append(stored, stackload.StoredCase{Name: name, EventID: ctx.EventID, Wire: rec})
		if cl.wantCode != "" && rec.Code != cl.wantCode && rec.Reason != cl.wantCode {
			t.Errorf("%s: code %q reason %q; want %s", name, rec.Code, rec.Reason, cl.wantCode)
		}
		if rec.Method == "" || rec.Agent == "" || rec.SourceKind != KindAgent || rec.SourceVersion != "3.1.0" {
			t.Errorf("%s: context method %q agent %q source %q version %q", name, rec.Method, rec.Agent, rec.SourceKind, rec.SourceVersion)
		}
		b, _ := json.Marshal(map[string]any{"case": name, "kind": rec.Kind, "code": rec.Code, "reason": rec.Reason, "method": rec.Method, "protocol": rec.Protocol, "envelope": rec.Envelope})
		t.Logf("%s", b)
	}
	if len(seen) != n {
		t.Errorf("%d of %d events", len(seen), n)
	}
	stackload.CheckStored(t, topic, len(evs), stored)
}
