package api

// TestMeasureStoryLatency is a measurement, not a test: it is skipped
// unless ERRTRAIL_MEASURE=1, asserts no timing, and prints a table. It
// times the story of one error (GET /v1/errors/{error_id}) through the
// HTTP API (api.New with a real lookup.Finder, on an httptest server, so
// the figures include routing and JSON encoding) on a database that
// lookup's benchmark filled, while a writer keeps inserting realistic rows
// into landing at ERRTRAIL_MEASURE_RATE events/s (default 20,000), one
// batch a second as ingest does, so the freshest parts are not merged.
//
// Two cases alternate request by request (fresh, merged, fresh, ...), so
// the noise of a shared machine falls on both alike:
//
//   - fresh: an error_id the writer stored in the last five minutes;
//   - merged: an error_id of the filled rows at least a day old.
//
// For each request it records the wall time through HTTP, the Finder's
// own steps (find = the record by error_id, attempts, minutes, verdicts and
// the alerter's queries within them) and, from system.query_log, the
// server-side duration, CPU and rows read of every query of the request.
//
// Fill once into a kept database (several minutes for 10 million rows):
//
//	source .stack/env
//	ERRTRAIL_BENCH_ROWS=10000000 ERRTRAIL_BENCH_DB=errtrail_bench_10m \
//	    go test ./lookup -run '^$' -bench Story -benchtime 1x -timeout 60m
//
// then measure:
//
//	ERRTRAIL_MEASURE=1 ERRTRAIL_MEASURE_DB=errtrail_bench_10m \
//	    go test ./api -run TestMeasureStoryLatency -count=1 -v -timeout 30m
//
// The story reads the verdicts the alerter recorded (lookup.VerdictsRecorded,
// two point reads) as it does in production: before measuring, the test
// notes every minute of the filled week and of the run as recorded in
// alerter_minutes and stores 20 episodes per agent over the week in
// incidents (writer "measure", once per database). After each pair of
// stories it also times the incidents page (web.New over an
// incidents.Store: the timeline's SVG and the table) of one agent and of
// every agent over the default week.
//
// Knobs: ERRTRAIL_MEASURE_RECORDED=0 (no recorded minutes are added: the
// story recomputes the verdicts, as before the incidents existed; minutes
// an earlier run recorded stay), ERRTRAIL_MEASURE_N (requests per case, default 300),
// ERRTRAIL_MEASURE_RATE (writer events/s; 0 turns the writer off),
// ERRTRAIL_MEASURE_WARMUP (writer time before the first request, default
// 60s), ERRTRAIL_MEASURE_RETRY_STORMS=1 (the story also computes the
// retry-storm verdict, lookup.Finder.RetryStorms),
// ERRTRAIL_MEASURE_VERDICT_BUDGET_MS (lookup.Finder.VerdictBudget; the
// table counts the stories answered without their verdicts).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
	"github.com/errtrail/errtrail/schema"
	"github.com/errtrail/errtrail/web"
)

