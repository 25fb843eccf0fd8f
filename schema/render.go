package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Table names. In a cluster rendering these are the Distributed tables that
// queries use; the data lives in "<name>_local" on each shard.
const (
	TableLanding        = "landing"
	TableErrors         = "errors"
	TableDeadLetter     = "dead_letter"
	TableErrorLookup    = "error_lookup"
	TableErrorTraces    = "error_traces"
	TableErrors1m       = "errors_1m"
	TableErrors1mV2     = "errors_1m_v2"
	TableOutcomes1m     = "outcomes_1m"
	TableIngestProgress = "ingest_progress"
	TableCallers1m      = "callers_1m"
	TableFindings1h     = "findings_1h"
	TableIncidents      = "incidents"
	TableAlerterMinutes = "alerter_minutes"
	TableErrorGroups    = "error_groups"
	TableErrorGroups1h  = "error_groups_1h"
	TableMigrations     = "schema_migrations"
)

// Defaults of Options.
const (
	DefaultDatabase            = "errtrail"
	DefaultRetentionDays       = 30
	DefaultRollupRetentionDays = 90
)

// Options select the rendering.
type Options struct {
	// Database holds every errtrail table. Default "errtrail".
	Database string
	// Cluster, when set, renders ON CLUSTER DDL, Replicated* engines
	// ({shard} and {replica} macros) and Distributed tables over the local
	// ones. See docs/schema.md.
	Cluster string
	// RetentionDays bounds errors, dead_letter and error_lookup (TTL where the
	// server has it, Retain elsewhere). Default 30.
	RetentionDays int
	// RollupRetentionDays bounds the rollups (errors_1m_v2, callers_1m,
	// outcomes_1m, findings_1h, the old errors_1m). Default 90, and never
	// less than RetentionDays.
	RollupRetentionDays int
}

