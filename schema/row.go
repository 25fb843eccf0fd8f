package schema

//go:generate go run ./cmd/rowgen -root ..

// The error row: every column of landing, declared once in RowColumns.
// Everything else that lists the row's columns is derived from it:
//
//   - LandingColumns, LandingInsert and InsertInto (the ingester's INSERT
//     and its value order);
//   - errors' columns (errorsColumns) and the migrations that add columns to
//     landing and errors (render.go, groups.go, traces.go);
//   - ErrorRow and ErrorsSelect, what lookups read (errorrow_gen.go);
//   - the ingester's column buffers and its appendRow (ingest/columns_gen.go,
//     from each column's Ingest expression);
//   - internal/stackload's column-by-column comparison of a stored row.
//
// Presentation reads the row through lookup.Row and parse.Record's JSON;
// tests hold those, the story page, the text output and the observers'
// comparison to the JSON keys declared here (docs/schema.md, "Adding a
// column").

// From says what fills a column.
type From uint8

const (
	// FromRecord: the decoded record (parse.Record), the same whichever
	// way the reply reached errtrail.
	FromRecord From = iota + 1
	// FromMessage: the Kafka message or the ingester (provenance: where
	// and when the row was read), or a default ingest derives from them.
	FromMessage
	// FromDeadLetter: a dead-letter row only (the decode failure and the
	// kept bytes); empty in a decoded row.
	FromDeadLetter
)

// RowColumn declares one column of the error row.
type RowColumn struct {
	// Name is the column's name in landing and in every table that keeps it.
	Name string
	// Type is its ClickHouse type, the same in landing, errors,
	// error_traces and dead_letter (errors may store a String as
	// LowCardinality: LC).
	Type string
	// Added is the migration that adds it to landing (1: landing as
	// created). A migration's rendering never changes, so it names the
	// columns it adds by this number.
	Added int
	// Kept is the table a decoded (or dead-letter) row keeps it in past
	// landing: TableErrors, TableErrorTraces or TableDeadLetter; "" for
	// landing's own (dead, which routes rows to the views).
	Kept string
	// LC and Codec are how errors stores it (Kept == TableErrors).
	LC    bool
	Codec codec
	// From says what fills it.
	From From
	// Reply marks what the reply itself said, as opposed to who saw it and
	// where it was read: two observers of one reply agree on these
	// (lookup's observers compare them).
	Reply bool
	// JSON is its key in the record's JSON: `ingest decode`, the story's
	// record (lookup.Row), the API, the story page and the text output.
	// Two columns may share a key (observed_at and observed_at_ms;
	// violation_fields and violation_descriptions). "" when no record
	// shows it.
	JSON string
	// Decoded marks the keys `ingest decode` prints (parse.Record's JSON):
	// the Kafka and storage columns are not, nor source_id, jsonrpc_id and
	// the idempotency key hash, which it has never printed.
	Decoded bool
	// Ingest is the Go expression the ingester appends to the column's
	// buffer for each row (ingest/columns_gen.go, by go generate). In
	// scope: rec *parse.Record, m *rowMeta, derr *parse.DecodeError (nil
	// for a decoded row), raw []byte, a *arena and c *columns; helpers are
	// in ingest/columns.go.
	Ingest string
}

