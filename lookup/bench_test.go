package lookup

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// Fill inserts n error rows shaped like real ones into landing with one
// INSERT … SELECT FROM numbers(n), so the materialized views fill errors,
// error_lookup (six ids a row), errors_1m_v2 and callers_1m as they do for
// ingest's batches. Rows are spread evenly over span before end: 100
// agents, 1,000 callers, three attempts per message id, every kind, a
// delay on quota and overload. Row i has event_id "bench-<i>", error_id
// "err_bench_<i>", request_id "req_bench_<i>", message_id "bm-<i/3>" and
// task_id "bt-<i/30>" (BenchID gives them). It is for the benchmark here and
// for the 10-million-row measurement (ERRTRAIL_BENCH_ROWS=10000000).
func Fill(ctx context.Context, conn driver.Conn, opts schema.Options, n int64, end time.Time, span time.Duration) error {
	const chunk = 1_000_000 // one insert per chunk keeps the server's memory bounded
	startS := end.Add(-span).Unix()
	spanMS := span.Milliseconds()
	for lo := int64(0); lo < n; lo += chunk {
		cnt := min(chunk, n-lo)
		// Every expression is cast to the landing column's type.
		sel := []string{
			"toUInt8(0)",                         // dead
			"concat('bench-', toString(i))",      // event_id
			"toDateTime(intDiv(ms, 1000))",       // observed_at
			"toUInt64(ms)",                       // observed_at_ms
			"now()",                              // ingested_at
			"'errtrail.replies'",                 // kafka_topic
			"toInt32(i % 12)",                    // kafka_partition
			"toInt64(i)",                         // kafka_offset
			"if(i % 10 = 0, 'gateway', 'agent')", // source_kind
			"''",                                 // source_id
			"concat('agent-', toString(i % 100))",
			"concat('https://agent-', toString(i % 100), '.example/a2a')",
			"concat('caller-', toString(i % 1000))",
			"'SendMessage'",
			"toUInt16(i % 3 + 1)", // attempt
			"concat('hreq_bench_', toString(i))",
			"toString(i % 50)", // jsonrpc_id: small, reused
			"concat('bm-', toString(intDiv(i, 3)))",
			"concat('bt-', toString(intDiv(i, 30)))",
			"toUInt64(if(i % 4 = 0, cityHash64(intDiv(i, 3)), 0))", // idempotency_key_hash
			"arrayElement(['a2a', 'mcp', 'aap', 'agentrelay'], i % 4 + 1)",
			"'http'", "'rpc_status'",
			"toUInt16(arrayElement([429, 503, 400, 401, 404, 409, 501, 500, 502], k))",
			"arrayElement(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'ALREADY_EXISTS', 'UNIMPLEMENTED', 'INTERNAL', ''], k)",
			"toInt32(0)",
			"arrayElement(['RATE_LIMIT_EXCEEDED', 'AGENT_OVERLOADED', 'INVALID_ARGUMENT', '', 'TASK_NOT_FOUND', '', '', '', ''], k)",
			"arrayElement(['RATE_LIMIT_EXCEEDED', 'AGENT_OVERLOADED', '', '', 'TASK_NOT_FOUND', '', '', '', ''], k)",
			"if(k <= 2, 'agents.example.com', '')",
			"arrayElement(['quota', 'overload', 'invalid', 'auth', 'not_found', 'conflict', 'unsupported', 'internal', 'unknown'], k)",
			"toUInt8(k <= 5)",
			"toInt8(arrayElement([1, 1, 0, 0, 0, 0, 0, 1, -1], k))",
			"'default'",
			"toInt64(if(k <= 2, 1000 * (i % 20 + 1), -1))",
			"if(k <= 2, 'retry_info', '')",
			"if(k = 1, 'per-caller', '')",
			"if(k = 1, 'caller', if(k = 2, 'agent', ''))",
			"concat('err_bench_', toString(i))",
			"concat('req_bench_', toString(i))",
			"arrayElement(['Caller exceeded 60 SendMessage calls per minute', 'Agent overloaded', 'Invalid parameters', 'Unauthenticated', 'Task not found', 'Conflict', 'Unsupported', 'Internal error', ''], k)",
			"CAST([] AS Array(String))", "CAST([] AS Array(String))",
			"if(k = 9, ['untyped_5xx'], CAST([] AS Array(String)))",
			"''", "''", "''",
			"if(i % 2 = 0, '1.4.9', '1.5.0')", // source_version
		}
		if len(sel) != len(schema.LandingColumns) {
			return fmt.Errorf("fill: %d expressions for %d landing columns", len(sel), len(schema.LandingColumns))
		}
		q := fmt.Sprintf("%s SELECT %s FROM (SELECT number + %d AS i, %d * 1000 + intDiv(toInt64(i) * %d, %d) + i %% 1000 AS ms, "+
			"toUInt8(if(i %% 10 < 6, 1, i %% 9 + 1)) AS k FROM numbers(%d))",
			schema.LandingInsert(opts), strings.Join(sel, ", "), lo, startS, spanMS, n, cnt)
		if err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("fill rows %d..%d: %w", lo, lo+cnt, err)
		}
	}
	return nil
}