// Validate reports options that cannot be rendered safely. Names are
// restricted to plain identifiers because they are spliced into DDL.
func (o Options) Validate() error {
	o = o.withDefaults()
	if err := ValidDatabase(o.Database); err != nil {
		return err
	}
	if o.Cluster != "" && !identRE.MatchString(o.Cluster) {
		return fmt.Errorf("schema: cluster name %q is not a plain identifier", o.Cluster)
	}
	if o.RetentionDays < 1 || o.RollupRetentionDays < 1 {
		return fmt.Errorf("schema: retention must be at least one day")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if o.RetentionDays == 0 {
		o.RetentionDays = DefaultRetentionDays
	}
	if o.RollupRetentionDays == 0 {
		o.RollupRetentionDays = DefaultRollupRetentionDays
	}
	if o.RollupRetentionDays < o.RetentionDays {
		o.RollupRetentionDays = o.RetentionDays
	}
	return o
}

// Migration is one versioned step. Statements are complete DDL statements
// without a trailing semicolon; each is idempotent (IF NOT EXISTS), so a step
// that failed half way is simply run again.
type Migration struct {
	Version    int
	Name       string
	Statements []string
	// Repair, if not nil, replaces Statements when Migrate re-creates the
	// migration's missing objects after later migrations ran: the tables
	// with the columns later migrations added (a replica added to a cluster
	// must match the structure its shard's other replicas keep in
	// ZooKeeper). The checksum stays that of Statements.
	Repair []string
	// Checksum identifies the rendered DDL (sha256, hex). Retention days are
	// left out so that changing them does not look like an edited migration.
	Checksum string
}

// Render returns the migrations for a server of version v. The first one,
// version 0, creates the database and schema_migrations; Migrate runs it every
// time and does not record it.
func Render(v ServerVersion, opts Options) []Migration {
	opts = opts.withDefaults()
	migs := (&renderer{v: v, f: FeaturesOf(v), o: opts}).migrations()
	norm := opts
	norm.RetentionDays, norm.RollupRetentionDays = DefaultRetentionDays, DefaultRollupRetentionDays
	for i, m := range (&renderer{v: v, f: FeaturesOf(v), o: norm}).migrations() {
		sum := sha256.Sum256([]byte(m.Name + "\n" + strings.Join(m.Statements, ";\n")))
		migs[i].Checksum = hex.EncodeToString(sum[:])
	}
	return migs
}

type renderer struct {
	v ServerVersion
	f Features
	o Options
}

// migrations lists every migration in the order Migrate runs them.
//
// Version and Name are the migration's identity in databases that already
// ran it: Migrate records both in schema_migrations, and Name is hashed into
// the Checksum. Renaming one would make Migrate report every migrated
// database as edited (ChecksumError), so both stay as first recorded, short
// as some of them are; TestUnitMigrationIdentity pins them. The Go methods
// that render the statements are free to be named for what they create.
func (r *renderer) migrations() []Migration {
	return []Migration{
		{Version: 0, Name: "bootstrap", Statements: r.bootstrap()},
		{Version: 1, Name: "landing, errors and dead_letter", Statements: r.landingErrorsDeadLetter(landingV1, errorsV1),
			Repair: r.landingErrorsDeadLetter(LandingColumns, errorsColumns)},
		{Version: 2, Name: "error_lookup", Statements: r.errorLookup()},
		{Version: 3, Name: "errors_1m and outcomes_1m rollups", Statements: r.minuteRollups()},
		{Version: 4, Name: "ingest_progress", Statements: r.ingestProgress()},
		{Version: 5, Name: "callers_1m rollup", Statements: r.callersRollup()},
		{Version: 6, Name: "findings_1h rollup", Statements: r.findingsRollup()},
		{Version: 7, Name: "incidents", Statements: r.incidents()},
		{Version: 8, Name: "source_version and error groups", Statements: r.errorGroups()},
		{Version: 9, Name: "trace ids, origin and error_traces", Statements: r.traces()},
		{Version: 10, Name: "errors_1m_v2 without caller", Statements: r.errorsMinutesWithoutCaller()},
	}
}

// local is the name of the table that holds the data.
func (r *renderer) local(name string) string {
	if r.o.Cluster != "" {
		return name + "_local"
	}
	return name
}

func (r *renderer) q(name string) string { return r.o.Database + "." + name }

func (r *renderer) onCluster() string {
	if r.o.Cluster != "" {
		return " ON CLUSTER " + r.o.Cluster
	}
	return ""
}

func (r *renderer) colType(c col) string {
	if c.lc && r.f.LowCardinality {
		return "LowCardinality(" + c.typ + ")"
	}
	return c.typ
}

func (r *renderer) colDef(c col) string {
	s := c.name + " " + r.colType(c)
	if !r.f.Codecs {
		return s
	}
	switch c.codec {
	case codecText:
		s += " CODEC(ZSTD(1))"
	case codecBlob:
		s += " CODEC(ZSTD(3))"
	case codecTime:
		if r.f.DoubleDelta {
			s += " CODEC(DoubleDelta, ZSTD(1))"
		} else {
			s += " CODEC(Delta, ZSTD(1))"
		}
	case codecSeq:
		s += " CODEC(Delta, ZSTD(1))"
	}
	return s
}

// table describes one MergeTree-family table.
type table struct {
	name      string
	cols      []col
	indexes   []string // data-skipping indexes, rendered only where supported
	engine    string   // e.g. "ReplacingMergeTree"
	args      string   // engine arguments, e.g. "ingested_at"
	partition string
	orderBy   string
	ttl       string // TTL expression without days, e.g. "observed_at"
	ttlDays   int
	shardKey  string // Distributed sharding key in a cluster rendering
	// viewTarget marks a table filled by a materialized view from landing.
	viewTarget bool
	// granularity overrides index_granularity (0: the server's 8192).
	granularity int
}

func (r *renderer) createTable(t table) []string {
	var b strings.Builder
	name := r.local(t.name)
	if t.name == TableMigrations {
		name = t.name // replicated to every node, never Distributed
	}
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s%s\n(\n", r.q(name), r.onCluster())
	defs := make([]string, 0, len(t.cols)+len(t.indexes))
	for _, c := range t.cols {
		defs = append(defs, "    "+r.colDef(c))
	}
	if r.f.SkipIndexes {
		for _, ix := range t.indexes {
			defs = append(defs, "    INDEX "+ix)
		}
	}
	b.WriteString(strings.Join(defs, ",\n"))
	b.WriteString("\n)\n")
	engine, args := t.engine, t.args
	if r.o.Cluster != "" && strings.HasSuffix(engine, "MergeTree") {
		path := fmt.Sprintf("'/clickhouse/tables/{shard}/%s/%s', '{replica}'", r.o.Database, r.local(t.name))
		if t.name == TableMigrations {
			// One copy on every node: the path has no {shard}, so every node
			// is a replica of the one table, and its name must be unique in
			// the whole cluster. {shard}-{replica} is, with the common
			// naming that reuses replica names on every shard (r1, r2).
			path = fmt.Sprintf("'/clickhouse/tables/all/%s/%s', '{shard}-{replica}'", r.o.Database, t.name)
		}
		engine = "Replicated" + engine
		if args != "" {
			args = path + ", " + args
		} else {
			args = path
		}
	}
	fmt.Fprintf(&b, "ENGINE = %s(%s)", engine, args)
	if t.partition != "" {
		b.WriteString("\nPARTITION BY " + t.partition)
	}
	if t.orderBy != "" {
		b.WriteString("\nORDER BY " + t.orderBy)
	}
	if t.ttl != "" && r.f.TTL {
		fmt.Fprintf(&b, "\nTTL %s + INTERVAL %d DAY", t.ttl, t.ttlDays)
	}
	var settings []string
	if t.granularity > 0 {
		settings = append(settings, fmt.Sprintf("index_granularity = %d", t.granularity))
	}
	if t.viewTarget && r.f.InsertDedup && r.o.Cluster == "" {
		// Replicated tables deduplicate inserts by default; plain MergeTree
		// only with a window.
		settings = append(settings, fmt.Sprintf("non_replicated_deduplication_window = %d", DedupWindow))
	}
	if len(settings) > 0 {
		b.WriteString("\nSETTINGS " + strings.Join(settings, ", "))
	}
	out := []string{b.String()}
	if r.o.Cluster != "" && t.name != TableMigrations {
		out = append(out, r.distributed(t.name, t.cols, t.shardKey))
	}
	return out
}

// distributed renders the Distributed table that queries (and, for
// landing, the ingester) use in a cluster. Its columns carry no codecs or
// indexes; the types are those of the local table.
func (r *renderer) distributed(name string, cols []col, shardKey string) string {
	if shardKey == "" {
		shardKey = "rand()"
	}
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = "    " + c.name + " " + r.colType(c)
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s\n(\n%s\n)\nENGINE = Distributed(%s, %s, %s, %s)",
		r.q(name), r.onCluster(), strings.Join(defs, ",\n"), r.o.Cluster, r.o.Database, r.local(name), shardKey)
}

// redistribute re-creates the Distributed table name with cols: on a
// cluster whose shards are replicated, 18.16 refuses ALTER TABLE ... ON
// CLUSTER on a table that is not replicated ("Table errors isn't
// replicated, but shard #1 is replicated"), while DROP and CREATE run on
// every host. A Distributed table holds no data; an insert or a read in the
// moment between the two statements fails and is retried.
func (r *renderer) redistribute(name string, cols []col, shardKey string) []string {
	return []string{fmt.Sprintf("DROP TABLE IF EXISTS %s%s", r.q(name), r.onCluster()), r.distributed(name, cols, shardKey)}
}

// relanding adds columns to landing on a cluster: its local table is a Null
// table, not replicated, so 18.16 refuses ALTER ... ON CLUSTER on it as on
// a Distributed one; it holds no data and is re-created with cols (the
// views on it find it again by name), then the Distributed table.
func (r *renderer) relanding(cols []col) []string {
	return append([]string{
		fmt.Sprintf("DROP TABLE IF EXISTS %s%s", r.q(r.local(TableLanding)), r.onCluster()),
		r.nullLanding(cols),
	}, r.redistribute(TableLanding, cols, kafkaShard)...)
}

// nullLanding creates landing's local table, a Null table with cols: the
// ingester's insert target, whose blocks only the views keep.
func (r *renderer) nullLanding(cols []col) string {
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = "    " + c.name + " " + c.typ
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s\n(\n%s\n)\nENGINE = Null", r.q(r.local(TableLanding)), r.onCluster(), strings.Join(defs, ",\n"))
}

// colsOf converts the landing's column list to the renderer's.
func colsOf(cs []Column) []col {
	out := make([]col, len(cs))
	for i, c := range cs {
		out[i] = col{name: c.Name, typ: c.Type}
	}
	return out
}

// Materialized views on landing. On a server without insert deduplication
// (Features.InsertDedup false: 18.16 here) ClickHouse pushes each block
// inserted into landing through these views one at a time, in byte order of
// their names, and stops at the first view that fails; the views before it
// keep what they wrote. Where correctness depends on that order, the name
// encodes it, and landingViews states the dependency. Byte order, not
// number order: "mv10_x" would run before "mv9_ingest_progress".
const (
	viewErrors         = "mv1_errors"
	viewErrorsV8       = "mv1_errors_v8" // replaces mv1_errors (migration 008)
	viewErrorGroups    = "mv8_error_groups"
	viewErrorGroups1h  = "mv8_error_groups_1h"
	viewErrorTraces    = "mv1t_error_traces"
	viewDeadLetter     = "mv2_dead_letter"
	viewErrorLookup    = "mv3_error_lookup"
	viewTraceLookup    = "mv3t_trace_lookup"
	viewErrors1m       = "mv4_errors_1m" // dropped by migration 010
	viewErrors1mV2     = "mv4_errors_1m_v2"
	viewOutcomes1m     = "mv5_outcomes_1m"
	viewCallers1m      = "mv6_callers_1m"
	viewFindings1h     = "mv7_findings_1h"
	viewIngestProgress = "mv9_ingest_progress"
)

// landingView is one materialized view on landing and the views whose
// writes it must follow on a server that runs views in name order.
type landingView struct {
	name string
	// after lists views that must have written a block before this view
	// writes it.
	after []string
	// last: this view must follow every other view on landing, including
	// ones added later.
	last bool
}

// landingViews declares every view on landing and its order dependencies.
// TestUnitViewNameOrder renders every migration and fails unless the set
// of rendered views is exactly this list and each view's name sorts after
// every view it depends on.
// A view a later migration drops (mv4_errors_1m) is not listed: it is not
// on landing once Migrate is done.
var landingViews = []landingView{
	{name: viewErrorsV8},
	{name: viewDeadLetter},
	{name: viewErrorLookup},
	{name: viewTraceLookup},
	{name: viewErrorTraces},
	{name: viewErrors1mV2},
	{name: viewOutcomes1m},
	{name: viewCallers1m},
	{name: viewFindings1h},
	{name: viewErrorGroups},
	{name: viewErrorGroups1h},
	// The progress row says "this partition is stored up to this offset";
	// it is true only once every other view has stored the block. If a
	// view fails half way, progress then stays behind the data (a replay
	// writes a copy, which the Replacing tables collapse) and never gets
	// ahead of it (a replay would skip rows no table has: loss).
	{name: viewIngestProgress, last: true},
}

// dependencies returns the views of all that v must follow.
func (v landingView) dependencies(all []landingView) []string {
	if !v.last {
		return v.after
	}
	var out []string
	for _, o := range all {
		if o.name != v.name {
			out = append(out, o.name)
		}
	}
	return out
}

// view renders a materialized view. On landing its name decides when it
// runs on 18.16: declare it in landingViews with what it must follow.
func (r *renderer) view(name, target, query string) string {
	return fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s%s TO %s AS\n%s",
		r.q(name), r.onCluster(), r.q(r.local(target)), query)
}

