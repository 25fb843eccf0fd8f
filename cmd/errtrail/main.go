// Command errtrail is the command support staff and agent teams use: it
// reads errtrail's ClickHouse tables (a read-only user suffices) and answers
// in words.
//
//	errtrail lookup ID [flags]      the story of one error reply
//	errtrail report [AGENT] [flags] an agent's conformance report (every agent without one)
//	errtrail serve [flags]          the same as an HTTP API (/v1/) and web pages (/)
//	errtrail check [--json] FILE... the rules captured replies break (no server needed)
//	errtrail mcp [flags]            the same tools over MCP (stdio, or Streamable HTTP)
//
// It is a binary of its own, not a subcommand of ingest, because the people
// who run it are not the ones who run the pipeline: it needs no Kafka, no
// write access and no pipeline flags. Flags read ERRTRAIL_LOOKUP_<FLAG>,
// then, for --clickhouse.*, --log.* and --redact.* (which ingest has too),
// ERRTRAIL_<FLAG>. conn.go reads the shared flags; one file per subcommand.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/errtrail/errtrail/internal/cmdkit"
)

func main() { cmdkit.Main(run) }

// Exit statuses.
const (
	exitOK          = 0
	exitNotFound    = 1 // no stored reply carries the id
	exitUsage       = 2 // bad flags, bad id, bad range
	exitAmbiguous   = 3 // several replies carry the id; the matches are printed
	exitUnavailable = 4 // ClickHouse could not be asked: retry later
	exitFailed      = 5 // anything else (a serve that failed)
	exitConfig      = 6 // ClickHouse answered that the configuration is wrong (no such database, table, user; bad password; no grant): retrying cannot help
)

const usage = `usage: errtrail <command> [flags]

  lookup ID        the story of one error reply: error_id, request_id, event_id,
                   message_id, task_id, or a JSON-RPC id with --agent
  report [AGENT]   which rules an agent's error replies break (every agent without AGENT)
  serve            the HTTP API (/v1/...) and the web pages (/)
  check FILE...    the rules captured error replies break, offline (- is stdin);
                   exit 0 none broken but advice, 1 a MUST broken, 2 unreadable input
  incidents        the alerter's recorded episodes (overload, runaway, ...) in a range
  mcp              lookup, check, report and incidents as an MCP server (stdio, or
                   Streamable HTTP with --mcp.listen)
  groups AGENT     the agent's error groups: new ones, regressions, versions (--new, --version V)

errtrail <command> --help lists the flags; flags may come before or after
the ID or AGENT. Exit status: 0 answered, 1 not found,
2 bad usage or id, 3 several matches, 4 ClickHouse unavailable (retry later),
5 failed, 6 ClickHouse refused the configuration (database, tables, user or
password: fix it, a retry cannot help).
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "lookup":
		return runLookup(ctx, args, stdout, stderr)
	case "report":
		return runReport(ctx, args, stdout, stderr)
	case "serve":
		return runServe(ctx, args, stderr)
	case "check":
		return runCheck(args, os.Stdin, stdout, stderr)
	case "incidents":
		return runIncidents(ctx, args, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args, io.NopCloser(os.Stdin), nopWriteCloser{stdout}, stderr)
	case "groups":
		return runGroups(ctx, args, stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "errtrail: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// nopWriteCloser lets the MCP transport close stdout without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
