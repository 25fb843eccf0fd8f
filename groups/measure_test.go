package groups_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/internal/grouptest"
	"github.com/errtrail/errtrail/schema"
)

// TestMeasureGroupsLatency measures the groups of one agent over 7 days
// (groups.Read, what errtrail groups, /v1/agents/{agent}/groups and the
// groups page run), goal p99 ≤ 200 ms. A measurement, not a test: it runs
// only with ERRTRAIL_MEASURE=1:
//
//	ERRTRAIL_MEASURE=1 go test -run TestMeasureGroupsLatency -v -timeout 30m ./groups
//
// It fills a database of its own through landing (the views run, as in
// production) with ERRTRAIL_MEASURE_ROWS rows (default 10,000,000) over the
// 7 days before now: 50 agents, 2,000 callers, about 60 groups per agent
// (kinds × codes × methods) and 3 agent versions each, then reads one
// agent's groups ERRTRAIL_MEASURE_N times (default 300) and prints the
// percentiles.
func TestMeasureGroupsLatency(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("a measurement: set ERRTRAIL_MEASURE=1")
	}
	rows := envInt(t, "ERRTRAIL_MEASURE_ROWS", 10_000_000)
	n := envInt(t, "ERRTRAIL_MEASURE_N", 300)
	conn, db := grouptest.OpenDB(t, "errtrail_groups_measure")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	span := int64(7 * 24 * 3600)
	expr := map[string]string{
		"event_id":       "concat('m-', toString(number))",
		"observed_at":    fmt.Sprintf("toDateTime(%d + intDiv(number * %d, %d))", now.Unix()-span, span, rows),
		"observed_at_ms": fmt.Sprintf("toUInt64(%d + intDiv(number * %d, %d)) * 1000", now.Unix()-span, span, rows),
		"ingested_at":    "now()",
		"kafka_topic":    "'m'",
		"kafka_offset":   "toInt64(number)",
		"source_kind":    "'agent'",
		"agent":          "concat('agent-', toString(cityHash64(number, 1) % 50))",
		"caller":         "concat('caller-', toString(cityHash64(number, 2) % 2000))",
		"method":         "['SendMessage', 'GetTask', 'tasks/get', 'tools/call', 'CancelTask'][1 + cityHash64(number, 3) % 5]",
		"protocol":       "if(cityHash64(number, 4) % 4 = 0, 'mcp', 'a2a')",
		"code":           "['RATE_LIMIT_EXCEEDED', 'AGENT_OVERLOADED', 'INVALID_ARGUMENT', 'TASK_NOT_FOUND', 'INTERNAL', 'TOOL_TIMEOUT'][1 + cityHash64(number, 5) % 6]",
		"kind":           "['quota', 'overload', 'invalid', 'not_found', 'internal', 'unavailable'][1 + cityHash64(number, 5) % 6]",
		"retryable":      "toInt8(-1)",
		"retry_after_ms": "toInt64(-1)",
		"error_id":       "if(number % 3 = 0, concat('err_', toString(number)), '')",
		"source_version": fmt.Sprintf("concat('1.', toString(intDiv(toUInt64(number) * 3, %d)), '.0')", rows),
	}
	var names, sel []string
	for _, c := range schema.LandingColumns {
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
	fill := time.Now()
	const chunk = 1_000_000
	for off := 0; off < rows; off += chunk {
		cnt := min(chunk, rows-off)
		q := fmt.Sprintf("INSERT INTO %s.%s (%s) SELECT %s FROM (SELECT number + %d AS number FROM system.numbers LIMIT %d)",
			db, schema.TableLanding, strings.Join(names, ", "), strings.Join(sel, ", "), off, cnt)
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("filled %d rows in %s", rows, time.Since(fill).Round(time.Second))
	var g1, g1h uint64
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT (SELECT count() FROM %[1]s.error_groups), (SELECT count() FROM %[1]s.error_groups_1h)", db)).Scan(&g1, &g1h); err != nil {
		t.Fatal(err)
	}
	t.Logf("error_groups %d rows, error_groups_1h %d rows (unmerged parts included)", g1, g1h)

	f := groups.Filter{Agent: "agent-7", From: now.Add(-7 * 24 * time.Hour), To: now.Add(time.Second), Now: now}
	var took []time.Duration
	var count int
	for i := 0; i < n; i++ {
		start := time.Now()
		gs, err := groups.Read(ctx, conn, db, f)
		took = append(took, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		count = len(gs)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p float64) time.Duration { return took[min(len(took)-1, int(p*float64(len(took))))] }
	t.Logf("groups of one agent over 7 days (%d groups, %d rows filled): %d reads, p50 %s p90 %s p99 %s max %s (goal p99 ≤ 200 ms)",
		count, rows, n, pct(0.5).Round(100*time.Microsecond), pct(0.9).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), took[len(took)-1].Round(100*time.Microsecond))
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}
