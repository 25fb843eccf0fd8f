package dashboards_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/dashboards"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// TestSQLOnClickHouse runs every ClickHouse query of every dashboard, with
// Grafana's variables and the plugin's macros expanded, on the real local
// server (18.16 on the development machines) against the schema that
// schema.Migrate creates in a throwaway database with a few landing rows.
// With the plain values every query must return rows; with the quoted values
// (quotes in the ids, an empty agent) every query must run and the lookups
// must find exactly the row with that id.
func TestSQLOnClickHouse(t *testing.T) {
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        strings.Split(addr, ","),
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: "default", Username: "default"},
		DialTimeout: testenv.CHDialTimeout,
		ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	v, err := schema.DetectVersion(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	opts := schema.Options{Database: fmt.Sprintf("errtrail_dash_test_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)}
	t.Cleanup(func() {
		if err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database); err != nil {
			t.Errorf("drop %s: %v", opts.Database, err)
		}
		conn.Close()
	})
	t.Logf("ClickHouse %s at %s, database %s", v, addr, opts.Database)
	if _, err := schema.Migrate(ctx, conn, opts); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	insertLanding(t, ctx, conn, opts, now.Add(-5*time.Minute), testRows(now))
	// The incidents the agent dashboard marks (check_chdb.py inserts the
	// same): one overload of agent-a written open then ended, one open
	// runaway.
	ago := func(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }
	if err := incidents.Write(ctx, conn, opts.Database, []incidents.Incident{
		{Kind: incidents.Overload, Agent: "agent-a", Start: ago(1200), LastSeen: ago(1100), Version: 1},
		{Kind: incidents.Overload, Agent: "agent-a", Start: ago(1200), LastSeen: ago(1000), End: ago(900), Version: 2},
		{Kind: incidents.Runaway, Agent: "agent-a", Caller: "c2", Start: ago(600), LastSeen: ago(60), Version: 3},
	}); err != nil {
		t.Fatal(err)
	}

	sets := dashboards.TestValues(opts.Database)
	qs, err := dashboards.ExpandedQueries(sets)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		name := q.Dashboard + "/" + q.Where + "/" + q.Values
		t.Run(name, func(t *testing.T) {
			cols, rows, err := run(ctx, conn, q.SQL)
			if err != nil {
				t.Fatalf("%v\n%s", err, q.SQL)
			}
			if q.Values == "plain" && len(rows) == 0 {
				t.Errorf("no rows with the plain values; the test data should give some\n%s", q.SQL)
			}
			if q.Dashboard != dashboards.UIDLookup {
				return
			}
			if !slices.Equal(cols, dashboards.RecordColumns()) {
				t.Errorf("lookup columns %v; want every field of the record %v", cols, dashboards.RecordColumns())
			}
			idCol := "error_id"
			if strings.Contains(q.Where, "request_id") {
				idCol = "request_id"
			}
			want := varsOf(sets, q.Values)[idCol]
			i := slices.Index(cols, idCol)
			if len(rows) != 1 || rows[0][i] != want {
				t.Errorf("lookup of %s %q found %d rows %v; want exactly the one with that id", idCol, want, len(rows), rows)
			}
		})
	}
}

func varsOf(sets []dashboards.Values, name string) map[string]string {
	for _, s := range sets {
		if s.Name == name {
			return s.Vars
		}
	}
	return nil
}

// testRows gives every panel something to show: agent-a with overload,
// quota (with and without a limit name), internal and untyped replies, a
// gateway's rewrite, retries, findings, the ids the lookup value sets ask
// for, and one dead letter.
func testRows(now time.Time) []map[string]any {
	at := now.Add(-10 * time.Minute)
	var rows []map[string]any
	add := func(r map[string]any) {
		r["observed_at"] = at
		r["observed_at_ms"] = uint64(at.UnixMilli())
		r["kafka_offset"] = int64(len(rows) + 1)
		rows = append(rows, r)
	}
	add(map[string]any{"agent": "agent-a", "caller": "c1", "kind": "overload", "http_status": uint16(503), "typed": uint8(1), "error_id": "err-0001", "request_id": "req-0001", "event_id": "e1"})
	add(map[string]any{"agent": "agent-a", "caller": "c2", "kind": "quota", "http_status": uint16(429), "typed": uint8(1), "limit_name": "rpm", "retry_after_ms": int64(2000), "findings": []string{"retry_after_header_missing"}, "event_id": "e2"})
	add(map[string]any{"agent": "agent-a", "caller": "c2", "kind": "quota", "http_status": uint16(429), "typed": uint8(1), "attempt": uint16(2), "findings": []string{"retry_delay_missing"}, "event_id": "e3"})
	add(map[string]any{"agent": "agent-a", "caller": "o'brien", "kind": "unknown", "http_status": uint16(502), "source_kind": "gateway", "findings": []string{"status_body_mismatch", "untyped_5xx"}, "error_id": "it's", "event_id": "e4"})
	add(map[string]any{"agent": "agent-b", "caller": "c1", "kind": "internal", "http_status": uint16(500), "request_id": "x' OR '1'='1", "event_id": "e5"})
	add(map[string]any{"dead": uint8(1), "dl_reason": "invalid_json", "dl_error": "offset 3: unexpected end", "raw": "{\"v\":", "event_id": ""})
	return rows
}

func insertLanding(t *testing.T, ctx context.Context, conn driver.Conn, opts schema.Options, now time.Time, rows []map[string]any) {
	t.Helper()
	b, err := conn.PrepareBatch(ctx, schema.LandingInsert(opts))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		vals := make([]any, len(schema.LandingColumns))
		for i, c := range schema.LandingColumns {
			v, ok := r[c.Name]
			switch {
			case ok:
			case c.Name == "ingested_at":
				v = now
			case c.Name == "kafka_topic":
				v = "errtrail.replies"
			case c.Name == "source_kind":
				v = "agent"
			case c.Name == "attempt":
				v = uint16(1)
			case c.Name == "retryable":
				v = int8(-1)
			case c.Name == "retry_after_ms":
				v = int64(-1)
			case c.Go.Kind() == reflect.Slice:
				v = []string{}
			default:
				v = reflect.Zero(c.Go).Interface()
			}
			if reflect.TypeOf(v) != c.Go {
				t.Fatalf("column %s: test value of type %T; want %s", c.Name, v, c.Go)
			}
			vals[i] = v
		}
		if err := b.Append(vals...); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
}

// run returns the column names and the rows (values as scanned).
func run(ctx context.Context, conn driver.Conn, sql string) ([]string, [][]any, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	types := rows.ColumnTypes()
	var out [][]any
	for rows.Next() {
		ptrs := make([]any, len(types))
		for i, ct := range types {
			ptrs[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		vals := make([]any, len(ptrs))
		for i, p := range ptrs {
			vals[i] = reflect.ValueOf(p).Elem().Interface()
		}
		out = append(out, vals)
	}
	return rows.Columns(), out, rows.Err()
}