// recordMeasureIncidents notes every minute of [from, to) as recorded by
// alerter "measure" and, unless the database has them already, stores 20
// episodes of each of the fill's 100 agents over the week before end, of
// every kind, each an hour long or less, a few still open.
func recordMeasureIncidents(t *testing.T, ctx context.Context, conn driver.Conn, db string, from, to, end time.Time, minutes bool) {
	t.Helper()
	if minutes {
		b, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+"."+incidents.MinutesTable+" (minute, writer, last_at)")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := from.Truncate(time.Minute); m.Before(to); m = m.Add(time.Minute) {
			if err := b.Append(m.UTC(), "measure", m.UTC().Add(50*time.Second)); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
		t.Logf("noted %d minutes as recorded by alerter \"measure\"", n)
	}
	var have uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".incidents WHERE writer = 'measure'").Scan(&have); err != nil {
		t.Fatal(err)
	}
	if have > 0 {
		return
	}
	var rows []incidents.Incident
	for a := 0; a < 100; a++ {
		for e := 0; e < 20; e++ {
			start := end.Add(-7*24*time.Hour + time.Duration(e)*8*time.Hour + time.Duration(a)*time.Minute).UTC().Truncate(time.Second)
			kind := incidents.Kinds[(a+e)%len(incidents.Kinds)]
			i := incidents.Incident{Kind: kind, Agent: "agent-" + strconv.Itoa(a), Start: start, Fired: start.Add(time.Minute),
				LastSeen: start.Add(time.Duration(10+e) * time.Minute), PeakRate: float64(e + 1), PeakCallers: uint32(a%7 + 1),
				PeakCount: uint64(100 * (e + 1)), Evaluations: uint32(60 + e), Writer: "measure", Version: uint64(start.UnixMilli())}
			if kind == incidents.Runaway || kind == incidents.RetryStorm {
				i.Caller = "caller-" + strconv.Itoa(a*10+e)
			}
			if e != 19 || a%10 != 0 {
				i.End = i.LastSeen.Add(10 * time.Second)
			}
			rows = append(rows, i)
		}
	}
	if err := incidents.Write(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("stored %d episodes in %s.incidents", len(rows), db)
}

func measureEnv(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number >= 0", name, v)
	}
	return n
}

// measureReq is what one request of the measurement saw.
type measureReq struct {
	kind   string // fresh or merged
	http   time.Duration
	story  time.Duration // inside the Finder
	steps  map[string]time.Duration
	srvMS  float64 // ClickHouse: sum of query_duration_ms of the request's queries
	cpuMS  float64 // ClickHouse: user + system CPU of them
	rows   uint64  // ClickHouse: rows read by them
	byName map[string][3]float64
	late   bool // the verdicts missed the budget
}

// storyProbe is the lookup.Service the api serves in the measurement: a
// new lookup.Finder per story, whose queries carry the request's query id
// prefix and whose steps are recorded into cur.
type storyProbe struct {
	conn        driver.Conn
	db          string
	retryStorms bool
	budget      time.Duration
	run         string
	cur         atomic.Pointer[measureReq]
	seq         atomic.Int64
	mu          sync.Mutex
	prefixes    map[string]*measureReq
	lastErr     atomic.Value
}

func (p *storyProbe) Story(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error) {
	req := p.cur.Load()
	prefix := fmt.Sprintf("%s-%s-%d-", p.run, req.kind, p.seq.Add(1))
	p.mu.Lock()
	p.prefixes[prefix] = req
	p.mu.Unlock()
	f := &lookup.Finder{Conn: p.conn, Database: p.db, RetryStorms: p.retryStorms, VerdictBudget: p.budget, QueryIDPrefix: prefix,
		Recompute: &alerter.Recomputer{Conn: p.conn, Database: p.db},
		Observe:   func(step string, _ uint64, took time.Duration, _ error) { req.steps[step] += took }}
	start := time.Now()
	st, err := f.Story(ctx, id, opt)
	req.story = time.Since(start)
	if err != nil {
		p.lastErr.Store(err.Error())
	}
	return st, err
}

func (p *storyProbe) List(context.Context, lookup.ListQuery) (*lookup.Page, error) {
	return nil, fmt.Errorf("not measured")
}
func (p *storyProbe) Ready(context.Context) error { return nil }

type noReports struct{}

func (noReports) Report(context.Context, string, time.Time, time.Time) (*report.Report, error) {
	return nil, fmt.Errorf("not measured")
}

// liveWriter inserts rows shaped like lookup.Fill's into landing at rate
// events/s, one batch a second, observed at the moment of writing. Row i
// has error_id "err_live_<run>_<i>".
type liveWriter struct {
	conn driver.Conn
	opts schema.Options
	run  string
	rate int

	mu      sync.Mutex
	batches []liveBatch // the batches stored, oldest first
	written atomic.Int64
	failed  atomic.Int64
	lastErr atomic.Value
}

