package schema

import (
	"reflect"
	"strings"
	"time"
)

// Column is one column of the landing table: its name, its ClickHouse type
// and the Go type clickhouse-go expects when a batch column is appended.
type Column struct {
	Name string
	Type string
	Go   reflect.Type
}

var (
	tUint8   = reflect.TypeFor[uint8]()
	tInt8    = reflect.TypeFor[int8]()
	tUint16  = reflect.TypeFor[uint16]()
	tInt32   = reflect.TypeFor[int32]()
	tInt64   = reflect.TypeFor[int64]()
	tUint32  = reflect.TypeFor[uint32]()
	tUint64  = reflect.TypeFor[uint64]()
	tString  = reflect.TypeFor[string]()
	tTime    = reflect.TypeFor[time.Time]()
	tStrings = reflect.TypeFor[[]string]()
)

// LandingColumns lists the columns of the landing table in order. The
// ingester builds its columnar batch from this list and inserts with
// LandingInsert, which names every column (ClickHouse 18.16 needs the explicit
// column list). The types are the same on every server and in every rendering:
// landing never uses LowCardinality, codecs or DateTime64.
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
//
// Migration 001 created landing with landingV1; later migrations add their
// columns at the end (008: source_version, the end of landingColumns1; 009:
// landingColumns9), so a database migrated before them keeps its checksums.
var LandingColumns = append(append([]Column{}, landingColumns1...), landingColumns9...)

// landingColumns1 are the landing columns of migrations 001 (landingV1)
// and 008.
var landingColumns1 = []Column{
	{"dead", "UInt8", tUint8},
	{"event_id", "String", tString},
	{"observed_at", "DateTime", tTime},
	{"observed_at_ms", "UInt64", tUint64},
	{"ingested_at", "DateTime", tTime},
	{"kafka_topic", "String", tString},
	{"kafka_partition", "Int32", tInt32},
	{"kafka_offset", "Int64", tInt64},
	{"source_kind", "String", tString},
	{"source_id", "String", tString},
	{"agent", "String", tString},
	{"endpoint", "String", tString},
	{"caller", "String", tString},
	{"method", "String", tString},
	{"attempt", "UInt16", tUint16},
	{"http_request_id", "String", tString},
	{"jsonrpc_id", "String", tString},
	{"message_id", "String", tString},
	{"task_id", "String", tString},
	{"idempotency_key_hash", "UInt64", tUint64},
	{"protocol", "String", tString},
	{"binding", "String", tString},
	{"envelope", "String", tString},
	{"http_status", "UInt16", tUint16},
	{"grpc_status", "String", tString},
	{"jsonrpc_code", "Int32", tInt32},
	{"code", "String", tString},
	{"reason", "String", tString},
	{"domain", "String", tString},
	{"kind", "String", tString},
	{"typed", "UInt8", tUint8},
	{"retryable", "Int8", tInt8},
	{"retryable_source", "String", tString},
	{"retry_after_ms", "Int64", tInt64},
	{"retry_after_source", "String", tString},
	{"limit_name", "String", tString},
	{"scope", "String", tString},
	{"error_id", "String", tString},
	{"request_id", "String", tString},
	{"message", "String", tString},
	{"violation_fields", "Array(String)", tStrings},
	{"violation_descriptions", "Array(String)", tStrings},
	{"findings", "Array(String)", tStrings},
	{"dl_reason", "String", tString},
	{"dl_error", "String", tString},
	{"raw", "String", tString},
	// Migration 008 added the columns from here on (ALTER TABLE ... ADD
	// COLUMN appends them); landingV1 is the list migration 001 created,
	// landingColumns9 what migration 009 appended after these.
	{"source_version", "String", tString},
}

// landingColumns9 are the landing columns migration 009 adds (traces.go).
var landingColumns9 = []Column{
	{"trace_id", "String", tString},
	{"span_id", "String", tString},
	{"origin", "String", tString},
	{"inferred", "Array(String)", tStrings},
	{"kafka_index", "UInt32", tUint32},
}

// landingV1 and errorsV1 are the columns migrations 001 created: their
// rendering must not change (their checksum is their identity), so the
// columns later migrations add are appended to LandingColumns and
// errorsColumns and left out of these.
var (
	landingV1 = landingColumns1[:46]
	errorsV1  = errorsColumns[:42]
)

// LandingInsert returns the INSERT statement for a landing batch, with the
// explicit column list, e.g. for conn.PrepareBatch.
func LandingInsert(opts Options) string {
	opts = opts.withDefaults()
	names := make([]string, len(LandingColumns))
	for i, c := range LandingColumns {
		names[i] = c.Name
	}
	return "INSERT INTO " + opts.Database + "." + TableLanding + " (" + strings.Join(names, ", ") + ")"
}

// codec says which compression suits a column where the server has codecs.
type codec uint8

const (
	codecDefault codec = iota // LZ4, the server default
	codecText                 // ZSTD(1): ids, messages
	codecBlob                 // ZSTD(3): raw dead-letter bytes
	codecTime                 // DoubleDelta (or Delta), ZSTD(1): timestamps that grow within the sorting key
	codecSeq                  // Delta, ZSTD(1): offsets that grow within the sorting key
)

// col describes a stored column. Type is what queries see; lc marks a String
// stored as LowCardinality(String) where the server has it (it reads as a
// String in every query, comparison and GROUP BY).
type col struct {
	name  string
	typ   string
	lc    bool
	codec codec
}

