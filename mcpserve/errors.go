package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/errtrail/errtrail/api"
	"github.com/errtrail/errtrail/internal/textout"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/report"
)

// toolError is a tool's refusal: isError with one text block that says
// what to change. A model reads it; the protocol sees a result.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// retryAfterer is the api's gate refusal (429 or 503 over HTTP).
type retryAfterer interface{ RetryAfter() time.Duration }

// failed turns a store's answer into a tool error. asked is the value the
// caller sent (an id, an agent): a reason that contains it is dropped, as
// the API drops it, so that no answer repeats it whatever the store says.
func failed(err error, asked string) *mcp.CallToolResult {
	var (
		amb  *lookup.AmbiguousError
		bad  *lookup.BadIDError
		unav *lookup.UnavailableError
		conf *lookup.ConfigError
		bq   *lookup.BadQueryError
		rng  *report.BadRangeError
		busy retryAfterer
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return toolError("the store did not answer in time: retry later, or narrow the question (a shorter window, an agent)")
	case errors.As(err, &busy):
		when := "a second"
		if n := int(busy.RetryAfter().Seconds() + 0.5); n > 1 {
			when = fmt.Sprintf("%d seconds", n)
		}
		return toolError("errtrail is answering as many questions as it takes at once: retry in " + when)
	case errors.Is(err, lookup.ErrNotFound):
		return toolError("no stored error reply carries this id: check it is copied whole (an error_id, request id, event_id, message_id or task_id); a JSON-RPC id needs agent; a reply seen only in the last seconds may not be stored yet")
	case errors.Is(err, report.ErrUnknownAgent):
		return toolError("errtrail has stored no error reply of this agent: check the agent's name (the stored agent names are in the report without agent)")
	case errors.As(err, &amb):
		var b strings.Builder
		b.WriteString("several stored error replies carry this id: call lookup again with the same id and event_id set to one of the event_ids below.\n\n")
		_ = (textout.Printer{W: &b}).Matches(amb.Matches, max(amb.Total, len(amb.Matches)), amb.Replies)
		return toolError(b.String())
	case errors.As(err, &bad):
		msg := "the id cannot be an id errtrail stores"
		if reason := bad.Reason; reason != "" && (asked == "" || !strings.Contains(reason, asked)) && api.TextValue(reason, 1024) {
			msg += ": " + reason
		}
		return toolError(msg)
	case errors.As(err, &rng):
		return toolError("the window is not one errtrail can read: from before to, at most " + fmt.Sprintf("%d days", int(report.MaxRange/(24*time.Hour))))
	case errors.As(err, &bq):
		return toolError("the question cannot be asked as given: check " + bq.Param)
	case errors.As(err, &conf):
		return toolError("errtrail's ClickHouse refuses its configuration (database, tables, user or password): tell the operator of this errtrail; a retry cannot help")
	case errors.As(err, &unav):
		return toolError("errtrail's ClickHouse cannot be asked now: retry later")
	}
	return toolError("errtrail could not answer: retry later")
}

// unreadable says why check could not read a reply: the decoder's reason
// and where, never the reply's bytes.
func unreadable(err error) string {
	var de *parse.DecodeError
	if errors.As(err, &de) && api.TextValue(de.Path, 64) && api.TextValue(string(de.Reason), 64) {
		return fmt.Sprintf("the reply cannot be read (%s at %s): pass one reply as the raw HTTP/1.1 response (status line, headers, blank line, body), a gRPC reply text form, or errtrail event JSON",
			de.Reason, de.Path)
	}
	return "the reply cannot be read: pass one reply as the raw HTTP/1.1 response, a gRPC reply text form, or errtrail event JSON"
}
