package main

// Captures from github.com/modelcontextprotocol/go-sdk over streamable HTTP.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type searchIn struct {
	Make       string `json:"make" jsonschema:"vehicle make"`
	MaxResults int    `json:"max_results,omitempty"`
}
type searchOut struct {
	Count int `json:"count"`
}

var aapToolError = map[string]any{
	"type": "aap.error", "error_id": "error_example_001", "code": "UNSUPPORTED_FILTER",
	"message": "This deployment does not support features_all.", "retryable": false,
	"details": map[string]any{
		"errors": []any{map[string]any{"instanceLocation": "/filters/features_all", "keyword": "capability", "error": "Filter is not advertised."}},
		"hint":   "Read the published search capabilities before forming another query.",
	},
	"created_at": "2026-10-24T15:00:00Z",
}

func newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "errtrail-capture", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search_inventory", Description: "search vehicles"},
		func(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			if in.Make == "fail" {
				return nil, searchOut{}, errors.New("inventory backend timed out after 30s")
			}
			return nil, searchOut{Count: 3}, nil
		})
	s.AddTool(&mcp.Tool{Name: "aap_search", Description: "AAP skill failing with aap.error",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, _ := json.Marshal(aapToolError)
			return &mcp.CallToolResult{IsError: true, StructuredContent: aapToolError,
				Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "rpc_error", Description: "returns a *jsonrpc.Error",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32000, Message: "upstream dealer system unavailable",
				Data: json.RawMessage(`{"retry_after_ms":5000}`)}
		})
	s.AddTool(&mcp.Tool{Name: "plain_error", Description: "raw handler returning a Go error",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("dealer directory unreachable")
		})
	s.AddResource(&mcp.Resource{URI: "inventory://vehicles/known", Name: "known", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			if req.Params.URI != "inventory://vehicles/known" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "[]"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "inventory://vehicles/{vin}", Name: "vehicle"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		})
	return s
}

func serveMCP(opts *mcp.StreamableHTTPOptions) string {
	s := newMCPServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	l := listen()
	go http.Serve(l, h)
	return l.Addr().String()
}

const mcpVersion = "2025-11-25"

func mcpHeaders(session, version string) [][2]string {
	h := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}}
	if session != "" {
		h = append(h, [2]string{"Mcp-Session-Id", session})
	}
	if version != "" {
		h = append(h, [2]string{"MCP-Protocol-Version", version})
	}
	return h
}

// mcpSession performs initialize + notifications/initialized and returns the session id.
func mcpSession(addr string) string {
	init := jrpc(0, "initialize", `{"protocolVersion":"`+mcpVersion+`","capabilities":{},"clientInfo":{"name":"errtrail-capture","version":"1"}}`)
	resp, err := rawHTTP(addr, httpRequest("POST", addr, "/", mcpHeaders("", ""), init), 10e9)
	must(err)
	sid := ""
	for _, line := range strings.Split(string(resp), "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && strings.EqualFold(k, "Mcp-Session-Id") {
			sid = v
		}
	}
	if sid == "" {
		panic("no session id: " + string(resp))
	}
	_, err = rawHTTP(addr, httpRequest("POST", addr, "/", mcpHeaders(sid, mcpVersion),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)), 10e9)
	must(err)
	return sid
}

func mcpCall(name, args string) string {
	return fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args)
}

