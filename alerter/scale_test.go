package alerter_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
)

// TestMeasureEvaluationScale measures one alerter evaluation (Gather and
// Evaluate, the default configuration) at 100 agents x 10,000 callers on the
// local stack's ClickHouse (issue 12 §5; docs/performance.md, "Alerting").
// A measurement, not a test: it runs only with ERRTRAIL_MEASURE=1.
//
//	ERRTRAIL_MEASURE=1 go test ./alerter -run TestMeasureEvaluationScale -v -timeout 60m
//
// ERRTRAIL_SCALE_SHAPES lists the shapes (default "standard";
// "standard,busy,wide" for all three, see scaleShapes), ERRTRAIL_MEASURE_RUNS
// the rounds (3). Each shape fills a database of its own,
// errtrail_alerter_scale_<shape>, through landing (every materialized view
// the alerter reads runs, as for ingest), with 66 minutes of errors ending at
// the fill's "now", and drops it at the end (ERRTRAIL_KEEP_TEST_DATA=1 keeps
// it; ERRTRAIL_SCALE_REUSE=1 then measures a kept fill again instead of
// filling anew).
//
// Each round measures, in turn first, the reduced reads that Gather does by
// default, by a Reader that evaluated a minute before (as in a running
// alerter; that first evaluation, "cold", is measured too), and the
// reference reads (Reader.Reference: every baseline bucket of every caller,
// every caller's retry statistics), on the same data at the same "now". The
// verdicts of the two must be identical. ERRTRAIL_SCALE_CPUPROFILE=file
// writes a CPU profile of each reduced evaluation.
func TestMeasureEvaluationScale(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("a measurement, not a test: set ERRTRAIL_MEASURE=1 to run it (see docs/performance.md)")
	}
	conn := openCHWith(t, 10*time.Minute, clickhouse.Settings{"log_queries": 1})
	names := strings.Split(os.Getenv("ERRTRAIL_SCALE_SHAPES"), ",")
	if names[0] == "" {
		names = []string{"standard"}
	}
	runs := 3
	if n, err := strconv.Atoi(os.Getenv("ERRTRAIL_MEASURE_RUNS")); err == nil && n > 0 {
		runs = n
	}
	for _, name := range names {
		sh, ok := scaleShapes[name]
		if !ok {
			t.Fatalf("unknown shape %q", name)
		}
		sh.name = name
		t.Run(name, func(t *testing.T) { measureShape(t, conn, sh, runs) })
	}
}

// scaleShape is one fill: 100 agents, 10,000 callers; each caller calls
// AgentsPerCaller agents (pairs = 10,000 x AgentsPerCaller).
//
// Per (agent, caller) pair and minute ("slot": the 60 s ending s minutes
// before now, s = 0 being the current window), a pair is active with
// probability ActivePct %. An active pair gets 1 error, or 2 in one slot of
// three when MaxPerSlot is 2: the attempts of one message, 6 s apart
// (Retry-After 5 s: polite), every other message with an idempotency key.
// Kinds: 70% quota (429), 10% overload (503), 10% bare 500, 10% bare 502.
// One pair in GreedyEvery is a steady greedy caller: active in every slot
// with 10 attempts. Agents 0-9 sit behind a gateway that reports every
// request too (source_kind gateway); agent 5's gateway turns typed 429s
// into bare 502s. On top, small stories make every verdict fire somewhere
// (see fillStories).
type scaleShape struct {
	name            string
	AgentsPerCaller int
	ActivePct       int
	MaxPerSlot      int
	GreedyEvery     int
}

var scaleShapes = map[string]scaleShape{
	// 50,000 pairs (500 callers per agent), ~20,000 of them with errors in
	// any minute, ~500 errors a second (the rate of the 6.8 s measurement
	// of issue 12): ~1.4 M rows of callers_1m in the baseline hour, ~2.4 M
	// raw rows in the 66 minutes.
	"standard": {AgentsPerCaller: 5, ActivePct: 40, MaxPerSlot: 2, GreedyEvery: 100},
	// The same pairs, nearly all of them with errors in every minute (~45,000
	// a minute, ~1,150 errors a second): ~2.6 M rows of callers_1m, ~4.7 M
	// raw rows.
	"busy": {AgentsPerCaller: 5, ActivePct: 90, MaxPerSlot: 2, GreedyEvery: 100},
	// Every caller calls every agent: 1,000,000 pairs, each with an error in
	// one minute of ten: ~100,000 pairs a minute, ~6 M rows of callers_1m
	// in the hour and a million caller series.
	"wide": {AgentsPerCaller: 100, ActivePct: 10, MaxPerSlot: 1, GreedyEvery: 1000},
}