// kafkaShard keeps all rows of one Kafka partition on one shard, so that
// shard's ingest_progress row and the rows it vouches for are written by the
// same local insert (see docs/schema.md, "Cluster").
const kafkaShard = "cityHash64(kafka_topic, kafka_partition)"

// eventIDExpr is the row identity: the producer's event_id, else the Kafka
// coordinates (event contract: "Without it the row identity is
// topic/partition/offset"). An empty event_id must never be stored in errors,
// or every event of one agent and second would collapse into one row.
const eventIDExpr = "if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset)))"

func (r *renderer) bootstrap() []string {
	return append([]string{"CREATE DATABASE IF NOT EXISTS " + r.o.Database + r.onCluster()},
		r.createTable(table{
			name: TableMigrations, cols: migrationsColumns,
			engine: "ReplacingMergeTree", args: "applied_at", orderBy: "version",
		})...)
}

func (r *renderer) landingErrorsDeadLetter(landingCols []Column, errorsCols []col) []string {
	var out []string
	// landing: the ingester's single insert target. Null keeps nothing; the
	// materialized views below see every inserted block.
	landing := make([]col, len(landingCols))
	for i, c := range landingCols {
		landing[i] = col{name: c.Name, typ: c.Type}
	}
	{
		out = append(out, r.nullLanding(landing))
		if r.o.Cluster != "" {
			out = append(out, r.distributed(TableLanding, landing, kafkaShard))
		}
	}
	out = append(out, r.createTable(table{
		name: TableErrors, viewTarget: true, cols: errorsCols,
		indexes: []string{
			"idx_error_id error_id TYPE bloom_filter(0.01) GRANULARITY 4",
			"idx_request_id request_id TYPE bloom_filter(0.01) GRANULARITY 4",
			"idx_http_request_id http_request_id TYPE bloom_filter(0.01) GRANULARITY 4",
			"idx_message message TYPE tokenbf_v1(8192, 3, 0) GRANULARITY 4",
		},
		engine: "ReplacingMergeTree", args: "ingested_at",
		// A support lookup reads one row by its full key but decompresses the
		// whole granule of every column: 1024-row granules make that read
		// 2-3x cheaper than the default 8192 (6-12 ms against 15-26 ms at 10
		// million rows on 18.16); scans pay a slightly larger index.
		granularity: 1024,
		partition:   "toYYYYMMDD(observed_at)",
		orderBy:     "(agent, observed_at, event_id)",
		ttl:         "observed_at", ttlDays: r.o.RetentionDays,
		shardKey: kafkaShard,
	})...)
	out = append(out, r.createTable(table{
		name: TableDeadLetter, viewTarget: true, cols: deadLetterColumns,
		engine: "ReplacingMergeTree", args: "ingested_at",
		partition: "toYYYYMMDD(ingested_at)",
		orderBy:   "(kafka_topic, kafka_partition, kafka_offset)",
		ttl:       "ingested_at", ttlDays: r.o.RetentionDays,
		shardKey: kafkaShard,
	})...)
	// Order (both views): no dependency of their own; they sort before
	// viewIngestProgress, which must follow them (landingViews).
	out = append(out, r.view(viewErrors, TableErrors, r.errorsViewQuery(errorsV1))) // dropped by 008, whatever the columns
	out = append(out, r.view(viewDeadLetter, TableDeadLetter,
		"SELECT\n    "+strings.Join(names(deadLetterColumns), ",\n    ")+"\nFROM "+r.q(r.local(TableLanding))+"\nWHERE dead = 1"))
	return out
}