func mcpCases(c *corpus, prefix, addr string) {
	sid := mcpSession(addr)
	H := mcpHeaders(sid, mcpVersion)
	P := func(name, provoked, expect string, headers [][2]string, body []byte) {
		c.http(caseInfo{prefix + name, "mcp-http", provoked, expect}, addr, "POST", "/", headers, body)
	}
	P("unknown-tool", "tools/call for a tool that does not exist", "protocol error -32602", H, jrpc(2, "tools/call", mcpCall("no_such_tool", `{}`)))
	P("tool-error", "typed tool handler returns a Go error", "tool result isError:true", H, jrpc(3, "tools/call", mcpCall("search_inventory", `{"make":"fail"}`)))
	P("tool-invalid-arguments", "arguments fail the tool input schema (max_results a string)", "tool result isError:true (validating arguments)", H,
		jrpc(4, "tools/call", mcpCall("search_inventory", `{"make":"audi","max_results":"ten"}`)))
	P("tool-aap-error", "tool returns isError:true with structuredContent = AAP aap.error (seed 000)", "tool result isError:true + aap.error UNSUPPORTED_FILTER", H,
		jrpc(5, "tools/call", mcpCall("aap_search", `{}`)))
	P("tool-jsonrpc-error", "tool handler returns a *jsonrpc.Error{-32000}", "protocol error -32000", H, jrpc(6, "tools/call", mcpCall("rpc_error", `{}`)))
	P("tool-plain-error-raw-handler", "raw (untyped) tool handler returns a Go error", "see capture (error or isError)", H, jrpc(7, "tools/call", mcpCall("plain_error", `{}`)))
	P("resource-not-found", "resources/read of an unknown URI (no matching resource or template)", "resource not found (-32602 by default, -32002 with MCPGODEBUG=customresnotfounderrcode=1)", H,
		jrpc(8, "resources/read", `{"uri":"inventory://dealers/unknown"}`))
	P("resource-not-found-handler", "resources/read matched by a template whose handler returns mcp.ResourceNotFoundError", "resource not found (-32602 / -32002)", H,
		jrpc(9, "resources/read", `{"uri":"inventory://vehicles/WVWZZZ1JZXW000001"}`))
	P("unknown-method", "method tasks/get (not an MCP method)", "MethodNotFound -32601", H, jrpc(10, "tasks/get", `{"id":"x"}`))
	P("invalid-params", "tools/call with params.name a number", "InvalidParams -32602", H, jrpc(11, "tools/call", `{"name":42}`))
	P("parse-error", "body not JSON", "parse error -32700 / HTTP 400", H, []byte(`{"jsonrpc":"2.0","id":12,"method":`))
	P("missing-session", "tools/call without Mcp-Session-Id on a stateful server", "HTTP 400", mcpHeaders("", mcpVersion), jrpc(13, "tools/call", mcpCall("search_inventory", `{"make":"audi"}`)))
	P("unknown-session", "tools/call with an unknown Mcp-Session-Id", "HTTP 404", mcpHeaders("NOSUCHSESSION", mcpVersion), jrpc(14, "tools/call", mcpCall("search_inventory", `{"make":"audi"}`)))
	P("bad-protocol-version", "MCP-Protocol-Version: 1999-01-01 header", "HTTP 400 / UnsupportedProtocolVersion", mcpHeaders(sid, "1999-01-01"), jrpc(15, "tools/list", `{}`))
	P("per-request-version-on-stateful", "MCP-Protocol-Version: 2026-07-28 (SEP-2575 per-request metadata) sent to a stateful server", "UnsupportedProtocolVersion -32022 / HTTP 400", mcpHeaders(sid, "2026-07-28"), jrpc(16, "tools/list", `{}`))
	P("no-accept", "POST without Accept: text/event-stream", "HTTP 400/406", [][2]string{{"Content-Type", "application/json"}, {"Mcp-Session-Id", sid}, {"MCP-Protocol-Version", mcpVersion}}, jrpc(17, "tools/list", `{}`))
	P("wrong-content-type", "Content-Type: text/plain", "HTTP 415/400", [][2]string{{"Content-Type", "text/plain"}, {"Accept", "application/json, text/event-stream"}, {"Mcp-Session-Id", sid}}, jrpc(18, "tools/list", `{}`))
}

