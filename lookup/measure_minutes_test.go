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

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// TestMeasureContextMinutes compares the story's "minutes" step (the
// caller's minutes and the other callers, from callers_1m since schema
// migration 010) with the same two reads from errors_1m, the rollup with
// caller that it read before, on one database that has both: Fill's rows
// (ERRTRAIL_MEASURE_ROWS, default 2,000,000, over 24 h) with the old view
// put back beside the new one. Per story, in alternating order, the
// step's statements of Finder.Story and the old two statements for the
// same record; ClickHouse CPU and rows read from system.query_log. Opt-in
// (ERRTRAIL_MEASURE=1); it asserts no timing and prints medians and p99.
func TestMeasureContextMinutes(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("a measurement: set ERRTRAIL_MEASURE=1")
	}
	n := int64(2_000_000)
	if v := os.Getenv("ERRTRAIL_MEASURE_ROWS"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 1000 {
			t.Fatalf("ERRTRAIL_MEASURE_ROWS=%q", v)
		}
	}
	ctx := context.Background()
	conn, opts := openDB(t)
	logged, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(testenv.ClickHouse(t), ","),
		ReadTimeout: 10 * time.Minute, Settings: clickhouse.Settings{"log_queries": 1}}) // 18.16 logs only so
	if err != nil {
		t.Fatal(err)
	}
	defer logged.Close()
	v, err := schema.DetectVersion(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	db := opts.Database
	oldView := ""
	for _, m := range schema.Render(v, opts) {
		for _, st := range m.Statements {
			if strings.HasPrefix(st, "CREATE MATERIALIZED VIEW IF NOT EXISTS "+db+".mv4_errors_1m ") {
				oldView = st
			}
		}
	}
	for _, st := range []string{"DROP TABLE " + db + ".mv4_errors_1m", oldView} {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%v\n%s", err, st)
		}
	}
	end := time.Now().Truncate(time.Hour)
	began := time.Now()
	if err := Fill(ctx, conn, opts, n, end, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	t.Logf("filled %d rows in %v (load %s)", n, time.Since(began).Round(time.Second), loadAvg())

	run := fmt.Sprintf("m%d", time.Now().UnixNano()%1e9)
	f := &Finder{Conn: logged, Database: db, Now: func() time.Time { return end }, QueryIDPrefix: run + "-new-"}
	oldMinutes := "SELECT toUInt32(minute) AS m, kind, toInt64(sum(n)) FROM " + db + ".errors_1m" +
		" WHERE agent = ? AND caller = ? AND minute >= toDateTime(?) AND minute < toDateTime(?) GROUP BY m, kind"
	oldOthers := "SELECT toInt64(uniqExact(caller)) FROM " + db + ".errors_1m" +
		" WHERE agent = ? AND minute = toDateTime(?) AND kind = ? AND caller != ? AND caller != ''"
	old := func(i int, r *Row) {
		from, to, _ := contextWindow(r.ObservedAt, end)
		q := func(name string) context.Context {
			return clickhouse.Context(ctx, clickhouse.WithQueryID(fmt.Sprintf("%s-old-%d-%s", run, i, name)))
		}
		rows, err := logged.Query(q("minutes"), oldMinutes, r.Agent, r.Caller, from.Unix(), to.Unix())
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		rows.Close()
		var others int64
		if err := logged.QueryRow(q("others"), oldOthers, r.Agent, r.ObservedAt.Truncate(time.Minute).Unix(), r.Kind, r.Caller).Scan(&others); err != nil {
			t.Fatal(err)
		}
	}
	stories := 100
	rng := rand.New(rand.NewSource(1))
	for i := range stories {
		id := BenchID("error_id", rng.Int63n(n))
		f.QueryIDPrefix = fmt.Sprintf("%s-new-%d-", run, i)
		var st *Story
		story := func() {
			if st, err = f.Story(ctx, id, FindOptions{}); err != nil {
				t.Fatalf("Story(%s): %v", id, err)
			}
		}
		if i%2 == 0 {
			story()
			old(i, &st.Record)
		} else {
			// The record first, from a story whose minutes are not counted.
			probe := &Finder{Conn: conn, Database: db, Now: f.Now}
			s, err := probe.Story(ctx, id, FindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			old(i, &s.Record)
			story()
		}
	}
	if err := logged.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT if(query_id LIKE '%-old-%', 'old', 'new') AS side,
    toUInt32(extract(query_id, '-(?:old|new)-([0-9]+)-')) AS i,
    toUInt64(sum(arraySum(arrayFilter((v, k) -> k IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'), ProfileEvents.Values, ProfileEvents.Names)))),
    toUInt64(sum(read_rows))
FROM system.query_log
WHERE type = 2 AND event_date >= yesterday() AND query_id LIKE ? AND (query_id LIKE '%-old-%' OR query_id LIKE '%-minutes-%')
GROUP BY side, i`, run+"-%")
	if err != nil {
		t.Fatal(err)
	}
	cpu, read := map[string][]float64{}, map[string][]float64{}
	for rows.Next() {
		var side string
		var i uint32
		var us, rr uint64
		if err := rows.Scan(&side, &i, &us, &rr); err != nil {
			t.Fatal(err)
		}
		cpu[side] = append(cpu[side], float64(us)/1000)
		read[side] = append(read[side], float64(rr))
	}
	rows.Close()
	pct := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		sort.Float64s(xs)
		return xs[int(p*float64(len(xs)-1))]
	}
	t.Logf("%d stories, %d rows, load %s; the minutes step per story, p50 / p99:", stories, n, loadAvg())
	for _, side := range []string{"old", "new"} {
		t.Logf("  %s (%s): ClickHouse CPU %.2f / %.2f ms, rows read %.0f / %.0f (%d stories logged)", side,
			map[string]string{"old": "errors_1m", "new": "callers_1m"}[side],
			pct(cpu[side], 0.5), pct(cpu[side], 0.99), pct(read[side], 0.5), pct(read[side], 0.99), len(cpu[side]))
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], "/")
}