// lookupIDs are the id columns indexed in error_lookup, by id_kind.
var lookupIDs = []string{"error_id", "request_id", "event_id", "message_id", "task_id", "http_request_id"}

func (r *renderer) errorLookup() []string {
	out := r.createTable(table{
		// A lookup is a point read by id in every part, so this table has
		// few, large parts (monthly partitions) and small granules: at 10
		// million errors (60 million ids) a read takes a third of the time
		// it takes with daily partitions and the default 8192 rows
		// (docs/performance.md). Retain drops a month once all of it is
		// older than the retention.
		name: TableErrorLookup, viewTarget: true, cols: lookupColumns,
		engine: "ReplacingMergeTree", partition: "toYYYYMM(observed_at)", granularity: 1024,
		orderBy: "(id, id_kind, agent, observed_at, event_id)",
		ttl:     "observed_at", ttlDays: r.o.RetentionDays,
	})
	pairs := make([]string, len(lookupIDs))
	for i, k := range lookupIDs {
		src := k
		if k == "event_id" {
			src = eventIDExpr
		}
		pairs[i] = fmt.Sprintf("(%s, '%s')", src, k)
	}
	// No subquery: 18.16 cannot resolve a subquery's alias in a view's
	// ARRAY JOIN. "<expr> AS event_id" refers to the column event_id inside
	// expr on every server (checked on 18.16 and by check-modern-sql).
	q := "SELECT\n" +
		"    tupleElement(id_pair, 1) AS id,\n" +
		"    tupleElement(id_pair, 2) AS id_kind,\n" +
		"    observed_at,\n" +
		"    agent,\n" +
		"    " + eventIDExpr + " AS event_id\n" +
		"FROM " + r.q(r.local(TableLanding)) + "\n" +
		"ARRAY JOIN arrayFilter(p -> tupleElement(p, 1) != '', [\n        " + strings.Join(pairs, ",\n        ") + "]) AS id_pair\n" +
		"WHERE dead = 0"
	// Order: no dependency of its own; sorts before viewIngestProgress,
	// which must follow it (landingViews).
	return append(out, r.view(viewErrorLookup, TableErrorLookup, q))
}