// RowColumns is the error row, in landing's column order. A column is
// added at the end, with the migration that adds it (Added); see
// docs/schema.md, "Adding a column".
//
// Conventions the materialized views rely on:
//   - dead is 1 for a dead-letter row, 0 for a decoded error;
//   - event_id may be empty: the views then use "kafka:<topic>/<partition>/<offset>";
//   - retryable is -1 unknown, 0 false, 1 true; retry_after_ms is -1 when no delay was given;
//   - observed_at is the UTC second of observed_at_ms; ingested_at is when the
//     ingester built the batch;
//   - origin is "event", "raw" or "otlp" (empty in rows of ingesters older than
//     migration 009); kafka_index is the record's place within its Kafka
//     message (0 unless the message, an OTLP export, held several).
var RowColumns = []RowColumn{
	{Name: "dead", Type: "UInt8", Added: 1, From: FromDeadLetter,
		Ingest: "flag(derr != nil)"},
	{Name: "event_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromMessage, JSON: "event_id", Decoded: true,
		Ingest: "c.eventIDOf(m, rec)"},
	{Name: "observed_at", Type: "DateTime", Added: 1, Kept: TableErrors, Codec: codecTime, From: FromMessage, JSON: "observed_at", Decoded: true,
		Ingest: "observedMS(m, rec) / 1000"},
	{Name: "observed_at_ms", Type: "UInt64", Added: 1, Kept: TableErrors, Codec: codecTime, From: FromMessage, JSON: "observed_at", Decoded: true,
		Ingest: "uint64(observedMS(m, rec))"},
	{Name: "ingested_at", Type: "DateTime", Added: 1, Kept: TableErrors, Codec: codecTime, From: FromMessage, JSON: "ingested_at",
		Ingest: "m.ingestedAt"},
	{Name: "kafka_topic", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromMessage, JSON: "kafka_topic",
		Ingest: "m.topic"},
	{Name: "kafka_partition", Type: "Int32", Added: 1, Kept: TableErrors, From: FromMessage, JSON: "kafka_partition",
		Ingest: "m.partition"},
	{Name: "kafka_offset", Type: "Int64", Added: 1, Kept: TableErrors, From: FromMessage, JSON: "kafka_offset",
		Ingest: "m.offset"},
	{Name: "source_kind", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, JSON: "source_kind", Decoded: true,
		Ingest: "a.str(rec.SourceKind)"},
	{Name: "source_id", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, JSON: "source_id",
		Ingest: "a.str(rec.SourceID)"},
	{Name: "agent", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, JSON: "agent", Decoded: true,
		Ingest: "a.str(rec.Agent)"},
	{Name: "endpoint", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, JSON: "endpoint", Decoded: true,
		Ingest: "a.str(rec.Endpoint)"},
	{Name: "caller", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, JSON: "caller", Decoded: true,
		Ingest: "a.str(rec.Caller)"},
	{Name: "method", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "method", Decoded: true,
		Ingest: "a.str(rec.Method)"},
	{Name: "attempt", Type: "UInt16", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "attempt", Decoded: true,
		Ingest: "clampU16(rec.Attempt)"},
	{Name: "http_request_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "http_request_id", Decoded: true,
		Ingest: "a.str(rec.HTTPRequestID)"},
	{Name: "jsonrpc_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "jsonrpc_id",
		Ingest: "a.str(rec.JSONRPCID)"},
	{Name: "message_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "message_id", Decoded: true,
		Ingest: "a.str(rec.MessageID)"},
	{Name: "task_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "task_id", Decoded: true,
		Ingest: "a.str(rec.TaskID)"},
	{Name: "idempotency_key_hash", Type: "UInt64", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "idempotency_key_hash",
		Ingest: "rec.IdempotencyHash"}, // keyed by the decoder; 0: none
	{Name: "protocol", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "protocol", Decoded: true,
		Ingest: "string(rec.Protocol)"}, // parse's constants: not copied
	{Name: "binding", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "binding", Decoded: true,
		Ingest: "string(rec.Binding)"},
	{Name: "envelope", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "envelope", Decoded: true,
		Ingest: "string(rec.Envelope)"},
	{Name: "http_status", Type: "UInt16", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "http_status", Decoded: true,
		Ingest: "clampU16(rec.HTTPStatus)"},
	{Name: "grpc_status", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "grpc_status", Decoded: true,
		Ingest: "rec.GRPCStatusName()"}, // a static table's string
	{Name: "jsonrpc_code", Type: "Int32", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "jsonrpc_code", Decoded: true,
		Ingest: "int32(rec.JSONRPCCode)"},
	{Name: "code", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "code", Decoded: true,
		Ingest: "a.str(rec.Code)"},
	{Name: "reason", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "reason", Decoded: true,
		Ingest: "a.str(rec.Reason)"},
	{Name: "domain", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "domain", Decoded: true,
		Ingest: "a.str(rec.Domain)"},
	{Name: "kind", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "kind", Decoded: true,
		Ingest: "string(rec.Kind)"},
	{Name: "typed", Type: "UInt8", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "typed", Decoded: true,
		Ingest: "flag(rec.Typed)"},
	{Name: "retryable", Type: "Int8", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "retryable", Decoded: true,
		Ingest: "tri(rec.Retryable)"},
	{Name: "retryable_source", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "retryable_source", Decoded: true,
		Ingest: "string(rec.RetryableSource)"},
	{Name: "retry_after_ms", Type: "Int64", Added: 1, Kept: TableErrors, From: FromRecord, Reply: true, JSON: "retry_after_ms", Decoded: true,
		Ingest: "max(rec.RetryAfterMS, -1)"},
	{Name: "retry_after_source", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "retry_after_source", Decoded: true,
		Ingest: "string(rec.RetryAfterSource)"},
	{Name: "limit_name", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "limit", Decoded: true,
		Ingest: "a.str(rec.Limit)"},
	{Name: "scope", Type: "String", Added: 1, Kept: TableErrors, LC: true, From: FromRecord, Reply: true, JSON: "scope", Decoded: true,
		Ingest: "a.str(rec.Scope)"},
	{Name: "error_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "error_id", Decoded: true,
		Ingest: "a.str(rec.ErrorID)"},
	{Name: "request_id", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "request_id", Decoded: true,
		Ingest: "a.str(rec.RequestID)"},
	{Name: "message", Type: "String", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "message", Decoded: true,
		Ingest: "a.text(rec.Message)"}, // capped at TextMax
	{Name: "violation_fields", Type: "Array(String)", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "field_violations", Decoded: true,
		Ingest: "c.violationFieldsOf(rec.FieldViolations)"},
	{Name: "violation_descriptions", Type: "Array(String)", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "field_violations", Decoded: true,
		Ingest: "c.violationDescriptionsOf(rec.FieldViolations)"},
	{Name: "findings", Type: "Array(String)", Added: 1, Kept: TableErrors, Codec: codecText, From: FromRecord, Reply: true, JSON: "findings", Decoded: true,
		Ingest: "c.findingsOf(rec.Findings)"},
	{Name: "dl_reason", Type: "String", Added: 1, Kept: TableDeadLetter, From: FromDeadLetter,
		Ingest: "dlReason(derr)"},
	{Name: "dl_error", Type: "String", Added: 1, Kept: TableDeadLetter, From: FromDeadLetter,
		Ingest: "a.dlError(derr)"},
	{Name: "raw", Type: "String", Added: 1, Kept: TableDeadLetter, From: FromDeadLetter,
		Ingest: "a.raw(derr, raw)"},
	// Migration 008: the agent's version the event named (source.version
	// or the errtrail-source-version header), "" when none.
	{Name: "source_version", Type: "String", Added: 8, Kept: TableErrors, LC: true, From: FromRecord, JSON: "source_version", Decoded: true,
		Ingest: "a.str(rec.SourceVersion)"},
	// Migration 009 keeps these in error_traces (traces.go).
	{Name: "trace_id", Type: "String", Added: 9, Kept: TableErrorTraces, From: FromRecord, JSON: "trace_id", Decoded: true,
		Ingest: "a.str(rec.TraceID)"},
	{Name: "span_id", Type: "String", Added: 9, Kept: TableErrorTraces, From: FromRecord, JSON: "span_id", Decoded: true,
		Ingest: "a.str(rec.SpanID)"},
	{Name: "origin", Type: "String", Added: 9, Kept: TableErrorTraces, From: FromRecord, JSON: "origin", Decoded: true,
		Ingest: "string(rec.Origin)"},
	{Name: "inferred", Type: "Array(String)", Added: 9, Kept: TableErrorTraces, From: FromRecord, JSON: "inferred", Decoded: true,
		Ingest: "c.inferredOf(rec.Inferred)"},
	{Name: "kafka_index", Type: "UInt32", Added: 9, Kept: TableErrorTraces, From: FromMessage,
		Ingest: "m.index"},
}
