package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// SupportedVersions are the MCP protocol revisions the server speaks,
// newest first. A client that asks for an older one in the initialize
// handshake is answered with 2025-11-25 and is expected to leave.
var SupportedVersions = []string{"2026-07-28", "2025-11-25"}

// DefaultMaxReplyBytes is the largest reply check takes by default: an
// error reply is a status line, a few headers and a short body.
const DefaultMaxReplyBytes = 256 << 10

// Config is what New needs.
type Config struct {
	Lookup    lookup.Service   // required: the stories (api.Server.Services gives the gated one)
	Reports   report.Reporter  // required: the reports
	Incidents incidents.Reader // required: the alerter's episodes
	Groups    groups.Reader    // the error groups; nil: no groups tool

	Timeout       time.Duration    // deadline of one question to the store; 0: 30 s
	MaxReplyBytes int              // largest reply check takes; 0: DefaultMaxReplyBytes
	Now           func() time.Time // default time.Now
	Version       string           // the server's version in the handshake; "" : "dev"
	Logger        *slog.Logger     // the SDK's log; nil discards
}

// New returns the MCP server with errtrail's tools. The transport is the
// caller's (Server.Run with mcp.StdioTransport, or
// mcp.NewStreamableHTTPHandler).
func New(cfg Config) (*mcp.Server, error) {
	if cfg.Lookup == nil || cfg.Reports == nil || cfg.Incidents == nil {
		return nil, errors.New("mcpserve.New: Lookup, Reports and Incidents are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "errtrail", Title: "errtrail: error replies of agent protocols", Version: cfg.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       cfg.Logger,
			// No logging capability: nothing is sent but answers.
			Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			SupportedProtocolVersions: SupportedVersions,
		})
	t := &tools{cfg: cfg}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Title: "The story of one error reply", Annotations: readOnly,
		Description: "What errtrail knows of one stored error reply, by any id a customer or agent team holds " +
			"(error_id, request id, event_id, message_id, task_id, or a JSON-RPC id together with agent): what it means " +
			"(quota or overload, whose limit, may the caller retry and when), the record, the attempts of the same request, " +
			"the caller's context and the alerter's verdicts at that moment, and the protocol rules it breaks."}, t.lookup)
	mcp.AddTool(s, &mcp.Tool{Name: "check", Title: "The rules one reply breaks", Annotations: readOnly,
		Description: fmt.Sprintf("Checks one error reply of A2A, MCP, AAP or AgentRelay against the rules of its protocol, "+
			"without storing it: pass the raw HTTP/1.1 response (status line, headers, blank line, body), a gRPC reply text form "+
			"or errtrail event JSON, at most %d bytes. Answers what it was read as and each rule it breaks "+
			"(MUST: a violation, SHOULD: advice) with the sentence it checks and what to change.", cfg.MaxReplyBytes)}, t.check)
	mcp.AddTool(s, &mcp.Tool{Name: "report", Title: "An agent's conformance report", Annotations: readOnly,
		Description: "Which protocol rules an agent's stored error replies broke over a window (default the last 24 hours, at most " +
			fmt.Sprintf("%d days", int(report.MaxRange/(24*time.Hour))) + "), how often, with examples; every agent's when agent is omitted."}, t.report)
	mcp.AddTool(s, &mcp.Tool{Name: "incidents", Title: "The alerter's recorded episodes", Annotations: readOnly,
		Description: "The episodes the alerter recorded (overload, runaway caller, limit too low, retry storm, gateway mangling, " +
			"untyped errors, undecided) under way in a window (default the last 7 days), the latest first, with their peak figures. " +
			"Quota alone is never an incident."}, t.incidents)
	if cfg.Groups != nil {
		mcp.AddTool(s, &mcp.Tool{Name: "groups", Title: "An agent's error groups", Annotations: readOnly,
			Description: "The agent's error groups (one kind of failure: protocol, code or reason, kind, method) seen in a window " +
				"(default the last 7 days): errors, distinct callers, first and last seen, the agent versions, one example id for lookup, " +
				"and whether the group is new (first seen in the last hour) or a regression (back after 24 h of silence, or in a newer version)."}, t.groups)
	}
	return s, nil
}

const instructions = `errtrail stores the error replies that agents (A2A, MCP, AAP, AgentRelay) sent, decoded and redacted. ` +
	`Use lookup with an id from an error reply or a ticket to learn what the error means and what to do; check to see which ` +
	`protocol rules a reply breaks before shipping it; report for an agent's recurring rule breaks; incidents for overloads ` +
	`and runaway callers; groups for what is new or back in an agent's errors (after a deploy). Everything is read-only.`

func ptr[T any](v T) *T { return &v }

// tools holds the handlers.
type tools struct{ cfg Config }

// ask runs f under the configured deadline.
func (t *tools) ask(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	return f(ctx)
}
