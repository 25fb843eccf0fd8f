package schema

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
)

var dbSeq atomic.Int64

// openDB connects to the test server (internal/testenv: skipped outside CI,
// failed in CI when it is missing) and returns Options naming a fresh
// database that is dropped when the test ends.
func openDB(t *testing.T) (driver.Conn, Options, ServerVersion) {
	t.Helper()
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        strings.Split(addr, ","),
		DialTimeout: testenv.CHDialTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := DetectVersion(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Database: fmt.Sprintf("errtrail_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, dbSeq.Add(1))}
	t.Cleanup(func() {
		if err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database); err != nil {
			t.Errorf("drop %s: %v", opts.Database, err)
		}
		conn.Close()
	})
	t.Logf("ClickHouse %s at %s, database %s", v, addr, opts.Database)
	return conn, opts, v
}

func migrate(t *testing.T, conn driver.Conn, opts Options) Result {
	t.Helper()
	res, err := Migrate(context.Background(), conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// row is one landing row; unset columns take the defaults below.
type row map[string]any

func landingDefaults(now time.Time) row {
	return row{
		"dead": uint8(0), "event_id": "", "observed_at": now, "observed_at_ms": uint64(now.UnixMilli()),
		"ingested_at": now, "kafka_topic": "t", "kafka_partition": int32(0), "kafka_offset": int64(0),
		"source_kind": "agent", "source_id": "", "agent": "", "endpoint": "", "caller": "", "method": "SendMessage",
		"attempt": uint16(1), "http_request_id": "", "jsonrpc_id": "", "message_id": "", "task_id": "",
		"idempotency_key_hash": uint64(0), "protocol": "a2a", "binding": "jsonrpc", "envelope": "jsonrpc_error",
		"http_status": uint16(0), "grpc_status": "", "jsonrpc_code": int32(0), "code": "", "reason": "", "domain": "",
		"kind": "unknown", "typed": uint8(0), "retryable": int8(-1), "retryable_source": "", "retry_after_ms": int64(-1),
		"retry_after_source": "", "limit_name": "", "scope": "", "error_id": "", "request_id": "", "message": "",
		"violation_fields": []string{}, "violation_descriptions": []string{}, "findings": []string{},
		"dl_reason": "", "dl_error": "", "raw": "", "source_version": "",
		"trace_id": "", "span_id": "", "origin": "event", "inferred": []string{}, "kafka_index": uint32(0),
	}
}

// insertLanding sends rows as ONE batch, the way the ingester does: built
// column by column from LandingColumns (whose Go types it checks), inserted
// with the explicit column list of LandingInsert.
func insertLanding(t *testing.T, conn driver.Conn, opts Options, now time.Time, rows ...row) error {
	t.Helper()
	return insertLandingColumns(t, conn, opts, LandingColumns, now, rows...)
}

// insertLandingColumns is insertLanding naming only cols (an older
// ingester's insert).
func insertLandingColumns(t *testing.T, conn driver.Conn, opts Options, cols []Column, now time.Time, rows ...row) error {
	t.Helper()
	ctx := context.Background()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+opts.Database+"."+TableLanding+" ("+strings.Join(names, ", ")+")")
	if err != nil {
		return err
	}
	defer batch.Abort()
	for i, c := range cols {
		col := reflect.MakeSlice(reflect.SliceOf(c.Go), 0, len(rows))
		for _, r := range rows {
			v, ok := r[c.Name]
			if !ok {
				v = landingDefaults(now)[c.Name]
			}
			rv := reflect.ValueOf(v)
			if rv.Type() != c.Go {
				t.Fatalf("column %s: test value has Go type %s; LandingColumns says %s", c.Name, rv.Type(), c.Go)
			}
			col = reflect.Append(col, rv)
		}
		if err := batch.Column(i).Append(col.Interface()); err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return batch.Send()
}

func count(t *testing.T, conn driver.Conn, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestMigrateIsIdempotent(t *testing.T) {
	conn, opts, v := openDB(t)
	first := migrate(t, conn, opts)
	if fmt.Sprint(first.Applied) != "[1 2 3 4 5 6 7 8 9 10]" || first.Server != v {
		t.Fatalf("first Migrate: %+v; want versions 1-10 applied", first)
	}
	second := migrate(t, conn, opts)
	if len(second.Applied) != 0 || fmt.Sprint(second.Current) != "[1 2 3 4 5 6 7 8 9 10]" || len(second.Repaired) != 0 {
		t.Fatalf("second Migrate: %+v; want nothing applied or repaired, 1-10 current", second)
	}
	// Run every statement once more by hand, in order: IF NOT EXISTS makes
	// each a no-op (an ADD COLUMN on 18.16, which has no IF NOT EXISTS
	// there, as Migrate runs it), and mv4_errors_1m, a Null table since 010
	// (so 003's statement finds it), is dropped and created again by 010's.
	for _, m := range Render(v, opts) {
		for _, st := range m.Statements {
			if err := execStatement(context.Background(), conn, st); err != nil {
				t.Fatalf("re-running migration %03d: %v\n%s", m.Version, err, st)
			}
		}
	}
	if n := count(t, conn, "SELECT count() FROM "+opts.Database+".schema_migrations FINAL"); n != 10 {
		t.Errorf("schema_migrations has %d rows; want 10", n)
	}
	// mv1_errors and mv4_errors_1m are Null tables now, no longer views:
	// migrations 008 and 010 replaced them (mv1_errors_v8, mv4_errors_1m_v2)
	// and keep their names taken.
	want := []string{"alerter_minutes", "callers_1m", "dead_letter", "error_groups", "error_groups_1h", "error_lookup", "error_traces", "errors", "errors_1m", "errors_1m_v2", "findings_1h", "incidents", "ingest_progress", "landing",
		"mv1_errors", "mv1_errors_v8", "mv1t_error_traces", "mv2_dead_letter", "mv3_error_lookup", "mv3t_trace_lookup", "mv4_errors_1m", "mv4_errors_1m_v2", "mv5_outcomes_1m", "mv6_callers_1m",
		"mv7_findings_1h", "mv8_error_groups", "mv8_error_groups_1h", "mv9_ingest_progress", "outcomes_1m", "schema_migrations"}
	var got []string
	rows, err := conn.Query(context.Background(), "SELECT name FROM system.tables WHERE database = ? ORDER BY name", opts.Database)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	rows.Close()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tables:\n got %v\nwant %v", got, want)
	}
}

// TestMigrateRecreatesMissingObjects: a table and a view dropped by hand
// (what a node added to a cluster later lacks) are created again by the
// next Migrate, which reports their migration as repaired and records
// nothing new; a Migrate after that repairs nothing. The rows of the
// tables that stayed are kept.
func TestMigrateRecreatesMissingObjects(t *testing.T) {
	conn, opts, _ := openDB(t)
	migrate(t, conn, opts)
	now := time.Now()
	if err := insertLanding(t, conn, opts, now, landingDefaults(now)); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"DROP TABLE " + opts.Database + ".mv6_callers_1m", "DROP TABLE " + opts.Database + ".callers_1m"} {
		if err := conn.Exec(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	res := migrate(t, conn, opts)
	if fmt.Sprint(res.Repaired) != "[5]" || len(res.Applied) != 0 {
		t.Fatalf("Migrate after dropping callers_1m and its view: %+v; want 5 repaired, nothing applied", res)
	}
	if n := count(t, conn, "SELECT count() FROM system.tables WHERE database = ? AND name IN ('callers_1m', 'mv6_callers_1m')", opts.Database); n != 2 {
		t.Errorf("%d of callers_1m and its view exist after the repair; want 2", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+opts.Database+".errors"); n != 1 {
		t.Errorf("errors holds %d rows after the repair; want the 1 stored before", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+opts.Database+".schema_migrations FINAL"); n != 10 {
		t.Errorf("schema_migrations has %d rows; want 10 (a repair records nothing)", n)
	}
	if again := migrate(t, conn, opts); len(again.Repaired) != 0 {
		t.Errorf("a second Migrate repaired %v; want nothing", again.Repaired)
	}
	if err := insertLanding(t, conn, opts, now, landingDefaults(now)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT toUInt64(sum(n)) FROM "+opts.Database+".callers_1m"); n != 1 {
		t.Errorf("the re-created view fed callers_1m %d rows; want 1", n)
	}
}

func TestMigrateChecksums(t *testing.T) {
	conn, opts, v := openDB(t)
	migrate(t, conn, opts)
	ctx := context.Background()
	ins := "INSERT INTO " + opts.Database + ".schema_migrations (version, name, checksum, server_version, applied_at) SELECT toUInt32(?), ?, ?, ?, now() + 3600"
	// Recorded on an older server with another rendering: drift, not an error.
	if err := conn.Exec(ctx, ins, uint32(3), "x", "0000", "18.1.0"); err != nil {
		t.Fatal(err)
	}
	res := migrate(t, conn, opts)
	if fmt.Sprint(res.Drifted) != "[3]" {
		t.Errorf("after a server change: %+v; want version 3 drifted", res)
	}
	// Recorded on this server with another checksum: the migration was edited.
	if err := conn.Exec(ctx, ins, uint32(2), "x", "0000", v.String()); err != nil {
		t.Fatal(err)
	}
	_, err := Migrate(ctx, conn, opts)
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Version != 2 {
		t.Fatalf("Migrate after an edit: %v; want a ChecksumError for version 2", err)
	}
}

func TestViewsFillEveryTable(t *testing.T) {
	conn, opts, _ := openDB(t)
	migrate(t, conn, opts)
	now := time.Now().Truncate(time.Second)
	quota := row{"event_id": "e1", "agent": "a1", "caller": "c1", "kind": "quota", "typed": uint8(1),
		"http_status": uint16(429), "code": "RESOURCE_EXHAUSTED", "reason": "RATE_LIMIT_EXCEEDED",
		"limit_name": "per_caller", "retry_after_ms": int64(12000), "error_id": "E1", "request_id": "R1",
		"kafka_offset": int64(10), "findings": []string{"retry_after_ignored"},
		"violation_fields": []string{"message.parts"}, "violation_descriptions": []string{"must not be empty"}}
	resent := row{}
	for k, v := range quota {
		resent[k] = v
	}
	resent["kafka_offset"] = int64(11) // the producer re-sent e1
	resent["ingested_at"] = now.Add(time.Second)
	internal := row{"agent": "a2", "caller": "c2", "kind": "internal", "http_status": uint16(500),
		"kafka_partition": int32(1), "kafka_offset": int64(5), "message_id": "M3"}
	dead := row{"dead": uint8(1), "kafka_partition": int32(1), "kafka_offset": int64(6),
		"dl_reason": "bad_json", "dl_error": "offset 3: invalid character 'o'", "raw": "{oops"}
	if err := insertLanding(t, conn, opts, now, quota, resent, internal, dead); err != nil {
		t.Fatal(err)
	}
	db := opts.Database
	if n := count(t, conn, "SELECT count() FROM "+db+".errors"); n < 2 || n > 3 {
		t.Errorf("errors: %d rows; want 3 (or 2 if the server collapsed them on insert)", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors FINAL"); n != 2 {
		t.Errorf("errors FINAL: %d rows; want 2 (e1 collapsed)", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors FINAL WHERE event_id = 'kafka:t/1/5'"); n != 1 {
		t.Errorf("the event without event_id is not stored as kafka:t/1/5")
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".dead_letter WHERE dl_reason = 'bad_json' AND raw = '{oops' AND kafka_offset = 6"); n != 1 {
		t.Errorf("dead_letter: %d matching rows; want 1", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors WHERE kafka_offset = 6"); n != 0 {
		t.Errorf("a dead-letter row reached errors")
	}

	ctx := context.Background()
	for _, c := range []struct{ id, event, kind string }{
		{"E1", "e1", "quota"}, {"R1", "e1", "quota"}, {"e1", "e1", "quota"},
		{"M3", "kafka:t/1/5", "internal"}, {"kafka:t/1/5", "kafka:t/1/5", "internal"},
	} {
		got, err := Lookup(ctx, conn, opts, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].EventID != c.event || got[0].Kind != c.kind {
			t.Errorf("Lookup(%s) = %+v; want one %s row of event %s", c.id, got, c.kind, c.event)
			continue
		}
		if c.id == "E1" {
			r := got[0]
			if r.IngestedAt.Unix() != now.Add(time.Second).Unix() || r.KafkaOffset != 11 || r.RetryAfterMS != 12000 ||
				len(r.ViolationFields) != 1 || r.Findings[0] != "retry_after_ignored" || r.HTTPStatus != 429 {
				t.Errorf("Lookup(E1) did not return the latest copy with all fields: %+v", r)
			}
		}
	}
	if got, err := Lookup(ctx, conn, opts, "nope"); err != nil || len(got) != 0 {
		t.Errorf("Lookup(nope) = %v, %v; want nothing", got, err)
	}

	var n, withRA, untyped uint64
	var raSum int64
	if err := conn.QueryRow(ctx, "SELECT sum(n), sum(with_retry_after), sum(retry_after_ms_sum), sum(untyped_5xx) FROM "+db+
		".errors_1m_v2 WHERE agent = 'a1' AND kind = 'quota' AND limit_name = 'per_caller' AND minute = toStartOfMinute(?)", now).
		Scan(&n, &withRA, &raSum, &untyped); err != nil {
		t.Fatal(err)
	}
	if n != 2 || withRA != 2 || raSum != 24000 || untyped != 0 {
		t.Errorf("errors_1m_v2 for a1/quota: n=%d with_retry_after=%d retry_after_ms_sum=%d untyped_5xx=%d; want 2 2 24000 0", n, withRA, raSum, untyped)
	}
	if u := count(t, conn, "SELECT sum(untyped_5xx) FROM "+db+".errors_1m_v2 WHERE agent = 'a2'"); u != 1 {
		t.Errorf("errors_1m_v2 untyped_5xx for a2 = %d; want 1", u)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors_1m"); n != 0 {
		t.Errorf("errors_1m got %d rows on a database migrated to 010; want none (its view is gone)", n)
	}
	if a := count(t, conn, "SELECT sum(n) FROM "+db+".outcomes_1m WHERE outcome = 'accepted' AND kafka_topic = 't'"); a != 3 {
		t.Errorf("outcomes_1m accepted = %d; want 3", a)
	}
	if d := count(t, conn, "SELECT sum(n) FROM "+db+".outcomes_1m WHERE outcome = 'dead_letter' AND dl_reason = 'bad_json'"); d != 1 {
		t.Errorf("outcomes_1m dead_letter/bad_json = %d; want 1", d)
	}
	p, err := Progress(ctx, conn, opts, "t")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p) != "map[0:11 1:6]" {
		t.Errorf("Progress = %v; want map[0:11 1:6]", p)
	}
	// A later batch moves progress; the older, smaller row is replaced.
	if err := insertLanding(t, conn, opts, now, row{"kafka_offset": int64(12), "agent": "a1"}); err != nil {
		t.Fatal(err)
	}
	if p, err := Progress(ctx, conn, opts, "t"); err != nil || p[0] != 12 {
		t.Errorf("Progress after offset 12 = %v, %v", p, err)
	}
	if p, err := Progress(ctx, conn, opts, "other"); err != nil || len(p) != 0 {
		t.Errorf("Progress of an unknown topic = %v, %v; want empty, no error", p, err)
	}
}

// Regression test for the exactly-once argument on servers without insert
// deduplication: a failure in one view must never leave ingest_progress ahead
// of the data. ClickHouse 18.16 pushes a block to a table's views one by
// one in name order, which is why the progress view is mv9_: here a view
// named mv8_ fails, errors (mv1_) has the row and progress has not moved, so
// a replay writes the row again (collapsed by FINAL) instead of skipping it.
func TestFailingViewLeavesProgressBehind(t *testing.T) {
	conn, opts, v := openDB(t)
	if FeaturesOf(v).InsertDedup {
		t.Skip("views run in no fixed order on this server; scripts/check-modern-sql tests the token retry instead")
	}
	migrate(t, conn, opts)
	ctx := context.Background()
	db := opts.Database
	for _, st := range []string{
		"CREATE TABLE " + db + ".scratch (x UInt8) ENGINE = MergeTree ORDER BY x",
		"CREATE MATERIALIZED VIEW " + db + ".mv8_fail TO " + db + ".scratch AS SELECT throwIf(agent = 'boom') AS x FROM " + db + ".landing",
	} {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if err := insertLanding(t, conn, opts, now, row{"event_id": "b1", "agent": "boom", "kafka_partition": int32(2), "kafka_offset": int64(100)}); err == nil {
		t.Fatal("the insert succeeded; want the failing view to fail it")
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors WHERE agent = 'boom'"); n != 1 {
		t.Errorf("errors has %d boom rows; want 1 (mv1_errors runs before mv8_fail)", n)
	}
	if p, err := Progress(ctx, conn, opts, "t"); err != nil || len(p) != 0 {
		t.Errorf("Progress = %v, %v after a failed insert; want nothing, no error", p, err)
	}
	// The ingester retries (or replays) the batch once the fault is gone.
	if err := conn.Exec(ctx, "DROP TABLE "+db+".mv8_fail"); err != nil {
		t.Fatal(err)
	}
	if err := insertLanding(t, conn, opts, now, row{"event_id": "b1", "agent": "boom", "kafka_partition": int32(2), "kafka_offset": int64(100)}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors FINAL WHERE agent = 'boom'"); n != 1 {
		t.Errorf("errors FINAL has %d boom rows after the retry; want 1", n)
	}
	if p, _ := Progress(ctx, conn, opts, "t"); p[2] != 100 {
		t.Errorf("Progress after the retry = %v; want partition 2 at 100", p)
	}
}

func TestRetainDropsOldPartitions(t *testing.T) {
	conn, opts, _ := openDB(t)
	migrate(t, conn, opts)
	ctx := context.Background()
	db := opts.Database
	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	ancient := now.Add(-120 * 24 * time.Hour)
	if err := insertLanding(t, conn, opts, now,
		row{"event_id": "new", "agent": "a", "error_id": "EN", "kafka_offset": int64(1)},
		row{"event_id": "old", "agent": "a", "error_id": "EO", "observed_at": old, "kafka_offset": int64(2)},
		row{"event_id": "anc", "agent": "a", "observed_at": ancient, "kafka_offset": int64(3)},
		row{"dead": uint8(1), "kafka_offset": int64(4), "dl_reason": "bad_json"},
		row{"dead": uint8(1), "kafka_offset": int64(5), "dl_reason": "bad_json", "ingested_at": old},
	); err != nil {
		t.Fatal(err)
	}
	dropped, err := Retain(ctx, conn, opts, 30)
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]int{}
	for _, d := range dropped {
		byTable[d.Table]++
	}
	// errors loses the 40- and 120-day-old days, dead_letter its 40-day-old
	// day; errors_1m_v2 (90 days by default) only the 120-day-old day;
	// error_lookup, partitioned by month, only the month that lies wholly
	// before the cutoff (the 40-day-old row shares the cutoff's month).
	cutoffMonth := now.UTC().AddDate(0, 0, -30).Format("200601")
	months := map[string]bool{}
	for _, at := range []time.Time{old, ancient} {
		if m := at.UTC().Format("200601"); m < cutoffMonth {
			months[m] = true
		}
	}
	wantLookup := len(months)
	// error_groups_1h (by month, 90 days): the months wholly before the
	// rollup cutoff.
	groupMonths := map[string]bool{}
	for _, at := range []time.Time{old, ancient} {
		if m := at.UTC().Format("200601"); m < now.UTC().AddDate(0, 0, -DefaultRollupRetentionDays).Format("200601") {
			groupMonths[m] = true
		}
	}
	want := map[string]int{TableErrors: 2, TableErrorLookup: wantLookup, TableDeadLetter: 1, TableErrors1mV2: 1,
		TableCallers1m: 1, TableFindings1h: 1}
	if len(groupMonths) > 0 {
		want[TableErrorGroups1h] = len(groupMonths)
	}
	if fmt.Sprint(byTable) != fmt.Sprint(want) {
		t.Errorf("Retain dropped %v; want %v", byTable, want)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".errors"); n != 1 {
		t.Errorf("errors keeps %d rows; want 1", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".dead_letter"); n != 1 {
		t.Errorf("dead_letter keeps %d rows; want 1", n)
	}
	if n := count(t, conn, "SELECT sum(n) FROM "+db+".errors_1m_v2"); n != 2 {
		t.Errorf("errors_1m_v2 keeps %d; want 2 (new + 40 days old)", n)
	}
	for rollup, col := range map[string]string{TableCallers1m: "minute", TableFindings1h: "hour"} {
		if n := count(t, conn, "SELECT count() FROM "+db+"."+rollup+" WHERE toDate("+col+") < today() - 90"); n != 0 {
			t.Errorf("%s keeps %d rows older than the rollup retention", rollup, n)
		}
		if n := count(t, conn, "SELECT count() FROM "+db+"."+rollup); n == 0 {
			t.Errorf("%s lost its recent rows too", rollup)
		}
	}
	if got, err := Lookup(ctx, conn, opts, "EO"); err != nil || len(got) != 0 {
		t.Errorf("Lookup of a dropped error = %v, %v; want nothing, no error", got, err)
	}
	if got, _ := Lookup(ctx, conn, opts, "EN"); len(got) != 1 {
		t.Errorf("Lookup of a kept error finds %d rows", len(got))
	}
	if p, _ := Progress(ctx, conn, opts, "t"); p[0] != 5 {
		t.Errorf("Retain touched ingest_progress: %v", p)
	}
	again, err := Retain(ctx, conn, opts, 30)
	if err != nil || len(again) != 0 {
		t.Errorf("second Retain = %v, %v; want nothing to drop", again, err)
	}
	if _, err := Retain(ctx, conn, opts, 0); err == nil {
		t.Error("Retain(0 days) succeeded; want an error")
	}
}

// findings_1h (migration 006): per agent, hour, observer kind and finding,
// the replies that broke it, with the empty finding counting every reply; dead
// letters are not replies, and the example ids are those of a reply that
// broke the rule.
func TestFindings1hCountsRules(t *testing.T) {
	conn, opts, _ := openDB(t)
	migrate(t, conn, opts)
	now := time.Now().Truncate(time.Second)
	err := insertLanding(t, conn, opts, now,
		row{"event_id": "e1", "agent": "a1", "findings": []string{"untyped_5xx", "body_missing"}, "kafka_offset": int64(1)},
		row{"event_id": "e2", "agent": "a1", "findings": []string{"untyped_5xx"}, "error_id": "E2", "kafka_offset": int64(2)},
		row{"event_id": "e3", "agent": "a1", "kafka_offset": int64(3)},
		row{"event_id": "g1", "agent": "a1", "source_kind": "gateway", "findings": []string{"body_missing"}, "kafka_offset": int64(4)},
		row{"dead": uint8(1), "agent": "a1", "findings": []string{"untyped_5xx"}, "kafka_offset": int64(5)},
	)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ source, finding string }
	type val struct {
		n, breaking uint64
		ids         []string
	}
	got := map[key]val{}
	rows, err := conn.Query(context.Background(), "SELECT source_kind, finding, sum(n), sum(breaking), groupArray(concat(example_event_id, '/', example_error_id)) FROM "+
		opts.Database+".findings_1h WHERE agent = 'a1' AND hour = toStartOfHour(toDateTime(?)) GROUP BY source_kind, finding", now.Unix())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k key
		var v val
		if err := rows.Scan(&k.source, &k.finding, &v.n, &v.breaking, &v.ids); err != nil {
			t.Fatal(err)
		}
		got[k] = v
	}
	rows.Close()
	want := map[key]val{
		{"agent", ""}:               {3, 2, nil},
		{"agent", "untyped_5xx"}:    {2, 2, []string{"e1/", "e2/E2"}}, // with and without error_id are kept apart
		{"agent", "body_missing"}:   {1, 1, []string{"e1/"}},
		{"gateway", ""}:             {1, 1, nil},
		{"gateway", "body_missing"}: {1, 1, []string{"g1/"}},
	}
	if len(got) != len(want) {
		t.Errorf("findings_1h rows %+v; want %+v", got, want)
	}
	for k, w := range want {
		g := got[k]
		slices.Sort(g.ids)
		if g.n != w.n || g.breaking != w.breaking || (w.ids != nil && !slices.Equal(g.ids, w.ids)) {
			t.Errorf("%v: n %d breaking %d examples %v; want %d %d %v", k, g.n, g.breaking, g.ids, w.n, w.breaking, w.ids)
		}
	}
}
