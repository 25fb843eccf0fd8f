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

// LandingColumns lists the columns of the landing table in order: RowColumns
// (row.go) with the Go type clickhouse-go expects for each. The ingester
// builds its columnar batch in this order and inserts with InsertInto, which
// names every column (ClickHouse 18.16 needs the explicit column list). The
// types are the same on every server and in every rendering: landing never
// uses LowCardinality, codecs or DateTime64.
//
// Migration 001 created landing with landingV1; later migrations add their
// columns at the end (008: source_version; 009: the trace columns), so a
// database migrated before them keeps its checksums.
var LandingColumns = landingUpTo(maxAdded())

// landingV1 and errorsV1 are the columns migrations 001 created: their
// rendering must not change (their checksum is their identity), so every
// migration names the columns as they were when it was written, by
// RowColumn.Added.
var (
	landingV1 = landingUpTo(1)
	errorsV1  = errorsUpTo(1)
)

// errorsColumns are the columns of errors: the normalized record with its
// Kafka provenance, RowColumns kept in errors. They come from landing by
// name.
var errorsColumns = errorsUpTo(maxAdded())

// landingUpTo returns the landing columns once migration v has run.
func landingUpTo(v int) []Column {
	var out []Column
	for _, c := range RowColumns {
		if c.Added <= v {
			out = append(out, Column{Name: c.Name, Type: c.Type, Go: goType(c.Type)})
		}
	}
	return out
}

// errorsUpTo returns the columns of errors once migration v has run.
func errorsUpTo(v int) []col {
	var out []col
	for _, c := range RowColumns {
		if c.Added <= v && c.Kept == TableErrors {
			out = append(out, col{name: c.Name, typ: c.Type, lc: c.LC, codec: c.Codec})
		}
	}
	return out
}

func maxAdded() int {
	v := 0
	for _, c := range RowColumns {
		v = max(v, c.Added)
	}
	return v
}

// goType is the Go type clickhouse-go takes for a landing column's type.
func goType(chType string) reflect.Type {
	t, ok := goTypes[chType]
	if !ok {
		panic("schema: no Go type for ClickHouse type " + chType)
	}
	return t
}

var goTypes = map[string]reflect.Type{
	"UInt8": tUint8, "Int8": tInt8, "UInt16": tUint16, "Int32": tInt32, "Int64": tInt64,
	"UInt32": tUint32, "UInt64": tUint64, "String": tString, "DateTime": tTime,
	"Array(String)": tStrings,
}

// LandingInsert returns the INSERT statement for a landing batch in
// opts.Database, with the explicit column list, e.g. for conn.PrepareBatch.
func LandingInsert(opts Options) string {
	opts = opts.withDefaults()
	return InsertInto(opts.Database + "." + TableLanding)
}

// InsertInto returns the INSERT statement for a landing batch into table (a
// qualified name: landing, or a shard's landing_local), naming every
// column of LandingColumns in order. The ingester and the tests insert
// with it.
func InsertInto(table string) string {
	return "INSERT INTO " + table + " (" + landingNames + ")"
}

var landingNames = func() string {
	names := make([]string, len(LandingColumns))
	for i, c := range LandingColumns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}()

// ErrorsSelect is the column list of errors as ErrorRow holds it, for a
// SELECT whose rows are scanned into ErrorRow.
func ErrorsSelect() string { return errorsSelect }

var errorsSelect = strings.Join(names(errorsColumns), ", ")

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