const (
	scaleSlots   = 66 // minutes of data: the 61-minute baseline, the window, the 65-minute retry lookback
	scaleCallers = 10000
	scaleAgents  = 100
)

func (sh scaleShape) pairs() int { return scaleCallers * sh.AgentsPerCaller }

// callsAgent is the SQL condition "caller number c calls agent number a".
func (sh scaleShape) callsAgent(c string, a int) string {
	step := scaleAgents / sh.AgentsPerCaller
	d := fmt.Sprintf("((%d + 100 - %s %% 100) %% 100)", a, c)
	return fmt.Sprintf("(%s %% %d = 0 AND intDiv(%s, %d) < %d)", d, step, d, step, sh.AgentsPerCaller)
}

// landingFrom inserts into landing the rows of inner, which yields eid, ms,
// sk, agent, caller, attempt, rid, mid, ikey, kind, typed, ra.
func landingFrom(db, inner string) string {
	return fmt.Sprintf(`INSERT INTO %s.landing (dead, event_id, observed_at, observed_at_ms, ingested_at, kafka_topic, kafka_partition,
    kafka_offset, source_kind, source_id, agent, caller, method, attempt, http_request_id, message_id, idempotency_key_hash,
    protocol, binding, http_status, kind, typed, retryable, retry_after_ms, reason, limit_name)
SELECT 0, eid, toDateTime(intDiv(ms, 1000)), ms, now(), 'scale', 0, 0,
    sk, if(sk = 'agent', concat(agent, '-0'), 'gw-1'), agent, caller, 'SendMessage', attempt, rid, mid, ikey, 'a2a', 'http',
    multiIf(kind = 'quota', 429, kind = 'overload', 503, kind = 'internal', 500, 502), kind, typed, 1, ra,
    multiIf(kind = 'quota', 'RATE_LIMIT_EXCEEDED', kind = 'overload', 'AGENT_OVERLOADED', ''), if(kind = 'quota', 'per-caller', '')
FROM
(
%s
)`, db, inner)
}

// fillPairs lands slots [s0, s1) of the pairs p = i*pmul (i < n), e
// attempts at most per slot, cnt of them kept, where active.
func (sh scaleShape) fillPairs(db string, nowMS int64, s0, s1, n, pmul, e int, cnt, active string) string {
	step := scaleAgents / sh.AgentsPerCaller
	inner := fmt.Sprintf(`SELECT concat('s', toString(p), '-', toString(s), '-', toString(j), sk) AS eid, ms, sk, agent, caller,
    toUInt16(j + 1) AS attempt, concat('r', toString(p), '-', toString(s), '-', toString(j)) AS rid,
    concat('m', toString(p), '-', toString(s)) AS mid, if(cityHash64(p, s) %% 2 = 0, cityHash64(p, s, 3), 0) AS ikey,
    if(sk = 'gateway' AND ai = 5 AND k < 7, 'unknown', multiIf(k < 7, 'quota', k = 7, 'overload', k = 8, 'internal', 'unknown')) AS kind,
    toUInt8(kind IN ('quota', 'overload')) AS typed, if(kind IN ('quota', 'overload'), 5000, -1) AS ra
FROM
(
    SELECT p, s, j, ai, k, ms, concat('agent-', toString(ai)) AS agent, concat('caller-', toString(p %% %[1]d)) AS caller,
        arrayJoin(if(ai < 10, ['agent', 'gateway'], ['agent'])) AS sk
    FROM
    (
        SELECT %[2]d + intDiv(number, %[3]d) AS s, intDiv(number %% %[3]d, %[4]d) * %[5]d AS p, number %% %[4]d AS j,
            (p %% %[1]d + intDiv(p, %[1]d) * %[6]d) %% 100 AS ai, %[7]s AS cnt, cityHash64(p, s, j, 4) %% 10 AS k,
            toUInt64(%[8]d - (s + 1) * 60000 + cityHash64(p, s, 2) %% (60000 - 6000 * (cnt - 1)) + 6000 * j) AS ms
        FROM numbers(%[9]d)
    )
    WHERE j < cnt AND %[10]s
)`, scaleCallers, s0, n*e, e, pmul, step, cnt, nowMS, n*e*(s1-s0), active)
	return landingFrom(db, inner)
}

