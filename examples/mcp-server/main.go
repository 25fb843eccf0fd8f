// Command mcp-server is a small MCP server built with the official go-sdk,
// served over streamable HTTP, whose error replies are published to
// errtrail by emit.Handler: a JSON-RPC error (an unknown tool, bad
// arguments) and a tool result with "isError": true (the tool failed). See
// README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/kafkapub"
)

type searchIn struct {
	Make string `json:"make" jsonschema:"the car make to look for, e.g. vw; 'fail' makes the backend time out"`
}

type searchOut struct {
	Vehicles int `json:"vehicles"`
}

// search is the one tool. An error it returns becomes a tool result with
// isError: true (the go-sdk's rule for tool handlers): the call itself
// succeeded at the protocol level, the tool did not.
func search(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
	if in.Make == "fail" {
		return nil, searchOut{}, errors.New("inventory backend timed out after 30s")
	}
	n := len(in.Make) % 4
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d vehicles of make %q", n, in.Make)}}},
		searchOut{Vehicles: n}, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func main() {
	listen := flag.String("listen", "127.0.0.1:18090", "streamable HTTP address (the MCP endpoint is /mcp)")
	agent := flag.String("agent", "inventory-mcp", "the server's name in the events")
	brokers := flag.String("kafka.brokers", envOr("ERRTRAIL_KAFKA_BROKERS", "127.0.0.1:19092"), "Kafka brokers (default $ERRTRAIL_KAFKA_BROKERS)")
	topic := flag.String("kafka.topic", envOr("ERRTRAIL_KAFKA_TOPIC", kafkapub.DefaultTopic), "topic (default $ERRTRAIL_KAFKA_TOPIC)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := mcp.NewServer(&mcp.Implementation{Name: *agent, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search_inventory", Description: "count the vehicles of a make in stock"}, search)
	// Stateless with JSON replies, so that one curl is one call; emit
	// inspects event-stream replies just as well.
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})

	pub, err := kafkapub.New(kafkapub.Config{Brokers: strings.Split(*brokers, ","), Topic: *topic, Logger: log})
	if err != nil {
		log.Error("publisher", "err", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", emit.Handler(mcpHandler, pub, emit.Config{Agent: *agent, Caller: emit.CallerFromHeader("X-Caller")}))

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	fmt.Printf(`MCP server %[1]q on http://%[2]s/mcp (streamable HTTP, stateless); error replies go to %[3]s on %[4]s.

A tool error (a 200 whose result has "isError": true), then a protocol error (unknown tool):
  curl -si http://%[2]s/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'X-Caller: planner-2' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_inventory","arguments":{"make":"fail"}}}'
  curl -si http://%[2]s/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'X-Caller: planner-2' \
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}'
A success publishes nothing: "arguments":{"make":"vw"}. Ctrl-C stops it (queued events are flushed first).
`, *agent, *listen, *topic, *brokers)

	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if err := pub.Close(sctx); err != nil {
		log.Warn("queued events dropped", "err", err)
	}
}
