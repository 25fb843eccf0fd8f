package schema

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// LookupQuery returns a single query that does what Lookup does, for tools
// that can run only one statement (the support dashboard). Its three
// parameters are all the id. It reads error_lookup by its sorting key (id first), then fetches
// the errors rows by their sorting-key prefix (agent, observed_at, event_id);
// the single-column IN conditions let even 18.16 use the primary key and the
// observed_at min/max of each partition, so neither table is scanned.
//
// Duplicates (a replayed or re-sent event not yet merged away) are removed
// with LIMIT 1 BY, keeping the copy with the latest ingested_at, the row
// ReplacingMergeTree(ingested_at) keeps after a merge. This is exact, like
// FINAL, and on 18.16 about five times faster than FINAL (15-20 ms against 95 ms
// for one id among 2 million rows, clickhouse-client --time, 2-core machine).
//
// The same text runs on one server and on a cluster, where errors and
// error_lookup are Distributed tables: distributed_product_mode = 'local'
// has each shard answer the subqueries from its own error_lookup (a
// Distributed table inside a distributed IN is refused by default). That
// is exact: a row and its lookup entries are written by the same local
// insert, so they are on the same shard. On one server the setting changes
// nothing. Options.Cluster does not change the query; the support
// dashboard's copy (dashboards/lookup.go) works on both.
func LookupQuery(opts Options) string {
	opts = opts.withDefaults()
	lookup := opts.Database + "." + TableErrorLookup
	return fmt.Sprintf("SELECT %s\nFROM %s.%s\n"+
		"WHERE agent IN (SELECT agent FROM %s WHERE id = ?)\n"+
		"  AND observed_at IN (SELECT observed_at FROM %s WHERE id = ?)\n"+
		"  AND (agent, observed_at, event_id) IN (SELECT agent, observed_at, event_id FROM %s WHERE id = ?)\n"+
		"ORDER BY observed_at, agent, event_id, ingested_at DESC\n"+
		"LIMIT 1 BY agent, observed_at, event_id\n"+
		LookupQuerySettings,
		errorsSelect, opts.Database, TableErrors, lookup, lookup, lookup)
}

// LookupQuerySettings ends LookupQuery; a caller that adds a clause (a
// LIMIT) puts it before.
const LookupQuerySettings = "SETTINGS distributed_product_mode = 'local'"

// Lookup returns the errors rows that carry id as their error_id,
// request_id, event_id, message_id, task_id or http_request_id, one row per
// event, oldest first.
//
// It makes two point reads instead of running LookupQuery, whose three
// subqueries each read error_lookup: first the row keys from error_lookup
// by id, then the rows from errors by their full sorting key. Duplicates not
// yet merged away are removed the same way (LIMIT 1 BY, latest ingested_at).
func Lookup(ctx context.Context, conn driver.Conn, opts Options, id string) ([]ErrorRow, error) {
	return LookupAny(ctx, conn, opts, id)
}