type liveBatch struct {
	lo, n int64
	at    time.Time // when it was stored
}

func (w *liveWriter) loop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start := time.Now()
	var next int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		due := int64(time.Since(start).Seconds()*float64(w.rate)) - next
		if due <= 0 {
			continue
		}
		due = min(due, int64(3*w.rate)) // do not pile up behind a slow server
		if err := w.batch(ctx, next, due); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.failed.Add(1)
			w.lastErr.Store(err.Error())
			continue
		}
		w.mu.Lock()
		w.batches = append(w.batches, liveBatch{lo: next, n: due, at: time.Now()})
		w.mu.Unlock()
		w.written.Add(due)
		next += due
	}
}

func (w *liveWriter) batch(ctx context.Context, lo, n int64) error {
	b, err := w.conn.PrepareBatch(ctx, schema.LandingInsert(w.opts))
	if err != nil {
		return err
	}
	defer b.Abort()
	now := time.Now()
	kinds := []string{"quota", "overload", "invalid", "auth", "not_found", "conflict", "unsupported", "internal", "unknown"}
	statuses := []uint16{429, 503, 400, 401, 404, 409, 501, 500, 502}
	grpc := []string{"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INVALID_ARGUMENT", "UNAUTHENTICATED", "NOT_FOUND", "ALREADY_EXISTS", "UNIMPLEMENTED", "INTERNAL", ""}
	codes := []string{"RATE_LIMIT_EXCEEDED", "AGENT_OVERLOADED", "INVALID_ARGUMENT", "", "TASK_NOT_FOUND", "", "", "", ""}
	msgs := []string{"Caller exceeded 60 SendMessage calls per minute", "Agent overloaded", "Invalid parameters", "Unauthenticated", "Task not found", "Conflict", "Unsupported", "Internal error", ""}
	protocols := []string{"a2a", "mcp", "aap", "agentrelay"}
	none := []string{}
	for j := int64(0); j < n; j++ {
		i := lo + j
		k := 0 // as lookup.Fill: 60 % quota, the rest spread over the kinds
		if i%10 >= 6 {
			k = int(i % 9)
		}
		obsMS := now.Add(-time.Duration(rand.Int63n(int64(time.Second)))).UnixMilli()
		sfx := w.run + "_" + strconv.FormatInt(i, 10)
		agent := "agent-" + strconv.FormatInt(i%100, 10)
		src := "agent"
		if i%10 == 0 {
			src = "gateway"
		}
		var idem uint64
		if i%4 == 0 {
			idem = uint64(i/3)*0x9e3779b97f4a7c15 + 1
		}
		retryAfter, raSrc, domain, limit, scope := int64(-1), "", "", "", ""
		if k <= 1 {
			retryAfter, raSrc, domain = 1000*(i%20+1), "retry_info", "agents.example.com"
		}
		if k == 0 {
			limit, scope = "per-caller", "caller"
		} else if k == 1 {
			scope = "agent"
		}
		retryable := []int8{1, 1, 0, 0, 0, 0, 0, 1, -1}[k]
		typed := uint8(0)
		if k <= 4 {
			typed = 1
		}
		findings := none
		if k == 8 {
			findings = []string{"untyped_5xx"}
		}
		err := b.Append(uint8(0), "live-"+sfx, time.Unix(obsMS/1000, 0).UTC(), uint64(obsMS), now.UTC().Truncate(time.Second),
			"errtrail.replies", int32(i%12), i,
			src, "", agent, "https://"+agent+".example/a2a", "caller-"+strconv.FormatInt(i%1000, 10), "SendMessage",
			uint16(i%3+1), "hreq_live_"+sfx, strconv.FormatInt(i%50, 10),
			"lm-"+w.run+"_"+strconv.FormatInt(i/3, 10), "lt-"+w.run+"_"+strconv.FormatInt(i/30, 10), idem,
			protocols[i%4], "http", "rpc_status", statuses[k], grpc[k], int32(0),
			codes[k], codes[k], domain, kinds[k], typed,
			retryable, "default", retryAfter, raSrc, limit, scope,
			"err_live_"+sfx, "req_live_"+sfx, msgs[k], none, none, findings, "", "", "", "",
			"", "", "event", none, uint32(0))
		if err != nil {
			return err
		}
	}
	return b.Send()
}

