// Package otlpin decodes OpenTelemetry data as the Collector's Kafka
// exporter writes it (ExportTraceServiceRequest or ExportLogsServiceRequest,
// encoded otlp_proto or otlp_json) into parse.Records: one record for each
// span or log record that describes a failed agent-protocol reply.
//
// Which attribute fills which record field is declared once, in Fields
// (fields.go, pinned to semantic conventions SemconvVersion and the GenAI
// conventions SemconvGenAIVersion); docs/otel.md's table is generated from
// it and a test holds the two equal.
//
// A span or log record is a protocol reply when it carries an MCP, A2A,
// JSON-RPC or gRPC attribute (or errtrail.reply.body); it failed when its
// status is ERROR, error.type is set, an HTTP status is 4xx/5xx, a gRPC or
// JSON-RPC code says so, its A2A task failed, or (a log record) its severity
// is ERROR or above. Anything else is counted (Counts.OK, Counts.Other) and
// never becomes a record.
//
// Where a producer attached the reply itself (errtrail.reply.body, with
// errtrail.reply.headers), the body is decoded by parse exactly as a raw
// reply and wins over every attribute; only the context fields (agent,
// caller, ids) come from attributes. Otherwise the record is inferred from
// the codes the attributes give, classified by parse exactly as a reply
// with those codes would be; its envelope is none and it has no findings
// (conformance needs the wire bytes). Every record has Origin otlp and
// lists in Inferred the fields read from attributes.
//
// Redaction: every attribute value that reaches a record passes parse's
// sanitizer (identifiers by grammar, keyed hash otherwise) or, for message
// texts, the redactor's text detectors; no other attribute is kept.
//
// A message that does not parse as its encoding is an error
// (*parse.DecodeError, reason bad_otlp): ingest dead-letters it whole. A
// span whose attached body does not decode yields a dead-letter record of
// its own, at its index.
//
// A Decoder is not safe for concurrent use; records and their strings are
// borrowed until the next call, like parse's.
package otlpin