// errorsColumns are the columns of errors: the normalized record with its
// Kafka provenance. They come from landing by name.
var errorsColumns = []col{
	{"event_id", "String", false, codecText},
	{"observed_at", "DateTime", false, codecTime},
	{"observed_at_ms", "UInt64", false, codecTime},
	{"ingested_at", "DateTime", false, codecTime},
	{"kafka_topic", "String", true, 0},
	{"kafka_partition", "Int32", false, 0},
	{"kafka_offset", "Int64", false, 0},
	{"source_kind", "String", true, 0},
	{"source_id", "String", true, 0},
	{"agent", "String", true, 0},
	{"endpoint", "String", true, 0},
	{"caller", "String", true, 0},
	{"method", "String", true, 0},
	{"attempt", "UInt16", false, 0},
	{"http_request_id", "String", false, codecText},
	{"jsonrpc_id", "String", false, codecText},
	{"message_id", "String", false, codecText},
	{"task_id", "String", false, codecText},
	{"idempotency_key_hash", "UInt64", false, 0},
	{"protocol", "String", true, 0},
	{"binding", "String", true, 0},
	{"envelope", "String", true, 0},
	{"http_status", "UInt16", false, 0},
	{"grpc_status", "String", true, 0},
	{"jsonrpc_code", "Int32", false, 0},
	{"code", "String", true, 0},
	{"reason", "String", true, 0},
	{"domain", "String", true, 0},
	{"kind", "String", true, 0},
	{"typed", "UInt8", false, 0},
	{"retryable", "Int8", false, 0},
	{"retryable_source", "String", true, 0},
	{"retry_after_ms", "Int64", false, 0},
	{"retry_after_source", "String", true, 0},
	{"limit_name", "String", true, 0},
	{"scope", "String", true, 0},
	{"error_id", "String", false, codecText},
	{"request_id", "String", false, codecText},
	{"message", "String", false, codecText},
	{"violation_fields", "Array(String)", false, codecText},
	{"violation_descriptions", "Array(String)", false, codecText},
	{"findings", "Array(String)", false, codecText},
	// Migration 008: the agent's version the event named (source.version
	// or the errtrail-source-version header), "" when none.
	{"source_version", "String", true, 0},
}

var deadLetterColumns = []col{
	{"event_id", "String", false, codecText},
	{"observed_at", "DateTime", false, 0},
	{"observed_at_ms", "UInt64", false, 0},
	{"ingested_at", "DateTime", false, codecTime},
	{"kafka_topic", "String", true, 0},
	{"kafka_partition", "Int32", false, 0},
	{"kafka_offset", "Int64", false, codecSeq},
	{"source_kind", "String", true, 0},
	{"source_id", "String", true, 0},
	{"agent", "String", true, 0},
	{"endpoint", "String", true, 0},
	{"caller", "String", true, 0},
	{"method", "String", true, 0},
	{"dl_reason", "String", true, 0},
	{"dl_error", "String", false, codecText},
	{"raw", "String", false, codecBlob},
}

var lookupColumns = []col{
	{"id", "String", false, codecText},
	{"id_kind", "String", true, 0},
	{"observed_at", "DateTime", false, 0},
	{"agent", "String", true, 0},
	{"event_id", "String", false, codecText},
}

// errors1mDims are the dimensions of errors_1m, in sorting-key order. The
// names are a contract with the alerter and the dashboards.
var errors1mDims = []col{
	{"agent", "String", true, 0},
	{"minute", "DateTime", false, codecTime},
	{"kind", "String", true, 0},
	{"caller", "String", true, 0},
	{"method", "String", true, 0},
	{"protocol", "String", true, 0},
	{"binding", "String", true, 0},
	{"code", "String", true, 0},
	{"reason", "String", true, 0},
	{"http_status", "UInt16", false, 0},
	{"grpc_status", "String", true, 0},
	{"limit_name", "String", true, 0},
	{"typed", "UInt8", false, 0},
}

// errors1mV2Dims are the dimensions of errors_1m_v2 (migration 010):
// errors1mDims without caller, in sorting-key order. A contract with the
// dashboards.
var errors1mV2Dims = func() []col {
	var out []col
	for _, c := range errors1mDims {
		if c.name != "caller" {
			out = append(out, c)
		}
	}
	return out
}()

var errors1mSums = []col{
	{"n", "UInt64", false, 0},
	{"retry_after_ms_sum", "Int64", false, 0},
	{"with_retry_after", "UInt64", false, 0},
	{"untyped_5xx", "UInt64", false, 0},
}

// callers1mColumns are the columns of callers_1m (migration 005), a
// contract with the alerter.
var callers1mColumns = []col{
	{"minute", "DateTime", false, codecTime},
	{"agent", "String", true, 0},
	{"caller", "String", true, 0},
	{"source_kind", "String", true, 0},
	{"n", "UInt64", false, 0},
	{"quota", "UInt64", false, 0},
	{"overload", "UInt64", false, 0},
	{"cannot_tell", "UInt64", false, 0},
	{"untyped", "UInt64", false, 0},
}

var outcomesColumns = []col{
	{"minute", "DateTime", false, codecTime},
	{"kafka_topic", "String", true, 0},
	{"outcome", "String", true, 0},
	{"dl_reason", "String", true, 0},
	{"n", "UInt64", false, 0},
}

var progressColumns = []col{
	{"kafka_topic", "String", true, 0},
	{"kafka_partition", "Int32", false, 0},
	{"max_offset", "Int64", false, 0},
	{"updated_at", "DateTime", false, 0},
}

var migrationsColumns = []col{
	{"version", "UInt32", false, 0},
	{"name", "String", false, 0},
	{"checksum", "String", false, 0},
	{"server_version", "String", false, 0},
	{"applied_at", "DateTime", false, 0},
}

func names(cols []col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}
