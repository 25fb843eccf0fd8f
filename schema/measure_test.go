package schema

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestMeasureLookup measures support lookups (issue 3 §6: lookup by error_id
// p50/p99 with 10 million rows). It is a measurement, not a check, and runs
// only with ERRTRAIL_MEASURE=1:
//
//	ERRTRAIL_MEASURE=1 go test -run TestMeasureLookup -v -timeout 30m ./schema
//
// It fills a scratch database through the landing table (so every
// materialized view runs, as in production) with ERRTRAIL_MEASURE_ROWS rows
// (default 10,000,000) spread over 50 agents, 2,000 callers and 7 days, then
// times 300 lookups of random error_ids and 300 of random request_ids
// through Lookup, and prints the percentiles. Set ERRTRAIL_MEASURE_KEEP=1 to
// keep the database for a second run.
func TestMeasureLookup(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("measurement: set ERRTRAIL_MEASURE=1 to run it")
	}
	rows := int64(10_000_000)
	if v, err := strconv.ParseInt(os.Getenv("ERRTRAIL_MEASURE_ROWS"), 10, 64); err == nil && v > 0 {
		rows = v
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{testenv.ClickHouse(t)},
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionLZ4}, ReadTimeout: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	opts := Options{Database: "errtrail_measure_lookup"}
	keep := os.Getenv("ERRTRAIL_MEASURE_KEEP") == "1"
	var have uint64
	if keep {
		conn.QueryRow(ctx, "SELECT count() FROM errtrail_measure_lookup.errors").Scan(&have)
	}
	if have < uint64(rows) {
		if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+opts.Database); err != nil {
			t.Fatal(err)
		}
		if _, err := Migrate(ctx, conn, opts); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		const chunk = 1_000_000
		for off := int64(0); off < rows; off += chunk {
			n := min(chunk, rows-off)
			if err := conn.Exec(ctx, fillQuery(opts, off, n)); err != nil {
				t.Fatalf("fill at %d: %v", off, err)
			}
		}
		t.Logf("filled %d rows through landing in %s", rows, time.Since(start).Round(time.Second))
	}
	if !keep {
		defer conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database)
	}
	var version string
	conn.QueryRow(ctx, "SELECT version()").Scan(&version)
	for _, kind := range []string{"error_id", "request_id"} {
		var times []time.Duration
		misses := 0
		for i := 0; i < 300; i++ {
			k := rand.Int64N(rows)
			id := "err_" + strconv.FormatInt(k, 10)
			if kind == "request_id" {
				id = "req_" + strconv.FormatInt(k, 10)
			}
			t0 := time.Now()
			got, err := Lookup(ctx, conn, opts, id)
			times = append(times, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				misses++
			}
		}
		slices.Sort(times)
		p := func(q float64) time.Duration {
			return times[int(q*float64(len(times)-1))].Round(100 * time.Microsecond)
		}
		t.Logf("ClickHouse %s, %d rows: lookup by %s over %d ids: p50 %s, p90 %s, p99 %s, max %s (%d without exactly one row)",
			version, rows, kind, len(times), p(0.50), p(0.90), p(0.99), times[len(times)-1].Round(100*time.Microsecond), misses)
		if misses > 0 {
			t.Errorf("%d lookups did not return exactly one row", misses)
		}
	}
}

// fillQuery inserts n synthetic rows, numbered from off, into landing.
func fillQuery(opts Options, off, n int64) string {
	expr := map[string]string{
		"event_id":        "concat('ev-', toString(number))",
		"observed_at":     "toDateTime(toUInt32(now()) - number % 604800)",
		"observed_at_ms":  "toUInt64(toUInt32(now()) - number % 604800) * 1000",
		"ingested_at":     "now()",
		"kafka_topic":     "'measure'",
		"kafka_partition": "toInt32(number % 4)",
		"kafka_offset":    "toInt64(number)",
		"source_kind":     "'agent'",
		"agent":           "concat('agent-', toString(number % 50))",
		"caller":          "concat('caller-', toString(number % 2000))",
		"method":          "'SendMessage'",
		"attempt":         "toUInt16(1)",
		"http_request_id": "concat('h-', toString(number))",
		"message_id":      "concat('m-', toString(number))",
		"protocol":        "'a2a'",
		"binding":         "'jsonrpc'",
		"envelope":        "'jsonrpc_error'",
		"http_status":     "toUInt16(429)",
		"jsonrpc_code":    "toInt32(-32603)",
		"code":            "'RATE_LIMIT_EXCEEDED'",
		"reason":          "'RATE_LIMIT_EXCEEDED'",
		"domain":          "'agents.example.com'",
		"kind":            "'quota'",
		"typed":           "toUInt8(1)",
		"retryable":       "toInt8(1)",
		"retry_after_ms":  "toInt64(12000)",
		"limit_name":      "'per-caller'",
		"scope":           "'caller'",
		"error_id":        "concat('err_', toString(number))",
		"request_id":      "concat('req_', toString(number))",
		"message":         "'Rate limit exceeded'",
	}
	var names, sel []string
	for _, c := range LandingColumns {
		names = append(names, c.Name)
		e, ok := expr[c.Name]
		if !ok {
			switch {
			case strings.HasPrefix(c.Type, "Array"):
				e = "emptyArrayString()"
			case c.Type == "String":
				e = "''"
			case c.Type == "DateTime":
				e = "now()"
			default:
				e = "to" + c.Type + "(0)"
			}
		}
		sel = append(sel, e+" AS "+c.Name)
	}
	return fmt.Sprintf("INSERT INTO %s.%s (%s) SELECT %s FROM (SELECT number + %d AS number FROM system.numbers LIMIT %d)",
		opts.Database, TableLanding, strings.Join(names, ", "), strings.Join(sel, ", "), off, n)
}
