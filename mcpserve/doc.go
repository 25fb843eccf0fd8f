// Package mcpserve serves errtrail's read side to agents and assistants
// over the Model Context Protocol: what `errtrail mcp` runs, over stdio or
// Streamable HTTP, with the MCP Go SDK (protocol revisions 2026-07-28 and
// 2025-11-25; SupportedVersions).
//
// New builds an *mcp.Server with four tools, each answering with
// structuredContent (the JSON the HTTP API gives for the same question) and
// a text block (the words `errtrail lookup`, `report`, `check` and
// `incidents` print):
//
//   - lookup: id (error_id, request id, event_id, message_id, task_id, or a
//     JSON-RPC id with agent), optional agent and event_id → the story of
//     the stored reply (lookup.Story);
//   - check: reply (a raw HTTP/1.1 response, a gRPC reply text form or
//     event JSON, as text) → what it was read as and the rules it breaks
//     (conformance.Result); no store is asked;
//   - report: optional agent and window (from, to, or since) → the
//     conformance report (report.Report);
//   - incidents: optional agent, kind, open_only, window and limit → the
//     alerter's recorded episodes;
//   - groups (when Config.Groups is set): agent, optional new_only,
//     version and window → the agent's error groups (groups.Group).
//
// What the package promises:
//
//   - Read-only: every tool is annotated read-only and idempotent, and asks
//     only lookup.Service, report.Reporter, incidents.Reader and
//     groups.Reader, which never write.
//   - The same redaction as the API: stories, reports and incidents come
//     from rows ingest redacted; check decodes the reply with KeepRaw off
//     and answers only the decoder's typed fields and the rules table, never
//     the reply's text. No answer quotes an id the caller did not send.
//   - Bounded input: an id or agent of at most lookup.MaxIDLen bytes,
//     printable UTF-8; a reply of at most Config.MaxReplyBytes; windows
//     within the API's bounds (report.MaxRange, MaxIncidentRange); a limit
//     within MaxIncidentLimit. Each question runs under Config.Timeout.
//   - Bad arguments are tool errors (isError: true, one text block saying
//     what to change), never JSON-RPC errors: a model reads the message and
//     retries. A store that cannot answer is a tool error too, saying to
//     retry later.
//
// The transports are the caller's: cmd/errtrail/mcp.go runs the server on
// mcp.StdioTransport, or serves mcp.NewStreamableHTTPHandler behind
// api.Server.Protect (the API's bearer tokens, rate limit and access log)
// with the services of api.Server.Services (the API's concurrency gates).
package mcpserve