// LookupAny is Lookup for a row that carries any of ids. A support lookup
// passes the id as the customer holds it and the keyed hash that replaced
// it if it could not be stored as it is (redact.Redactor.Lookup), so both
// kinds of rows are found. Errors never quote the ids: they may be
// customer values.
func LookupAny(ctx context.Context, conn driver.Conn, opts Options, ids ...string) ([]ErrorRow, error) {
	var want []string
	for _, id := range ids {
		if id != "" {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	opts = opts.withDefaults()
	// On a cluster error_lookup is the Distributed table: an id stored on
	// any shard is found (a point read by id on each).
	lookup := opts.Database + "." + TableErrorLookup
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(want)), ", ") // a slice binds as an array
	args := make([]any, len(want))
	for i, id := range want {
		args[i] = id
	}
	rows, err := conn.Query(ctx, "SELECT DISTINCT agent, observed_at, event_id FROM "+lookup+" WHERE id IN ("+marks+")", args...)
	if err != nil {
		return nil, fmt.Errorf("schema: lookup: %w", err)
	}
	type key struct {
		agent   string
		at      time.Time
		eventID string
	}
	var keys []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.agent, &k.at, &k.eventID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("schema: lookup: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schema: lookup: %w", err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// One id names few events; bound the work for ids that are everywhere
	// (a task with thousands of failed messages).
	if len(keys) > 1000 {
		keys = keys[:1000]
	}
	var cond []string
	args = args[:0]
	for _, k := range keys {
		// A time.Time argument is bound as a parsed string, which keeps
		// 18.16 from using the primary key (25-50 ms instead of 2-4 ms at
		// 10 million rows); Unix seconds through toDateTime do not.
		cond = append(cond, "(agent = ? AND observed_at = toDateTime(?) AND event_id = ?)")
		args = append(args, k.agent, k.at.Unix(), k.eventID)
	}
	q := fmt.Sprintf("SELECT %s\nFROM %s.%s\nWHERE %s\nORDER BY observed_at, agent, event_id, ingested_at DESC\nLIMIT 1 BY agent, observed_at, event_id",
		errorsSelect, opts.Database, TableErrors, strings.Join(cond, " OR "))
	var out []ErrorRow
	if err := conn.Select(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("schema: lookup: %w", err)
	}
	return out, nil
}

// Progress returns, per Kafka partition of topic, the highest offset whose
// block is in ClickHouse. The ingester reads it when it is assigned a
// partition and skips every message at or below it: those are already stored
// (as errors or dead_letter rows) by an insert whose Kafka commit was lost.
//
// It is exact only if, per partition, a batch is inserted after the previous
// batch of that partition succeeded (offsets in order, no holes), which is
// what the ingester guarantees by retrying a failed batch before moving on.
//
// On a cluster it reads the shards that answer (skip_unavailable_shards):
// a partition lives on one shard, so the partitions of a shard that is down
// are missing from the result, as if nothing of them were stored. That is
// safe: their rows go to the same shard, so no insert of them succeeds
// before it is back, and the ingester reads progress again before each
// retry (ingest's dropStored), which then drops what the shard already
// had. Failing instead would keep the ingester from starting at all while
// one shard is down.
func Progress(ctx context.Context, conn driver.Conn, opts Options, topic string) (map[int32]int64, error) {
	opts = opts.withDefaults()
	settings := ""
	if opts.Cluster != "" {
		settings = " SETTINGS skip_unavailable_shards = 1"
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(
		"SELECT kafka_partition, max(max_offset) FROM %s.%s WHERE kafka_topic = ? GROUP BY kafka_partition%s",
		opts.Database, TableIngestProgress, settings), topic)
	if err != nil {
		return nil, fmt.Errorf("schema: progress of %q: %w", topic, err)
	}
	defer rows.Close()
	out := map[int32]int64{}
	for rows.Next() {
		var p int32
		var off int64
		if err := rows.Scan(&p, &off); err != nil {
			return nil, fmt.Errorf("schema: progress of %q: %w", topic, err)
		}
		out[p] = off
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schema: progress of %q: %w", topic, err)
	}
	return out, nil
}

// Dropped names one partition that Retain dropped.
type Dropped struct {
	Table     string
	Partition string
}

// Retain drops whole day partitions older than days from errors,
// dead_letter and error_lookup, and older than max(days,
// opts.RollupRetentionDays) from the rollups (errors_1m, errors_1m_v2,
// outcomes_1m, callers_1m, findings_1h). It is the
// retention of servers without TTL (before 19.6); on newer servers the TTL
// does the same in the background and Retain is a harmless extra. The
// ingester calls it periodically. Partitions are days in the server's time
// zone; "older than days" means before today()-days.
func Retain(ctx context.Context, conn driver.Conn, opts Options, days int) ([]Dropped, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if days < 1 {
		return nil, fmt.Errorf("schema: retain: days must be at least 1, got %d", days)
	}
	opts = opts.withDefaults()
	rollup := max(days, opts.RollupRetentionDays)
	plan := []struct {
		table   string
		days    int
		monthly bool // partitioned by toYYYYMM: drop months wholly past the cutoff
	}{
		{TableErrors, days, false}, {TableDeadLetter, days, false}, {TableErrorLookup, days, true},
		{TableErrors1m, rollup, false}, {TableErrors1mV2, rollup, false}, {TableOutcomes1m, rollup, false},
		{TableCallers1m, rollup, false}, {TableFindings1h, rollup, false},
		{TableErrorGroups1h, rollup, true},
	}
	parts := "system.parts"
	if opts.Cluster != "" {
		parts = fmt.Sprintf("cluster('%s', system, parts)", opts.Cluster)
	}
	var dropped []Dropped
	for _, p := range plan {
		local := p.table
		if opts.Cluster != "" {
			local += "_local"
		}
		cutoff := fmt.Sprintf("toYYYYMMDD(today() - %d)", p.days)
		if p.monthly {
			cutoff = fmt.Sprintf("toYYYYMM(today() - %d)", p.days)
		}
		rows, err := conn.Query(ctx, fmt.Sprintf(
			"SELECT DISTINCT partition FROM %s WHERE database = ? AND table = ? AND active AND toUInt32OrZero(partition) < %s ORDER BY partition",
			parts, cutoff), opts.Database, local)
		if err != nil {
			return dropped, fmt.Errorf("schema: retain %s: %w", p.table, err)
		}
		var old []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return dropped, fmt.Errorf("schema: retain %s: %w", p.table, err)
			}
			old = append(old, s)
		}
		rows.Close()
		for _, part := range old {
			if !isDigits(part) || (p.monthly && len(part) != 6) || (!p.monthly && len(part) != 8) {
				continue // not a partition of ours: never drop it
			}
			q := fmt.Sprintf("ALTER TABLE %s.%s%s DROP PARTITION %s", opts.Database, local, onCluster(opts), part)
			if err := conn.Exec(ctx, q); err != nil {
				return dropped, fmt.Errorf("schema: retain %s: drop partition %s: %w", p.table, part, err)
			}
			dropped = append(dropped, Dropped{p.table, part})
		}
	}
	return dropped, nil
}