// fill lands the shape's rows ending at nowMS.
func (sh scaleShape) fill(t *testing.T, conn driver.Conn, db string, nowMS int64) {
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("fill: %v\n%s", err, sql)
		}
	}
	pairs := sh.pairs()
	cnt := "1"
	if sh.MaxPerSlot == 2 {
		cnt = "1 + (cityHash64(p, s, 1) % 3 = 0)"
	}
	active := fmt.Sprintf("p %% %d != 0 AND cityHash64(p, s) %% 100 < %d", sh.GreedyEvery, sh.ActivePct)
	chunk := max(1, 2_000_000/(pairs*sh.MaxPerSlot))
	for s0 := 0; s0 < scaleSlots; s0 += chunk {
		exec(sh.fillPairs(db, nowMS, s0, min(s0+chunk, scaleSlots), pairs, 1, sh.MaxPerSlot, cnt, active))
	}
	// The greedy pairs: every slot, 10 attempts.
	exec(sh.fillPairs(db, nowMS, 0, scaleSlots, pairs/sh.GreedyEvery, sh.GreedyEvery, 10, "10", "1"))
	sh.fillStories(exec, db, nowMS)
}

// fillStories adds, on top of the steady traffic, one story per verdict:
//   - runaway: agent-1's caller loop-1, 2 errors a minute for an hour, 200
//     in the current window;
//   - overload: every caller of agent-2 gets 3 overload 503s in the last 20 s;
//   - limit too low: every caller of agent-3 gets 8 quota 429s in the window;
//   - retry storm: on agent-4, "impatient" retries 300 ms after a 5 s
//     Retry-After, "rotator" sends every retry with a fresh messageId and key;
//   - untyped: a 101st agent, agent-bare, answers 3 callers with bare 500s.
//
// Gateway mangling is agent-5's gateway (fillPairs).
func (sh scaleShape) fillStories(exec func(string), db string, nowMS int64) {
	perCaller := func(agent int, story, kind string, n, spreadMS int) string {
		return landingFrom(db, fmt.Sprintf(`SELECT concat('%[2]s-', toString(c), '-', toString(i)) AS eid,
    toUInt64(%[3]d - 1000 - (c * 7919 + i * 3001) %% %[4]d) AS ms, 'agent' AS sk, 'agent-%[1]d' AS agent,
    concat('caller-', toString(c)) AS caller, toUInt16(1) AS attempt, concat('r%[2]s-', toString(c), '-', toString(i)) AS rid,
    concat('m%[2]s-', toString(c), '-', toString(i)) AS mid, toUInt64(0) AS ikey, '%[5]s' AS kind, toUInt8(1) AS typed, toInt64(5000) AS ra
FROM (SELECT intDiv(number, %[6]d) AS c, number %% %[6]d AS i FROM numbers(%[7]d))
WHERE %[8]s`, agent, story, nowMS, spreadMS, kind, n, scaleCallers*n, sh.callsAgent("c", agent)))
	}
	exec(perCaller(2, "ov", "overload", 3, 19000))
	exec(perCaller(3, "lim", "quota", 8, 58000))
	exec(landingFrom(db, fmt.Sprintf(`SELECT concat('loop-', toString(number)) AS eid,
    toUInt64(if(number < 200, %[1]d - 1000 - number * 290, %[1]d - 60000 - intDiv(number - 200, 2) * 60000 - (number %% 2) * 20000)) AS ms,
    'agent' AS sk, 'agent-1' AS agent, 'loop-1' AS caller, toUInt16(1) AS attempt, concat('rloop-', toString(number)) AS rid,
    concat('mloop-', toString(number)) AS mid, toUInt64(0) AS ikey, 'quota' AS kind, toUInt8(1) AS typed, toInt64(5000) AS ra
FROM numbers(%[2]d)`, nowMS, 200+2*(scaleSlots-1))))
	exec(landingFrom(db, fmt.Sprintf(`SELECT concat('imp-', toString(number)) AS eid,
    toUInt64(%[1]d - 10000 - intDiv(number, 3) * 10000 + (number %% 3) * 300) AS ms, 'agent' AS sk, 'agent-4' AS agent,
    'impatient' AS caller, toUInt16(number %% 3 + 1) AS attempt, concat('rimp-', toString(number)) AS rid,
    concat('mimp-', toString(intDiv(number, 3))) AS mid, toUInt64(0) AS ikey, 'quota' AS kind, toUInt8(1) AS typed, toInt64(5000) AS ra
FROM numbers(60)
UNION ALL
SELECT concat('rot-', toString(number)) AS eid, toUInt64(%[1]d - 5000 - number * 10000) AS ms, 'agent' AS sk, 'agent-4' AS agent,
    'rotator' AS caller, toUInt16(2) AS attempt, concat('rrot-', toString(number)) AS rid, concat('mrot-', toString(number)) AS mid,
    toUInt64(7000 + number) AS ikey, 'quota' AS kind, toUInt8(1) AS typed, toInt64(5000) AS ra
FROM numbers(15)
UNION ALL
SELECT concat('bare-', toString(number)) AS eid, toUInt64(%[1]d - 1000 - number * 700) AS ms, 'agent' AS sk, 'agent-bare' AS agent,
    concat('bare-', toString(number %% 3)) AS caller, toUInt16(1) AS attempt, concat('rbare-', toString(number)) AS rid,
    '' AS mid, toUInt64(0) AS ikey, 'internal' AS kind, toUInt8(0) AS typed, toInt64(-1) AS ra
FROM numbers(75)`, nowMS)))
}