func captureMCPGo(root string) {
	dir := "mcp-go"
	if v := os.Getenv("MCPGODEBUG"); v != "" {
		dir = "mcp-go-mcpgodebug"
	}
	c := newCorpus(root, dir, "github.com/modelcontextprotocol/go-sdk", modVersion("github.com/modelcontextprotocol/go-sdk")+envNote())
	defer c.finish()
	if dir != "mcp-go" {
		// Only the cases the compatibility setting changes.
		addr := serveMCP(&mcp.StreamableHTTPOptions{JSONResponse: true})
		sid := mcpSession(addr)
		H := mcpHeaders(sid, mcpVersion)
		c.http(caseInfo{"json-resource-not-found", "mcp-http", "resources/read of an unknown URI, MCPGODEBUG=customresnotfounderrcode=1", "resource not found -32002"}, addr, "POST", "/", H,
			jrpc(8, "resources/read", `{"uri":"inventory://dealers/unknown"}`))
		c.http(caseInfo{"json-resource-not-found-handler", "mcp-http", "template handler returns mcp.ResourceNotFoundError, MCPGODEBUG=customresnotfounderrcode=1", "resource not found -32002"}, addr, "POST", "/", H,
			jrpc(9, "resources/read", `{"uri":"inventory://vehicles/WVWZZZ1JZXW000001"}`))
		return
	}
	mcpCases(c, "sse-", serveMCP(nil))
	mcpCases(c, "json-", serveMCP(&mcp.StreamableHTTPOptions{JSONResponse: true}))
	// Stateless server speaking the 2026-07-28 revision (no initialize, no session).
	addr := serveMCP(&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	S := func(name, provoked, expect, version string, body []byte, extra ...[2]string) {
		c.http(caseInfo{"stateless-" + name, "mcp-http", provoked, expect}, addr, "POST", "/", append(mcpHeaders("", version), extra...), body)
	}
	mh := func(method, name string) [][2]string {
		h := [][2]string{{"Mcp-Method", method}}
		if name != "" {
			h = append(h, [2]string{"Mcp-Name", name})
		}
		return h
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"errtrail-capture","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	S("unknown-tool", "stateless server, 2026-07-28 per-request _meta, unknown tool", "protocol error -32602", "2026-07-28", jrpc(2, "tools/call", `{"name":"no_such_tool","arguments":{},`+meta+`}`), mh("tools/call", "no_such_tool")...)
	S("resource-not-found", "stateless server, 2026-07-28 per-request _meta, unknown resource", "resource not found -32602", "2026-07-28", jrpc(3, "resources/read", `{"uri":"inventory://dealers/unknown",`+meta+`}`), mh("resources/read", "inventory://dealers/unknown")...)
	S("tool-aap-error", "stateless server, 2026-07-28 per-request _meta, tool returns aap.error", "tool result isError:true", "2026-07-28", jrpc(4, "tools/call", `{"name":"aap_search","arguments":{},`+meta+`}`), mh("tools/call", "aap_search")...)
	S("unknown-method", "stateless server, 2026-07-28 per-request _meta, unknown method", "MethodNotFound -32601", "2026-07-28", jrpc(5, "tasks/get", `{"id":"x",`+meta+`}`), mh("tasks/get", "")...)
	S("missing-meta", "stateless server, MCP-Protocol-Version 2026-07-28 header but no _meta in params", "-32602 missing _meta", "2026-07-28", jrpc(6, "tools/call", mcpCall("no_such_tool", `{}`)))
	S("missing-mcp-method-header", "stateless server, 2026-07-28 _meta but no Mcp-Method header", "HeaderMismatch -32020 / HTTP 400", "2026-07-28", jrpc(9, "tools/call", `{"name":"aap_search","arguments":{},`+meta+`}`))
	S("bad-protocol-version", "stateless server, MCP-Protocol-Version 1999-01-01", "UnsupportedProtocolVersion -32022 / HTTP 400", "1999-01-01", jrpc(7, "tools/list", `{}`))
	S("meta-bad-protocol-version", "stateless server, _meta protocolVersion 2099-01-01 with header 2026-07-28", "UnsupportedProtocolVersion -32022 / HTTP 400", "2026-07-28",
		jrpc(8, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`))
}

func envNote() string {
	if v := os.Getenv("MCPGODEBUG"); v != "" {
		return " (MCPGODEBUG=" + v + ")"
	}
	return ""
}