func onCluster(o Options) string {
	if o.Cluster != "" {
		return " ON CLUSTER " + o.Cluster
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// TraceRow is one row of error_traces (migration 009): the trace context,
// origin and inferred fields of a stored error.
type TraceRow struct {
	EventID    string   `ch:"event_id"`
	KafkaIndex uint32   `ch:"kafka_index"`
	Origin     string   `ch:"origin"`
	TraceID    string   `ch:"trace_id"`
	SpanID     string   `ch:"span_id"`
	Inferred   []string `ch:"inferred"`
}

// traceSelect is TraceRow's column list, in its field order.
var traceSelect = func() string {
	t := reflect.TypeFor[TraceRow]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Tag.Get("ch")
	}
	return strings.Join(names, ", ")
}()

// Traces returns the error_traces rows of rows, by event_id, read by their
// full sorting key like LookupAny reads errors. A row stored before
// migration 009 has none.
func Traces(ctx context.Context, conn driver.Conn, opts Options, rows []ErrorRow) (map[string]TraceRow, error) {
	out := map[string]TraceRow{}
	if len(rows) == 0 {
		return out, nil
	}
	opts = opts.withDefaults()
	if len(rows) > 1000 {
		rows = rows[:1000]
	}
	cond := make([]string, 0, len(rows))
	args := make([]any, 0, 3*len(rows))
	for _, r := range rows {
		cond = append(cond, "(agent = ? AND observed_at = toDateTime(?) AND event_id = ?)")
		args = append(args, r.Agent, r.ObservedAt.Unix(), r.EventID)
	}
	q := fmt.Sprintf("SELECT %s\nFROM %s.%s\nWHERE %s\n"+
		"ORDER BY observed_at, agent, event_id, ingested_at DESC\nLIMIT 1 BY agent, observed_at, event_id",
		traceSelect, opts.Database, TableErrorTraces, strings.Join(cond, " OR "))
	var got []TraceRow
	if err := conn.Select(ctx, &got, q, args...); err != nil {
		return nil, fmt.Errorf("schema: traces: %w", err)
	}
	for _, t := range got {
		out[t.EventID] = t
	}
	return out, nil
}