type queryCost struct {
	name       string
	rows       uint64 // rows read, from the driver's progress (the alerter's own figure)
	took       time.Duration
	logRows    uint64 // from system.query_log
	logBytes   uint64
	logMS      uint64
	cpuUS      uint64 // UserTimeMicroseconds + SystemTimeMicroseconds
	memory     uint64
	resultRows uint64
	haveLog    bool
}

type evalCost struct {
	variant            string
	total, gather, eva time.Duration
	goGatherCPU        time.Duration
	goEvalCPU          time.Duration
	gatherAlloc        uint64
	evalAlloc          uint64
	evalMallocs        uint64
	queries            []queryCost
	chCPU              time.Duration
	chMS               uint64
	v                  *alerter.Verdicts
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureOnce measures one evaluation by src at now.
func measureOnce(t *testing.T, src *alerter.Reader, db, variant string, now time.Time, run int) evalCost {
	ctx := context.Background()
	conn := src.Conn
	prefix := fmt.Sprintf("scale-%s-%s-%d-%d-", db, variant, run, time.Now().UnixNano())
	ec := evalCost{variant: variant}
	src.QueryIDPrefix = prefix
	src.Observe = func(name string, rows uint64, took time.Duration, err error) {
		if err != nil {
			t.Errorf("query %s: %v", name, err)
		}
		ec.queries = append(ec.queries, queryCost{name: name, rows: rows, took: took})
	}
	cfg := alerter.DefaultConfig()
	if f := os.Getenv("ERRTRAIL_SCALE_CPUPROFILE"); f != "" && variant == "reduced" {
		out, err := os.Create(fmt.Sprintf("%s.%s.%d", f, db, run))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var ms0, ms1, ms2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	c0 := cpuTime()
	t0 := time.Now()
	in, err := src.Gather(ctx, &cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	ec.gather = time.Since(t0)
	c1 := cpuTime()
	runtime.ReadMemStats(&ms1)
	t1 := time.Now()
	ec.v = alerter.Evaluate(&cfg, in, nil)
	ec.eva = time.Since(t1)
	ec.total = time.Since(t0)
	c2 := cpuTime()
	runtime.ReadMemStats(&ms2)
	ec.goGatherCPU, ec.goEvalCPU = c1-c0, c2-c1
	ec.gatherAlloc = ms1.TotalAlloc - ms0.TotalAlloc
	ec.evalAlloc, ec.evalMallocs = ms2.TotalAlloc-ms1.TotalAlloc, ms2.Mallocs-ms1.Mallocs
	sort.Slice(ec.queries, func(i, j int) bool {
		return indexOf(alerter.QueryNames, ec.queries[i].name) < indexOf(alerter.QueryNames, ec.queries[j].name)
	})

	// The server's side, from system.query_log.
	if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, q := range ec.queries {
		byName[q.name] = i
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT query_id, read_rows, read_bytes, query_duration_ms, memory_usage, result_rows,
    arraySum(arrayMap((k, v) -> if(k IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'), v, 0), ProfileEvents.Names, ProfileEvents.Values))
FROM system.query_log
WHERE event_date >= yesterday() AND type = 2 AND startsWith(query_id, '%s')`, prefix))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var q queryCost
		if err := rows.Scan(&id, &q.logRows, &q.logBytes, &q.logMS, &q.memory, &q.resultRows, &q.cpuUS); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(id, prefix)
		i, ok := byName[name[:max(strings.LastIndexByte(name, '-'), 0)]]
		if !ok {
			continue
		}
		p := &ec.queries[i]
		p.logRows, p.logBytes, p.logMS, p.memory, p.resultRows, p.cpuUS, p.haveLog =
			q.logRows, q.logBytes, q.logMS, q.memory, q.resultRows, q.cpuUS, true
		ec.chCPU += time.Duration(q.cpuUS) * time.Microsecond
		ec.chMS += q.logMS
	}
	rows.Close()
	for _, q := range ec.queries {
		if !q.haveLog {
			t.Errorf("query %s: not in system.query_log", q.name)
		}
	}
	return ec
}

func logCost(t *testing.T, shape string, run int, ec evalCost) {
	t.Helper()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	t.Logf("%s run %d %-9s: evaluation %.0f ms (Gather %.0f ms, Evaluate %.1f ms); ClickHouse CPU %.0f ms over %d ms of queries; Go CPU Gather %.0f ms, Evaluate %.0f ms; Go alloc Gather %.1f MB, Evaluate %.1f MB in %d allocations",
		shape, run, ec.variant, ms(ec.total), ms(ec.gather), ms(ec.eva), ms(ec.chCPU), ec.chMS,
		ms(ec.goGatherCPU), ms(ec.goEvalCPU), float64(ec.gatherAlloc)/1e6, float64(ec.evalAlloc)/1e6, ec.evalMallocs)
	for _, q := range ec.queries {
		t.Logf("    %-17s %7.0f ms  rows read %9d  %7.1f MB  result rows %8d  CH CPU %6.0f ms  memory %6.1f MB",
			q.name, ms(q.took), q.logRows, float64(q.logBytes)/1e6, q.resultRows, float64(q.cpuUS)/1000, float64(q.memory)/1e6)
	}
}

func measureShape(t *testing.T, conn driver.Conn, sh scaleShape, runs int) {
	ctx := context.Background()
	db := "errtrail_alerter_scale_" + sh.name
	keep := os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != ""
	if !keep {
		t.Cleanup(func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) })
	}
	var nowS int64
	if os.Getenv("ERRTRAIL_SCALE_REUSE") == "1" {
		_ = conn.QueryRow(ctx, "SELECT max(now_s) FROM "+db+".scale_meta").Scan(&nowS)
	}
	if nowS == 0 {
		freshNamedDB(t, conn, db)
		nowS = time.Now().Unix()
		began := time.Now()
		sh.fill(t, conn, db, nowS*1000)
		if err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s.scale_meta (now_s Int64) ENGINE = TinyLog", db)); err != nil {
			t.Fatal(err)
		}
		if err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s.scale_meta SELECT toInt64(%d)", db, nowS)); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: filled in %s", sh.name, time.Since(began).Round(100*time.Millisecond))
		// Let background merges settle a little, as between evaluations
		// in steady state.
		for _, tb := range []string{"callers_1m", "errors"} {
			_ = conn.Exec(ctx, "OPTIMIZE TABLE "+db+"."+tb)
		}
	}
	now := time.Unix(nowS, 0)
	var nErrors, nCallers, nParts, nPairs, nWindowPairs uint64
	cfg := alerter.DefaultConfig()
	sp := cfg.SpanAt(now)
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count() FROM %[1]s.errors), (SELECT count() FROM %[1]s.callers_1m WHERE minute >= toDateTime(%[2]d) AND minute < toDateTime(%[3]d)),
    (SELECT count() FROM system.parts WHERE database = '%[1]s' AND table = 'callers_1m' AND active),
    (SELECT uniqExact(agent, caller) FROM %[1]s.callers_1m WHERE minute >= toDateTime(%[2]d) AND minute < toDateTime(%[3]d)),
    (SELECT uniqExact(agent, caller) FROM %[1]s.errors WHERE observed_at > toDateTime(%[4]d) AND observed_at <= toDateTime(%[5]d))`,
		db, sp.BaselineStart, sp.BaselineEnd, sp.WindowStart, sp.End)).Scan(&nErrors, &nCallers, &nParts, &nPairs, &nWindowPairs); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d rows in errors; baseline: %d rows of callers_1m (%d active parts), %d (agent, caller) pairs; %d pairs in the current window",
		sh.name, nErrors, nCallers, nParts, nPairs, nWindowPairs)

	// reduced: the Reader of a running alerter, whose previous evaluations
	// computed the agents' overload of all but the newest baseline minute
	// (warmed up at now - 1 min: the first evaluation of a Reader, "cold",
	// is measured on the way). reference: every bucket, every caller.
	variants := []string{"reduced", "reference"}
	var all []evalCost
	for run := 1; run <= runs; run++ {
		var got [2]evalCost
		for k := range variants {
			i := (k + run) % 2 // alternate which variant goes first
			if variants[i] == "reference" {
				got[i] = measureOnce(t, &alerter.Reader{Conn: conn, Database: db, Reference: true}, db, "reference", now, run)
				logCost(t, sh.name, run, got[i])
				continue
			}
			src := &alerter.Reader{Conn: conn, Database: db}
			cold := measureOnce(t, src, db, "cold", now.Add(-time.Minute), run)
			logCost(t, sh.name, run, cold)
			all = append(all, cold)
			got[i] = measureOnce(t, src, db, "reduced", now, run)
			logCost(t, sh.name, run, got[i])
		}
		if d := diffVerdicts(got[0].v, got[1].v); d != "" {
			t.Errorf("%s run %d: the reduced and the reference verdicts differ: %s", sh.name, run, d)
		}
		all = append(all, got[0], got[1])
	}
	v := all[len(all)-1].v // the latest at now (cold ones are a minute earlier)
	var flagged []string
	for _, a := range v.Agents {
		var what []string
		if a.Overloaded {
			what = append(what, "overloaded")
		}
		if a.LimitTooLow {
			what = append(what, "limit-too-low")
		}
		if a.Untyped {
			what = append(what, "untyped")
		}
		if a.RunawayCallers > 0 {
			what = append(what, fmt.Sprintf("%d runaway", a.RunawayCallers))
		}
		if a.RetryStormCallers > 0 {
			what = append(what, fmt.Sprintf("%d retry storm", a.RetryStormCallers))
		}
		if a.Gateway != nil && a.Gateway.Mangling {
			what = append(what, "gateway mangling")
		}
		if len(what) > 0 {
			flagged = append(flagged, a.Agent+": "+strings.Join(what, ", "))
		}
	}
	sort.Strings(flagged)
	t.Logf("%s: %d agents (%d seen, %d capped), history %.0f s; verdicts: %s", sh.name, len(v.Agents), v.AgentsSeen, v.AgentsCapped,
		v.HistorySeconds, strings.Join(flagged, "; "))
	for _, variant := range []string{"reduced", "cold", "reference"} {
		var totals, chs, gos []float64
		for _, ec := range all {
			if ec.variant == variant {
				totals = append(totals, float64(ec.total.Milliseconds()))
				chs = append(chs, float64(ec.chCPU.Milliseconds()))
				gos = append(gos, float64((ec.goGatherCPU + ec.goEvalCPU).Milliseconds()))
			}
		}
		t.Logf("%s %-9s: evaluation %s ms; ClickHouse CPU %s ms; Go CPU %s ms", sh.name, variant,
			spread(totals), spread(chs), spread(gos))
	}
}

func spread(xs []float64) string {
	sort.Float64s(xs)
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f–%.0f (median %.0f)", xs[0], xs[len(xs)-1], xs[len(xs)/2])
}

// diffVerdicts describes the first difference between a and b (NaN equals
// NaN), or returns "".
func diffVerdicts(a, b *alerter.Verdicts) string {
	return diffValue("Verdicts", reflect.ValueOf(a), reflect.ValueOf(b))
}

func diffValue(path string, a, b reflect.Value) string {
	if a.Kind() != b.Kind() {
		return path + ": kinds differ"
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v vs %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return diffValue(path, a.Elem(), b.Elem())
	case reflect.Struct:
		if ta, ok := a.Interface().(time.Time); ok {
			if !ta.Equal(b.Interface().(time.Time)) {
				return fmt.Sprintf("%s: %v vs %v", path, ta, b.Interface())
			}
			return ""
		}
		for i := 0; i < a.NumField(); i++ {
			if d := diffValue(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := diffValue(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Float64:
		x, y := a.Float(), b.Float()
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return fmt.Sprintf("%s: %v vs %v", path, x, y)
		}
		return ""
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
		}
		return ""
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