// BenchID returns an id of row i of Fill of the given kind.
func BenchID(kind string, i int64) string {
	switch kind {
	case "error_id":
		return "err_bench_" + strconv.FormatInt(i, 10)
	case "request_id":
		return "req_bench_" + strconv.FormatInt(i, 10)
	case "message_id":
		return "bm-" + strconv.FormatInt(i/3, 10)
	}
	return "bench-" + strconv.FormatInt(i, 10)
}

// BenchmarkStory times Finder.Story by error id on a database filled by
// Fill: ERRTRAIL_BENCH_ROWS rows (default 200,000) over 7 days. With
// ERRTRAIL_BENCH_DB the database is kept and filled only if empty, so the
// 10-million-row run fills once:
//
//	source .stack/env
//	ERRTRAIL_BENCH_ROWS=10000000 ERRTRAIL_BENCH_DB=errtrail_bench_10m \
//	    go test ./lookup -run '^$' -bench Story -benchtime 300x
//
// It reports p50 and p99 of the stories as well as the mean.
func BenchmarkStory(b *testing.B) {
	n := int64(200_000)
	if v := os.Getenv("ERRTRAIL_BENCH_ROWS"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 1000 {
			b.Fatalf("ERRTRAIL_BENCH_ROWS=%q: want a number >= 1000", v)
		}
	}
	ctx := context.Background()
	var conn driver.Conn
	var opts schema.Options
	end := time.Now().Truncate(time.Hour)
	if db := os.Getenv("ERRTRAIL_BENCH_DB"); db != "" {
		var err error
		conn, err = clickhouse.Open(&clickhouse.Options{Addr: strings.Split(testenv.ClickHouse(b), ","), ReadTimeout: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		opts = schema.Options{Database: db}
		if _, err := schema.Migrate(ctx, conn, opts); err != nil {
			b.Fatal(err)
		}
		var have uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".errors").Scan(&have); err != nil {
			b.Fatal(err)
		}
		if have == 0 {
			start := time.Now()
			if err := Fill(ctx, conn, opts, n, end, 7*24*time.Hour); err != nil {
				b.Fatal(err)
			}
			b.Logf("filled %d rows in %v", n, time.Since(start).Round(time.Second))
		} else {
			n = int64(have)
			var last uint64
			if err := conn.QueryRow(ctx, "SELECT max(observed_at_ms) FROM "+db+".errors").Scan(&last); err != nil {
				b.Fatal(err)
			}
			end = time.UnixMilli(int64(last))
		}
	} else {
		conn, opts = openDB(b)
		start := time.Now()
		if err := Fill(ctx, conn, opts, n, end, 7*24*time.Hour); err != nil {
			b.Fatal(err)
		}
		b.Logf("filled %d rows in %v", n, time.Since(start).Round(time.Second))
	}
	f := &Finder{Conn: conn, Database: opts.Database, Now: func() time.Time { return end }}
	rng := rand.New(rand.NewSource(1))
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := BenchID("error_id", rng.Int63n(n))
		t0 := time.Now()
		st, err := f.Story(ctx, id, FindOptions{})
		took = append(took, time.Since(t0))
		if err != nil {
			b.Fatalf("Story: %v", err)
		}
		if st.Context.VerdictError != "" {
			b.Fatalf("verdicts: %s", st.Context.VerdictError)
		}
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if len(took) > 0 {
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	}
}
