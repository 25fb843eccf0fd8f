package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
)

// The measurements of issue 4 §5 (docs/performance.md, section Alerting).
// They are not timed tests: they print figures, and run only with
// ERRTRAIL_MEASURE=1.
//
//	ERRTRAIL_MEASURE=1 go test -count=1 -v -run TestMeasureOnsetToAlert -timeout 30m ./e2e
//	ERRTRAIL_MEASURE=1 go test -count=1 -v -run TestMeasureQueryCost -timeout 30m ./e2e
func needMeasure(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("a measurement, not a test: set ERRTRAIL_MEASURE=1 to run it (see docs/performance.md)")
	}
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestMeasureOnsetToAlert measures, with default settings (the alerter's
// default flags, real time, the shipped rules, the stack's Prometheus
// scraping and evaluating every 5 s), the time from the onset of an overload
// in the load tool to ErrtrailAgentOverloaded firing in Prometheus.
// The load is scenarios/overload.yaml with its baseline cut to 45 s; each of
// ERRTRAIL_MEASURE_RUNS (3) runs uses a new agent.
func TestMeasureOnsetToAlert(t *testing.T) {
	needMeasure(t)
	r := newRig(t, 1)
	startPromStack(t, r)
	r.startIngest()
	r.startAlerter(0) // default flags
	const baseline = 45 * time.Second

	type result struct {
		row, verdict, pending, firing time.Duration
	}
	var results []result
	for i := 1; i <= envInt("ERRTRAIL_MEASURE_RUNS", 3); i++ {
		sc, err := loadgen.LoadScenario(filepath.Join(r.root, "scenarios", "overload.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		names := renameAgents(sc, func(a string) string { return fmt.Sprintf("measure-%s-%d-%s", r.id, i, a) })
		agent := names["research-agent"]
		shift := sc.Phases[0].Duration - baseline
		sc.Phases[0].Duration = baseline
		for j := range sc.Faults {
			sc.Faults[j].From -= shift
			sc.Faults[j].To -= shift
		}
		onsetIn := sc.Faults[0].From

		ctx, cancel := context.WithCancel(context.Background())
		repc := make(chan *loadgen.Report, 1)
		go func() {
			rep, _ := loadgen.Run(ctx, loadgen.Config{Brokers: r.brokers, Topic: r.topic, Scenario: sc,
				Speed: 1, Clock: "real", Compression: true, KeepIDs: -1})
			repc <- rep
		}()
		var tRow, tVerdict, tFiring time.Time
		var activeAt time.Time
		deadline := time.Now().Add(onsetIn + 5*time.Minute)
		for tFiring.IsZero() && time.Now().Before(deadline) {
			now := time.Now()
			if tRow.IsZero() {
				var n uint64
				_ = r.query(fmt.Sprintf("SELECT count() FROM %s.errors WHERE agent = '%s' AND kind = 'overload'", r.db, agent),
					func(rows driver.Rows) error { return rows.Scan(&n) })
				if n > 0 {
					tRow = now
				}
			}
			if tVerdict.IsZero() {
				if ss, err := scrape("http://" + r.alerterAddrs[0] + "/metrics"); err == nil {
					for _, s := range ss {
						if s.Name == ns+"agent_overloaded" && s.Labels["agent"] == agent && s.Value == 1 {
							tVerdict = now
						}
					}
				}
			}
			if as, err := r.alerts(); err == nil {
				for _, a := range as {
					if a.Labels["alertname"] == "ErrtrailAgentOverloaded" && a.Labels["agent"] == agent {
						activeAt = a.ActiveAt
						if a.State == "firing" {
							tFiring = now
						}
					}
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		cancel()
		rep := <-repc
		if rep == nil {
			t.Fatal("no loadgen report")
		}
		onset := rep.Started.Add(onsetIn)
		if tFiring.IsZero() {
			t.Fatalf("run %d: ErrtrailAgentOverloaded{agent=%q} did not fire within 5 minutes of the onset", i, agent)
		}
		res := result{row: tRow.Sub(onset), verdict: tVerdict.Sub(onset), pending: activeAt.Sub(onset), firing: tFiring.Sub(onset)}
		results = append(results, res)
		t.Logf("run %d (agent %s): onset %s; first overload row in ClickHouse +%.1fs, verdict on /metrics +%.1fs, alert pending (activeAt) +%.1fs, FIRING +%.1fs",
			i, agent, onset.Format("15:04:05.000"), res.row.Seconds(), res.verdict.Seconds(), res.pending.Seconds(), res.firing.Seconds())
	}
	var line []string
	for _, res := range results {
		line = append(line, fmt.Sprintf("%.1f s", res.firing.Seconds()))
	}
	t.Logf("onset of overload -> ErrtrailAgentOverloaded firing, default settings: %s", strings.Join(line, ", "))
}

// TestMeasureQueryCost measures one evaluation of the alerter (default
// configuration: 1-minute buckets from callers_1m, 1-hour baseline, 5-minute
// retry and gateway windows) with 10 million rows in errors, landed with
// INSERT ... SELECT into landing (so every materialized view runs, as for
// ingest). ERRTRAIL_MEASURE_SPREADS (default "24h,1h") lists how far back the
// rows reach: 24h is a busy day (~116 rows/s), 1h puts all 10 M rows in the
// alerter's baseline (~2,800 rows/s, the worst case for the raw-row
// queries). 20 agents x 50 callers; 70% quota, 10% overload, 10% bare 500,
// 10% bare 502; messages of 3 attempts. Rows read and ms per query come from
// system.query_log and the alerter's own Observe hook.
func TestMeasureQueryCost(t *testing.T) {
	needMeasure(t)
	r := newRig(t, 1)
	rows := envInt("ERRTRAIL_MEASURE_ROWS", 10_000_000)
	spreads := strings.Split(os.Getenv("ERRTRAIL_MEASURE_SPREADS"), ",")
	if spreads[0] == "" {
		spreads = []string{"24h", "1h"}
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{r.chAddr}, Protocol: clickhouse.Native,
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 10 * time.Minute,
		Settings: clickhouse.Settings{"log_queries": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()

	for si, spreadS := range spreads {
		spread, err := time.ParseDuration(spreadS)
		if err != nil {
			t.Fatal(err)
		}
		db := fmt.Sprintf("%s_cost%d", r.db, si)
		out, err := exec.Command(filepath.Join(r.bin, "ingest"), "migrate", "--clickhouse.addr="+r.chAddr, "--clickhouse.database="+db).CombinedOutput()
		if err != nil {
			t.Fatalf("ingest migrate: %v\n%s", err, out)
		}
		t.Cleanup(func() { // r.conn: conn is closed by then
			if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") == "" {
				_ = r.conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
			}
		})

		// Fill: rows evenly from now-spread to now, in chunks of 1 M.
		end := time.Now().UnixMilli()
		start := end - spread.Milliseconds()
		step := float64(spread.Milliseconds()) / float64(rows)
		began := time.Now()
		const chunk = 1_000_000
		for off := 0; off < rows; off += chunk {
			n := min(chunk, rows-off)
			sql := fmt.Sprintf(`INSERT INTO %[1]s.landing (dead, event_id, observed_at, observed_at_ms, ingested_at,
    kafka_topic, kafka_partition, kafka_offset, source_kind, source_id, agent, caller, method, attempt,
    http_request_id, message_id, idempotency_key_hash, protocol, binding, http_status, kind, typed, retryable,
    retry_after_ms, reason, limit_name)
SELECT 0, concat('cost-', toString(num)), toDateTime(intDiv(ms, 1000)), ms, now(),
    'cost', 0, num, 'agent', concat('agent-', toString(m %% 20), '-0'),
    concat('agent-', toString(m %% 20)), concat('caller-', toString(intDiv(m, 20) %% 50)), 'SendMessage', toUInt16(num %% 3 + 1),
    concat('r', toString(num)), concat('m', toString(m)), if(m %% 2 = 0, cityHash64(m), 0), 'a2a', 'http',
    multiIf(k < 7, 429, k = 7, 503, k = 8, 500, 502),
    multiIf(k < 7, 'quota', k = 7, 'overload', k = 8, 'internal', 'unknown'),
    if(k < 8, 1, 0), 1, if(k < 8, 5000, -1),
    multiIf(k < 7, 'RATE_LIMIT_EXCEEDED', k = 7, 'AGENT_OVERLOADED', ''), if(k < 7, 'per-caller', '')
FROM (SELECT number + %[2]d AS num, intDiv(num, 3) AS m, cityHash64(m) %% 10 AS k, toUInt64(%[3]d + toUInt64(num * %[4]f)) AS ms FROM system.numbers LIMIT %[5]d)`,
				db, off, start, step, n)
			if err := conn.Exec(ctx, sql); err != nil {
				t.Fatalf("fill: %v", err)
			}
		}
		var nErrors, n1m uint64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT (SELECT count() FROM %[1]s.errors), (SELECT count() FROM %[1]s.callers_1m)", db)).Scan(&nErrors, &n1m); err != nil {
			t.Fatal(err)
		}
		t.Logf("spread %s: %d rows in errors, %d in callers_1m (landed in %s)", spreadS, nErrors, n1m, time.Since(began).Round(time.Second))
		// Let background merges settle a little, as they would between
		// evaluations in steady state.
		_ = conn.Exec(ctx, "OPTIMIZE TABLE "+db+".callers_1m")

		cfg := alerter.DefaultConfig()
		type cost struct {
			rows uint64
			took time.Duration
		}
		for run := 1; run <= 3; run++ {
			perQuery := map[string]cost{}
			prefix := fmt.Sprintf("e2e-measure-%s-%d-", r.id, run)
			src := &alerter.Reader{Conn: conn, Database: db, QueryIDPrefix: prefix, Observe: func(name string, rows uint64, took time.Duration, err error) {
				if err != nil {
					t.Errorf("query %s: %v", name, err)
				}
				perQuery[name] = cost{rows, took}
			}}
			// A second of its own, so the query log holds only this
			// evaluation's queries from marker on.
			time.Sleep(1100 * time.Millisecond)
			marker := time.Now()
			t0 := time.Now()
			in, err := src.Gather(ctx, &cfg, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			gathered := time.Since(t0)
			v := alerter.Evaluate(&cfg, in, nil)
			total := time.Since(t0)
			time.Sleep(1100 * time.Millisecond) // nothing else starts in the evaluation's last second

			// Bytes and rows read, from the server's query log.
			_ = conn.Exec(ctx, "SYSTEM FLUSH LOGS")
			type logged struct {
				rows, bytes, mem uint64
				ms               uint64
			}
			var fromLog []logged
			var sumRows, sumBytes, sumMS uint64
			err = r.queryOn(conn, fmt.Sprintf(`SELECT read_rows, read_bytes, memory_usage, query_duration_ms FROM system.query_log
WHERE type = 2 AND query_start_time >= toDateTime(%d) AND startsWith(query_id, '%s')
ORDER BY query_start_time`, marker.Unix(), prefix), func(rows driver.Rows) error {
				var l logged
				if err := rows.Scan(&l.rows, &l.bytes, &l.mem, &l.ms); err != nil {
					return err
				}
				fromLog = append(fromLog, l)
				sumRows += l.rows
				sumBytes += l.bytes
				sumMS += l.ms
				return nil
			})
			if err != nil {
				t.Logf("query_log: %v", err)
			}
			names := make([]string, 0, len(perQuery))
			for n := range perQuery {
				names = append(names, n)
			}
			sort.Slice(names, func(i, j int) bool {
				return indexOf(alerter.QueryNames, names[i]) < indexOf(alerter.QueryNames, names[j])
			})
			var parts []string
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %d rows %.0f ms", n, perQuery[n].rows, float64(perQuery[n].took.Microseconds())/1000))
			}
			t.Logf("spread %s, evaluation %d: %.0f ms in all (queries %.0f ms, verdicts in Go %.1f ms; %d agents, %d buckets read); per query: %s",
				spreadS, run, float64(total.Microseconds())/1000, float64(gathered.Microseconds())/1000,
				float64((total-gathered).Microseconds())/1000, len(v.Agents), len(in.Buckets), strings.Join(parts, "; "))
			t.Logf("spread %s, evaluation %d: system.query_log: %d queries, %d rows, %.1f MB read, %d ms",
				spreadS, run, len(fromLog), sumRows, float64(sumBytes)/1e6, sumMS)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

// queryOn runs sql on conn and scans each row.
func (r *rig) queryOn(conn driver.Conn, sql string, scan func(driver.Rows) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