// untyped5xxExpr counts replies that failed on the server side without a
// typed reason: HTTP 5xx, or the gRPC codes that map to 5xx.
const untyped5xxExpr = "typed = 0 AND (http_status >= 500 OR grpc_status IN ('UNKNOWN', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'DEADLINE_EXCEEDED', 'UNIMPLEMENTED'))"

func (r *renderer) minuteRollups() []string {
	cols := append(append([]col{}, errors1mDims...), errors1mSums...)
	dims := names(errors1mDims)
	out := r.createTable(table{
		name: TableErrors1m, viewTarget: true, cols: cols,
		engine: "SummingMergeTree", args: "(" + strings.Join(names(errors1mSums), ", ") + ")",
		partition: "toYYYYMMDD(minute)",
		orderBy:   "(" + strings.Join(dims, ", ") + ")",
		ttl:       "minute", ttlDays: r.o.RollupRetentionDays,
	})
	out = append(out, r.createTable(table{
		name: TableOutcomes1m, viewTarget: true, cols: outcomesColumns,
		engine: "SummingMergeTree", args: "(n)",
		partition: "toYYYYMMDD(minute)",
		orderBy:   "(kafka_topic, minute, outcome, dl_reason)",
		ttl:       "minute", ttlDays: r.o.RollupRetentionDays,
	})...)
	// Order (both views): no dependency of their own; they sort before
	// viewIngestProgress, which must follow them (landingViews).
	// Migration 010 drops viewErrors1m; Migrate no longer creates it
	// (liveStatements).
	out = append(out, r.errorsMinutesView(viewErrors1m, TableErrors1m, dims))
	out = append(out, r.view(viewOutcomes1m, TableOutcomes1m,
		"SELECT\n"+
			"    toStartOfMinute(ingested_at) AS minute,\n"+
			"    kafka_topic,\n"+
			"    if(dead = 1, 'dead_letter', 'accepted') AS outcome,\n"+
			"    dl_reason,\n"+
			"    count() AS n\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"GROUP BY minute, kafka_topic, outcome, dl_reason"))
	return out
}

// errorsMinutesView renders the view of an errors-per-minute rollup with
// the dimensions dims (errors1mDims for errors_1m, errors1mV2Dims for
// errors_1m_v2) and the sums of errors1mSums.
func (r *renderer) errorsMinutesView(name, target string, dims []string) string {
	sel := make([]string, 0, len(dims)+4)
	for _, d := range dims {
		if d == "minute" {
			d = "toStartOfMinute(observed_at) AS minute"
		}
		sel = append(sel, "    "+d)
	}
	sel = append(sel,
		"    count() AS n",
		"    sumIf(retry_after_ms, retry_after_ms >= 0) AS retry_after_ms_sum",
		"    countIf(retry_after_ms >= 0) AS with_retry_after",
		"    countIf("+untyped5xxExpr+") AS untyped_5xx")
	return r.view(name, target,
		"SELECT\n"+strings.Join(sel, ",\n")+"\nFROM "+r.q(r.local(TableLanding))+
			"\nWHERE dead = 0\nGROUP BY "+strings.Join(dims, ", "))
}

// errorsMinutesWithoutCaller (migration 010) replaces errors_1m by
// errors_1m_v2, the same rollup without caller in its key: caller made
// errors_1m hold 0.74 rows per event (errors_1m_v2: 0.013) and cost the
// server about 1 µs per event in the insert and 1-2 in merges
// (bench/views); what needs a caller's minutes reads callers_1m. ClickHouse 18.16 cannot change a view's query in place, so
// the new table gets a view of its own, created before the old view is
// dropped: an insert runs the views it found when it began, so every
// insert is counted by one of the two views, and one that begins between
// the two statements by both. Readers sum both tables (errors_1m holds
// what was inserted before this migration, errors_1m_v2 what was inserted
// after it; docs/schema.md, "errors_1m_v2"). The old table is kept until
// its rows are past the rollup retention.
//
// In the old view's place stays a Null table of its name, which no insert
// reaches: an older errtrail's Migrate, which knows only migrations up to
// 007, repairs every object of theirs it finds missing, and would put the
// old view back on landing (every reply counted twice from then on) when
// an older ingester restarts during a rolling upgrade.
func (r *renderer) errorsMinutesWithoutCaller() []string {
	cols := append(append([]col{}, errors1mV2Dims...), errors1mSums...)
	dims := names(errors1mV2Dims)
	out := r.createTable(table{
		name: TableErrors1mV2, viewTarget: true, cols: cols,
		engine: "SummingMergeTree", args: "(" + strings.Join(names(errors1mSums), ", ") + ")",
		partition: "toYYYYMMDD(minute)",
		orderBy:   "(" + strings.Join(dims, ", ") + ")",
		ttl:       "minute", ttlDays: r.o.RollupRetentionDays,
	})
	// Order: no dependency of its own; sorts before viewIngestProgress,
	// which must follow it (landingViews).
	out = append(out, r.errorsMinutesView(viewErrors1mV2, TableErrors1mV2, dims))
	return append(out,
		fmt.Sprintf("DROP TABLE IF EXISTS %s%s", r.q(viewErrors1m), r.onCluster()),
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s\n(\n    dropped_by_migration_010 UInt8\n)\nENGINE = Null", r.q(viewErrors1m), r.onCluster()))
}

func (r *renderer) ingestProgress() []string {
	out := r.createTable(table{
		name: TableIngestProgress, viewTarget: true, cols: progressColumns,
		engine: "ReplacingMergeTree", args: "max_offset",
		orderBy:  "(kafka_topic, kafka_partition)",
		shardKey: kafkaShard,
	})
	// Order dependency: this view must run after every other view on
	// landing (landingViews, last), which its mv9_ name gives it on servers
	// that push a block to a table's views in name order (checked on 18.16
	// by TestFailingViewLeavesProgressBehind). A failure half way through
	// the views then leaves progress behind the data, never ahead of it.
	// Servers with insert deduplication run the views in no fixed order and
	// rely on the retried batch's token instead (docs/schema.md).
	return append(out, r.view(viewIngestProgress, TableIngestProgress,
		"SELECT\n"+
			"    kafka_topic,\n"+
			"    kafka_partition,\n"+
			"    max(kafka_offset) AS max_offset,\n"+
			"    max(ingested_at) AS updated_at\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"GROUP BY kafka_topic, kafka_partition"))
}

// CannotTellExpr selects the error replies that cannot tell a quota from a
// crash: no typed reason, and a kind that only says the agent failed (a bare
// 500, a JSON-RPC -32603 without data, an untyped gRPC INTERNAL) or nothing
// at all (a bare 502). A bare 429 or 503 tells by its status. An untyped
// gRPC RESOURCE_EXHAUSTED is left out: gRPC libraries raise it locally (a
// message over the size limit), so it is the caller's non-retryable error,
// not a reply the agent failed to type (docs/alerting.md, "Untyped errors").
// The alerter uses it on the raw errors table; callers_1m counts it.
const CannotTellExpr = "typed = 0 AND kind IN ('unknown', 'internal') AND grpc_status != 'RESOURCE_EXHAUSTED'"

// callersRollup is the rollup the alerter's baselines read: one row per agent,
// minute, caller and observer kind, with the counts of every verdict as
// columns. Keyed by source_kind so that a request reported by both the
// agent and a gateway in front of it can be counted once (the alerter takes
// the larger count of the two kinds), and small enough that an hour of
// 100 agents x 10,000 callers reads in well under a second
// (docs/performance.md, "Alerting").
func (r *renderer) callersRollup() []string {
	out := r.createTable(table{
		name: TableCallers1m, viewTarget: true, cols: callers1mColumns,
		engine: "SummingMergeTree", args: "(n, quota, overload, cannot_tell, untyped)",
		partition: "toYYYYMMDD(minute)",
		orderBy:   "(minute, agent, caller, source_kind)",
		ttl:       "minute", ttlDays: r.o.RollupRetentionDays,
	})
	// Order: no dependency of its own; sorts before viewIngestProgress,
	// which must follow it (landingViews).
	return append(out, r.view(viewCallers1m, TableCallers1m,
		"SELECT\n"+
			"    toStartOfMinute(observed_at) AS minute,\n"+
			"    agent,\n"+
			"    caller,\n"+
			"    source_kind,\n"+
			"    count() AS n,\n"+
			"    countIf(kind = 'quota') AS quota,\n"+
			"    countIf(kind = 'overload') AS overload,\n"+
			"    countIf("+CannotTellExpr+") AS cannot_tell,\n"+
			"    countIf(typed = 0) AS untyped\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"WHERE dead = 0\n"+
			"GROUP BY minute, agent, caller, source_kind"))
}

// findings1hColumns are the columns of findings_1h (migration 006), a
// contract with report/. They live here rather than in columns.go to keep
// the migration in one place.
var findings1hColumns = []col{
	{"agent", "String", true, 0},
	{"hour", "DateTime", false, codecTime},
	{"source_kind", "String", true, 0},
	{"finding", "String", true, 0},
	{"with_error_id", "UInt8", false, 0},
	{"n", "UInt64", false, 0},
	{"breaking", "UInt64", false, 0},
	{"example_event_id", "String", false, codecText},
	{"example_error_id", "String", false, codecText},
}

// findingsRollup is the rollup the conformance report (report/) reads: per agent,
// hour and observer kind, how many replies broke each finding, with one
// example reply. The row of the empty finding counts every reply (n) and those
// with at least one finding (breaking), so one table answers the whole
// report: at 10 million errors the 24 h report of every agent reads about
// 80,000 rollup rows (plus the partial hours at either end from errors)
// instead of 1.5 million rows of errors (docs/performance.md).
//
// with_error_id is in the key so that merges, which keep the example of an
// arbitrary row of each key, never trade an example that has an error_id
// (what an agent team searches its logs for) for one that has none. Both
// example columns are taken from the same row: argMax with the same order
// in the view, and SummingMergeTree keeps the non-summed columns of one row
// per key on merge. Like errors_1m, n counts stored messages: a re-send the
// ingester did not drop counts twice.
func (r *renderer) findingsRollup() []string {
	out := r.createTable(table{
		name: TableFindings1h, viewTarget: true, cols: findings1hColumns,
		engine: "SummingMergeTree", args: "(n, breaking)",
		partition: "toYYYYMMDD(hour)",
		orderBy:   "(agent, hour, source_kind, finding, with_error_id)",
		ttl:       "hour", ttlDays: r.o.RollupRetentionDays,
	})
	// The example's order: the latest reply, by event_id on a tie.
	order := "(observed_at_ms, " + eventIDExpr + ")"
	// Order: no dependency of its own; sorts before viewIngestProgress,
	// which must follow it (landingViews).
	return append(out, r.view(viewFindings1h, TableFindings1h,
		"SELECT\n"+
			"    agent,\n"+
			"    toStartOfHour(observed_at) AS hour,\n"+
			"    source_kind,\n"+
			"    finding,\n"+
			"    toUInt8(error_id != '') AS with_error_id,\n"+
			"    count() AS n,\n"+
			"    countIf(notEmpty(findings)) AS breaking,\n"+
			"    argMax("+eventIDExpr+", "+order+") AS example_event_id,\n"+
			"    argMax(error_id, "+order+") AS example_error_id\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"ARRAY JOIN arrayPushFront(findings, '') AS finding\n"+
			"WHERE dead = 0\n"+
			"GROUP BY agent, hour, source_kind, finding, with_error_id"))
}

// SQL returns the migrations as one script: each statement ends with ";",
// each migration starts with a comment line.
func SQL(migs []Migration) string {
	var b strings.Builder
	for _, m := range migs {
		fmt.Fprintf(&b, "-- %03d %s (checksum %s)\n", m.Version, m.Name, m.Checksum)
		for _, s := range m.Statements {
			b.WriteString(s)
			b.WriteString(";\n\n")
		}
	}
	return b.String()
}