// fresh returns an error_id stored in the last five minutes (at least a
// second ago), or "" when there is none yet.
func (w *liveWriter) fresh(rng *rand.Rand) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	var from int
	for from < len(w.batches) && now.Sub(w.batches[from].at) > 5*time.Minute {
		from++
	}
	var ok []liveBatch
	for _, b := range w.batches[from:] {
		if now.Sub(b.at) >= time.Second {
			ok = append(ok, b)
		}
	}
	if len(ok) == 0 {
		return ""
	}
	b := ok[rng.Intn(len(ok))]
	return "err_live_" + w.run + "_" + strconv.FormatInt(b.lo+rng.Int63n(b.n), 10)
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p * float64(len(s)))
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

func TestMeasureStoryLatency(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("a measurement: set ERRTRAIL_MEASURE=1 (and ERRTRAIL_MEASURE_DB, filled by lookup's benchmark)")
	}
	db := os.Getenv("ERRTRAIL_MEASURE_DB")
	if db == "" {
		db = "errtrail_bench_10m"
	}
	n := measureEnv(t, "ERRTRAIL_MEASURE_N", 300)
	rate := measureEnv(t, "ERRTRAIL_MEASURE_RATE", 20000)
	warmup := time.Duration(measureEnv(t, "ERRTRAIL_MEASURE_WARMUP", 60)) * time.Second
	ctx := context.Background()
	addr := testenv.ClickHouse(t)
	// The lookups' connection logs its queries (system.query_log), the
	// writer's does not.
	open := func(settings clickhouse.Settings) driver.Conn {
		c, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), ReadTimeout: 5 * time.Minute,
			MaxOpenConns: 20, MaxIdleConns: 20, Settings: settings})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	conn, wconn := open(clickhouse.Settings{"log_queries": 1}), open(nil)

	// The filled rows: lookup.Fill's row i is "bench-<i>", spread evenly
	// over the 7 days before its end.
	var filled uint64
	var lastMS uint64
	if err := conn.QueryRow(ctx, "SELECT count(), max(observed_at_ms) FROM "+db+".errors WHERE startsWith(event_id, 'bench-')").Scan(&filled, &lastMS); err != nil {
		t.Fatalf("database %s: %v (fill it with lookup's benchmark, see the comment)", db, err)
	}
	if filled < 1000 {
		t.Fatalf("database %s has %d filled rows: fill it with lookup's benchmark first", db, filled)
	}
	// A database filled by an older build is brought to the current
	// schema first: the writer inserts every current column.
	if res, err := schema.Migrate(ctx, wconn, schema.Options{Database: db}); err != nil {
		t.Fatalf("migrating %s: %v", db, err)
	} else if len(res.Applied) > 0 {
		t.Logf("migrated %s: %v", db, res.Applied)
	}
	run := "m" + strconv.FormatInt(time.Now().Unix()%1e6, 36)
	t.Logf("database %s: %d filled rows, the last at %s; run %s", db, filled, time.UnixMilli(int64(lastMS)).UTC().Format(time.RFC3339), run)

	recorded := os.Getenv("ERRTRAIL_MEASURE_RECORDED") != "0"
	fillEnd := time.UnixMilli(int64(lastMS))
	recordMeasureIncidents(t, ctx, wconn, db, fillEnd.Add(-7*24*time.Hour-time.Hour), time.Now().Add(time.Hour), fillEnd, recorded)
	pages := httptest.NewServer(web.New(web.Config{Incidents: incidents.Store{Conn: conn, Database: db}}, nil, nil))
	defer pages.Close()
	var pageAll, pageOne []float64
	page := func(path string, into *[]float64) {
		start := time.Now()
		resp, err := pages.Client().Get(pages.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<svg") {
			t.Fatalf("incidents page %s: status %d, %v, no timeline: %.300s", path, resp.StatusCode, err, body)
		}
		*into = append(*into, float64(time.Since(start).Microseconds())/1000)
	}

	w := &liveWriter{conn: wconn, opts: schema.Options{Database: db}, run: run, rate: rate}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if rate > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); w.loop(wctx) }()
	}
	defer func() { stop(); wg.Wait() }()
	writeStart := time.Now()

	probe := &storyProbe{conn: conn, db: db, run: run, retryStorms: os.Getenv("ERRTRAIL_MEASURE_RETRY_STORMS") == "1",
		prefixes: map[string]*measureReq{}, budget: time.Duration(measureEnv(t, "ERRTRAIL_MEASURE_VERDICT_BUDGET_MS", 0)) * time.Millisecond}
	cfg := DefaultConfig()
	cfg.RPS = 0
	srv, err := New(cfg, probe, noReports{}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client := hs.Client()

	if rate > 0 {
		time.Sleep(warmup)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	// Merged: rows at least a day before the fill's end.
	mergedN := int64(float64(filled) * 6 / 7)
	var reqs []*measureReq
	get := func(kind, id string) {
		req := &measureReq{kind: kind, steps: map[string]time.Duration{}}
		probe.cur.Store(req)
		start := time.Now()
		resp, err := client.Get(hs.URL + "/v1/errors/" + id)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		req.http = time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s id: status %d, %v: %.300s (the lookup said: %v)", kind, resp.StatusCode, err, body, probe.lastErr.Load())
		}
		var st lookup.Story
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		if want := lookup.VerdictsRecorded; recorded && st.Context.VerdictSource != want && st.Context.VerdictError == "" {
			t.Fatalf("%s: the story's verdicts are %q; want %q (the minutes were noted as recorded)", kind, st.Context.VerdictSource, want)
		}
		if st.Context.VerdictError != "" {
			if probe.budget == 0 || !strings.Contains(st.Context.VerdictError, "not computed in time") {
				t.Fatalf("%s: %s", kind, st.Context.VerdictError)
			}
			req.late = true
		}
		reqs = append(reqs, req)
	}
	for i := 0; i < n; i++ {
		if rate > 0 {
			id := w.fresh(rng)
			if id == "" {
				t.Fatalf("the writer has stored nothing yet (%d failed batches, the last: %v)", w.failed.Load(), w.lastErr.Load())
			}
			get("fresh", id)
		}
		get("merged", "err_bench_"+strconv.FormatInt(rng.Int63n(mergedN), 10))
		page("/incidents?agent=agent-"+strconv.Itoa(i%100), &pageOne)
		page("/incidents", &pageAll)
	}
	measured := time.Since(writeStart)
	stop()
	wg.Wait()
	if rate > 0 {
		reached := float64(w.written.Load()) / measured.Seconds()
		t.Logf("writer: %d events in %v, %.0f events/s (target %d), %d failed batches %v",
			w.written.Load(), measured.Round(time.Second), reached, rate, w.failed.Load(), w.lastErr.Load())
	}

	// ClickHouse's own account of every query.
	if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT query_id, query_duration_ms, read_rows,
    arraySum(arrayMap((k, v) -> if(k IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'), v, 0), ProfileEvents.Names, ProfileEvents.Values))
FROM system.query_log
WHERE type = 2 AND event_date >= yesterday() AND startsWith(query_id, ?)`, run+"-")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var qid string
		var ms, read, cpu uint64
		if err := rows.Scan(&qid, &ms, &read, &cpu); err != nil {
			t.Fatal(err)
		}
		// prefix: run-kind-seq-, then the step or "verdicts-<query>-<n>".
		parts := strings.SplitN(qid, "-", 4)
		if len(parts) < 4 {
			continue
		}
		req := probe.prefixes[strings.Join(parts[:3], "-")+"-"]
		if req == nil {
			continue
		}
		name := parts[3][:strings.LastIndex(parts[3], "-")]
		req.srvMS += float64(ms)
		req.cpuMS += float64(cpu) / 1000
		req.rows += read
		if req.byName == nil {
			req.byName = map[string][3]float64{}
		}
		x := req.byName[name]
		req.byName[name] = [3]float64{x[0] + float64(ms), x[1] + float64(read), x[2] + float64(cpu)/1000}
	}
	rows.Close()

	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	var out strings.Builder
	fmt.Fprintf(&out, "\nstory of one error_id through the HTTP API, %d requests per case, alternated\n", n)
	fmt.Fprintf(&out, "%-40s %10s %10s %10s %10s\n", "", "fresh p50", "fresh p99", "merged p50", "merged p99")
	line := func(label string, f func(*measureReq) (float64, bool)) {
		var fr, me []float64
		for _, r := range reqs {
			v, ok := f(r)
			if !ok {
				continue
			}
			if r.kind == "fresh" {
				fr = append(fr, v)
			} else {
				me = append(me, v)
			}
		}
		fmt.Fprintf(&out, "%-40s %10.1f %10.1f %10.1f %10.1f\n", label, pct(fr, .5), pct(fr, .99), pct(me, .5), pct(me, .99))
	}
	line("HTTP story, ms", func(r *measureReq) (float64, bool) { return ms(r.http), true })
	line("  Finder.Story, ms", func(r *measureReq) (float64, bool) { return ms(r.story), true })
	line("  HTTP + encoding, ms", func(r *measureReq) (float64, bool) { return ms(r.http - r.story), true })
	steps := map[string]bool{}
	for _, r := range reqs {
		for s := range r.steps {
			steps[s] = true
		}
	}
	var names []string
	for s := range steps {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		line("  step "+s+", ms", func(r *measureReq) (float64, bool) { d, ok := r.steps[s]; return ms(d), ok })
	}
	line("ClickHouse query ms (sum)", func(r *measureReq) (float64, bool) { return r.srvMS, true })
	line("ClickHouse CPU ms (user+sys)", func(r *measureReq) (float64, bool) { return r.cpuMS, true })
	line("ClickHouse rows read", func(r *measureReq) (float64, bool) { return float64(r.rows), true })
	qnames := map[string]bool{}
	for _, r := range reqs {
		for q := range r.byName {
			qnames[q] = true
		}
	}
	names = names[:0]
	for q := range qnames {
		names = append(names, q)
	}
	sort.Strings(names)
	for _, q := range names {
		line("  query "+q+", server ms", func(r *measureReq) (float64, bool) { x, ok := r.byName[q]; return x[0], ok })
		line("  query "+q+", CPU ms", func(r *measureReq) (float64, bool) { x, ok := r.byName[q]; return x[2], ok })
		line("  query "+q+", rows read", func(r *measureReq) (float64, bool) { x, ok := r.byName[q]; return x[1], ok })
	}
	var late [2]int
	for _, r := range reqs {
		if r.late {
			late[map[string]int{"fresh": 0, "merged": 1}[r.kind]]++
		}
	}
	if probe.budget > 0 {
		fmt.Fprintf(&out, "verdicts past the %v budget: fresh %d, merged %d\n", probe.budget, late[0], late[1])
	}
	fmt.Fprintf(&out, "verdicts read from the recorded incidents: %v\n", recorded)
	fmt.Fprintf(&out, "%-40s %10.1f %10.1f\n", "incidents page, one agent, week, ms", pct(pageOne, .5), pct(pageOne, .99))
	fmt.Fprintf(&out, "%-40s %10.1f %10.1f\n", "incidents page, every agent, week, ms", pct(pageAll, .5), pct(pageAll, .99))
	var load string
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.TrimSpace(string(b))
	}
	fmt.Fprintf(&out, "load average at the end: %s\n", load)
	t.Log(out.String())
}
