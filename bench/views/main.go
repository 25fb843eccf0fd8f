// Command views measures what each part of errtrail's schema costs the
// ClickHouse server in CPU per event: the ten materialized views on
// landing one by one (leave-one-out), the two group rollups together
// (no-groups), error_lookup with three id kinds
// instead of six, and message sizes (100 B, 8 KiB, 64 KiB, 64 KiB capped
// at 8 KiB in mv1_errors_v8).
//
//	cd bench/views && go run . [-rounds 3] [-k 10] [-rows 50000] [-variants all,none,...]
//
// Each variant is the real schema (schema.Migrate) in its own database
// (errtrail_views_*), with views dropped or re-created. Rows are generated
// on the server (INSERT … SELECT from system.numbers), so no client cost is
// counted; the "none" variants (landing without views) measure the
// generation alone. Per round, in a rotated order, each variant gets K
// inserts, then the program waits until its database has had no merge for
// -quiet. The clickhouse-server process's CPU (/proc/<pid>/stat) is read
// around both windows, minus its idle rate measured before the round.
// See README.md for how to read the output.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/schema"

	"errtrail.bench/procstat"
)

type config struct {
	addr, root, out, only  string
	rounds, k              int
	rows, batchBytes, rate int64
	idle, quiet, maxSettle time.Duration
	keep                   bool
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", "127.0.0.1:19000", "ClickHouse native address")
	flag.StringVar(&c.root, "root", "../..", "repository root (for .stack/clickhouse/clickhouse.pid)")
	flag.StringVar(&c.out, "out", "2026-12-01-run.txt", "also write the output to this file (empty: stdout only)")
	flag.StringVar(&c.only, "variants", "", "comma-separated variants to run (default: all of them)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds")
	flag.IntVar(&c.k, "k", 10, "inserts per variant and round")
	flag.Int64Var(&c.rows, "rows", 50000, "rows per insert")
	flag.Int64Var(&c.batchBytes, "batch-bytes", 64<<20, "fewer rows per insert when rows × message bytes exceed this (ingest's --batch.bytes)")
	flag.Int64Var(&c.rate, "event-rate", 20000, "event time advances by one second every this many rows")
	flag.DurationVar(&c.idle, "idle", 4*time.Second, "idle measurement before each round")
	flag.DurationVar(&c.quiet, "quiet", 2*time.Second, "a variant has settled once its database had no merge for this long")
	flag.DurationVar(&c.maxSettle, "max-settle", 90*time.Second, "give up waiting for merges after this long")
	flag.BoolVar(&c.keep, "keep", false, "keep the databases at the end")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "views:", err)
		os.Exit(1)
	}
}

// result is one variant in one round.
type result struct {
	v                  variant
	round              int
	events             int64
	rowsPerInsert      int64
	insWall, setWall   time.Duration
	insCPU, setCPU     time.Duration // process CPU, idle not yet subtracted
	insGroup, setGroup map[string]time.Duration
	mergeWall          time.Duration // Σ merges running in the database × time, both windows
	qlog               time.Duration // the INSERTs' own CPU from system.query_log
	qlogN              int
	idle               idleRate
	load               string
}

// idleRate is the server's CPU per second of wall time while this program
// only polls system.merges, overall and by thread group.
type idleRate struct {
	total float64
	group map[string]float64
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// perEvent converts CPU over a window to µs per event, minus the idle rate.
func perEvent(cpu, wall time.Duration, idle float64, events int64) float64 {
	return (us(cpu) - idle*us(wall)) / float64(events)
}

func (r result) ins() float64     { return perEvent(r.insCPU, r.insWall, r.idle.total, r.events) }
func (r result) set() float64     { return perEvent(r.setCPU, r.setWall, r.idle.total, r.events) }
func (r result) total() float64   { return r.ins() + r.set() }
func (r result) qlogIns() float64 { return us(r.qlog) / float64(r.events) }
func (r result) group(g string) float64 {
	return perEvent(r.insGroup[g]+r.setGroup[g], r.insWall+r.setWall, r.idle.group[g], r.events)
}
func (r result) mwall() float64 { return us(r.mergeWall) / float64(r.events) }

type bench struct {
	c      config
	conn   driver.Conn
	ver    schema.ServerVersion
	pid    int
	out    io.Writer
	runID  string
	base   int64            // first event second (Unix)
	offset map[string]int64 // next row number per variant
	m      *mergeWatch
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var out io.Writer = os.Stdout
	if c.out != "" {
		f, err := os.Create(c.out)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(os.Stdout, f)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{c.addr}, ReadTimeout: 30 * time.Minute, MaxOpenConns: 4})
	if err != nil {
		return err
	}
	defer conn.Close()
	b := &bench{c: c, conn: conn, out: out, offset: map[string]int64{},
		runID: strconv.FormatInt(time.Now().Unix(), 10), base: time.Now().Unix() - 3600}
	if b.ver, err = schema.DetectVersion(ctx, conn); err != nil {
		return err
	}
	if b.pid, err = procstat.StackServer(c.root, c.addr); err != nil {
		return err
	}
	vs, err := pick(allVariants(), c.only)
	if err != nil {
		return err
	}

	b.printf("# %s, ClickHouse %s (pid %d), %d rounds × %d inserts of up to %d rows (at most %d message bytes per insert), %d variants, load %s\n",
		time.Now().UTC().Format(time.RFC3339), b.ver, b.pid, c.rounds, c.k, c.rows, c.batchBytes, len(vs), procstat.LoadAvg())
	b.printf("# µs/event of clickhouse-server CPU (utime+stime of the whole process) minus its idle rate measured before each round\n")
	b.printf("#   ins = during the K INSERTs; qlog = the INSERTs' own CPU from system.query_log (other clients' work excluded);\n")
	b.printf("#   settle = after the INSERTs until the database had no merge for %s; total = ins + settle;\n", c.quiet)
	b.printf("#   pool = the merge pool's threads (BackgrProcPool), queries = all other threads, both over both windows and idle-corrected;\n")
	b.printf("#   mwall = Σ merges running in the variant's database × time (system.merges polled every 100 ms; wall time, not CPU)\n")

	if err := b.dropLeftovers(ctx); err != nil {
		return err
	}
	if !c.keep {
		defer b.dropLeftovers(context.Background())
	}
	if err := codecProbe(ctx, conn); err != nil {
		b.printf("# codec probe: CREATE TABLE … (message String CODEC(ZSTD(1)), other String CODEC(LZ4)) fails on %s: %s\n", b.ver, firstLine(err.Error()))
		b.printf("#   so there are no codec variants on this server (schema renders codecs from 19.1 on)\n")
	} else {
		b.printf("# codec probe: the server accepts column CODEC syntax; this program has no codec variants yet (add them here)\n")
	}
	for _, v := range vs {
		if err := setup(ctx, conn, b.ver, v); err != nil {
			return fmt.Errorf("setup %s: %w", v.name, err)
		}
	}
	b.m = newMergeWatch()
	go b.m.run(ctx, conn, 100*time.Millisecond)

	// Warm-up: one insert per variant, not measured, so that every target
	// table has parts, the caches are warm and the first round is not
	// the only one that pays for that.
	for _, v := range vs {
		if err := b.insert(ctx, v, "warmup", 0); err != nil {
			return err
		}
	}
	for _, v := range vs {
		b.settle(ctx, v.db(), time.Now())
	}

	var results []result
	for round := 1; round <= c.rounds; round++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		idle, err := b.measureIdle(ctx)
		if err != nil {
			return err
		}
		order := rotate(vs, (round-1)*max(1, len(vs)/c.rounds))
		names := make([]string, len(order))
		for i, v := range order {
			names[i] = v.name
		}
		b.printf("\n## round %d, load %s, idle %.1f%% of a core (queries %.1f%%, pool %.1f%%); order: %s\n",
			round, procstat.LoadAvg(), idle.total*100, idle.group["queries"]*100, idle.group["merges"]*100, strings.Join(names, " → "))
		b.printf("  %-22s %8s %7s %8s %7s %7s %8s %7s %7s %7s %9s  %s\n",
			"variant", "events", "ins s", "ins", "set s", "settle", "total", "queries", "pool", "mwall", "events/s", "load")
		for _, v := range order {
			r, err := b.measure(ctx, v, round, idle)
			if err != nil {
				return err
			}
			results = append(results, r)
			b.printf("  %-22s %8d %7.1f %8.2f %7.1f %7.2f %8.2f %7.2f %7.2f %7.2f %9.0f  %s\n",
				v.name, r.events, r.insWall.Seconds(), r.ins(), r.setWall.Seconds(), r.set(), r.total(),
				r.group("queries"), r.group("merges"), r.mwall(), float64(r.events)/r.insWall.Seconds(), r.load)
		}
	}
	if err := b.readQueryLog(ctx, results); err != nil {
		b.printf("# query_log: %v\n", err)
	}
	b.summary(results, vs)
	b.tables(ctx, vs)
	return nil
}

func (b *bench) printf(format string, a ...any) { fmt.Fprintf(b.out, format, a...) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func pick(all []variant, only string) ([]variant, error) {
	if only == "" {
		return all, nil
	}
	var out []variant
	for _, name := range strings.Split(only, ",") {
		found := false
		for _, v := range all {
			if v.name == strings.TrimSpace(name) {
				out, found = append(out, v), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown variant %q", name)
		}
	}
	// A variant is only useful next to the one it is compared with.
	for _, v := range out {
		for _, need := range []string{v.base, "all"} {
			if !hasVariant(out, need) {
				for _, w := range all {
					if w.name == need {
						out = append(out, w)
					}
				}
			}
		}
	}
	return out, nil
}

func hasVariant(vs []variant, name string) bool {
	for _, v := range vs {
		if v.name == name {
			return true
		}
	}
	return false
}

func rotate(vs []variant, by int) []variant {
	by %= len(vs)
	return append(append([]variant{}, vs[by:]...), vs[:by]...)
}

func (b *bench) rowsPerInsert(v variant) int64 {
	return max(1, min(b.c.rows, b.c.batchBytes/int64(v.msg)))
}

// insert runs one INSERT … SELECT into the variant's landing; query_log
// keeps its CPU under a query id naming the run, variant and round.
func (b *bench) insert(ctx context.Context, v variant, round string, i int) error {
	n := b.rowsPerInsert(v)
	q := fillQuery(v.db(), b.offset[v.name], n, v.msg, b.base, b.c.rate)
	id := fmt.Sprintf("errtrail-views-%s/%s/%s/%d", b.runID, v.name, round, i)
	qctx := clickhouse.Context(ctx, clickhouse.WithQueryID(id), clickhouse.WithSettings(clickhouse.Settings{"log_queries": 1}))
	if err := b.conn.Exec(qctx, q); err != nil {
		return fmt.Errorf("insert into %s: %w", v.db(), err)
	}
	b.offset[v.name] += n
	return nil
}

func (b *bench) measure(ctx context.Context, v variant, round int, idle idleRate) (result, error) {
	r := result{v: v, round: round, idle: idle, load: procstat.LoadAvg(), rowsPerInsert: b.rowsPerInsert(v)}
	db := v.db()
	m0 := b.m.busyOf(db)
	s0, err := takeSample(b.pid)
	if err != nil {
		return r, err
	}
	for i := 0; i < b.c.k; i++ {
		if err := b.insert(ctx, v, strconv.Itoa(round), i); err != nil {
			return r, err
		}
		r.events += r.rowsPerInsert
	}
	s1, err := takeSample(b.pid)
	if err != nil {
		return r, err
	}
	b.settle(ctx, db, s1.at)
	s2, err := takeSample(b.pid)
	if err != nil {
		return r, err
	}
	r.insWall, r.insCPU, r.insGroup = s1.at.Sub(s0.at), s1.total-s0.total, byGroup(s0, s1)
	r.setWall, r.setCPU, r.setGroup = s2.at.Sub(s1.at), s2.total-s1.total, byGroup(s1, s2)
	r.mergeWall = b.m.busyOf(db) - m0
	return r, nil
}

// settle waits until db has had no merge for -quiet (by the watcher's polls
// after since), or -max-settle passed.
func (b *bench) settle(ctx context.Context, db string, since time.Time) {
	deadline := since.Add(b.c.maxSettle)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		last, polled := b.m.lastMerge(db)
		if last.Before(since) {
			last = since
		}
		if polled.Sub(last) >= b.c.quiet {
			return
		}
	}
	if ctx.Err() == nil {
		b.printf("  (%s: merges still running after %s)\n", db, b.c.maxSettle)
	}
}

func (b *bench) measureIdle(ctx context.Context) (idleRate, error) {
	a, err := takeSample(b.pid)
	if err != nil {
		return idleRate{}, err
	}
	select {
	case <-ctx.Done():
		return idleRate{}, ctx.Err()
	case <-time.After(b.c.idle):
	}
	z, err := takeSample(b.pid)
	if err != nil {
		return idleRate{}, err
	}
	wall := us(z.at.Sub(a.at))
	r := idleRate{total: us(z.total-a.total) / wall, group: map[string]float64{}}
	for g, d := range byGroup(a, z) {
		r.group[g] = us(d) / wall
	}
	return r, nil
}

func (b *bench) dropLeftovers(ctx context.Context) error {
	rows, err := b.conn.Query(ctx, "SELECT name FROM system.databases")
	if err != nil {
		return err
	}
	var dbs []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if strings.HasPrefix(name, dbPrefix) {
			dbs = append(dbs, name)
		}
	}
	rows.Close()
	for _, db := range dbs {
		if err := b.conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			return err
		}
	}
	return nil
}

// readQueryLog fills each result's qlog from system.query_log.
func (b *bench) readQueryLog(ctx context.Context, rs []result) error {
	if err := b.conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		return err
	}
	rows, err := b.conn.Query(ctx, `SELECT query_id,
			arraySum(arrayFilter((v, k) -> k IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'), ProfileEvents.Values, ProfileEvents.Names))
		FROM system.query_log
		WHERE type = 2 AND event_date >= yesterday() AND query_id LIKE ?`, "errtrail-views-"+b.runID+"/%")
	if err != nil {
		return err
	}
	defer rows.Close()
	type key struct{ v, round string }
	cpu, n := map[key]time.Duration{}, map[key]int{}
	for rows.Next() {
		var id string
		var v uint64
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		f := strings.Split(id, "/")
		if len(f) == 4 {
			k := key{f[1], f[2]}
			cpu[k] += time.Duration(v) * time.Microsecond
			n[k]++
		}
	}
	for i := range rs {
		k := key{rs[i].v.name, strconv.Itoa(rs[i].round)}
		rs[i].qlog, rs[i].qlogN = cpu[k], n[k]
	}
	return rows.Err()
}

// mergeWatch polls system.merges and integrates, per database, the number
// of merges running over time. It polls during the idle measurement too,
// so its own cost is part of the idle rate.
type mergeWatch struct {
	mu     sync.Mutex
	busy   map[string]time.Duration
	last   map[string]time.Time // last poll that saw a merge in the database
	polled time.Time            // last poll that succeeded
}

func newMergeWatch() *mergeWatch {
	return &mergeWatch{busy: map[string]time.Duration{}, last: map[string]time.Time{}}
}

func (m *mergeWatch) run(ctx context.Context, conn driver.Conn, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	prev := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rows, err := conn.Query(ctx, "SELECT database, toUInt64(count()) FROM system.merges GROUP BY database")
		if err != nil {
			continue
		}
		seen := map[string]uint64{}
		for rows.Next() {
			var db string
			var n uint64
			if rows.Scan(&db, &n) == nil && strings.HasPrefix(db, dbPrefix) {
				seen[db] = n
			}
		}
		ok := rows.Err() == nil
		rows.Close()
		now := time.Now()
		m.mu.Lock()
		if ok {
			for db, n := range seen {
				m.busy[db] += time.Duration(n) * now.Sub(prev)
				m.last[db] = now
			}
			m.polled = now
		}
		m.mu.Unlock()
		prev = now
	}
}

func (m *mergeWatch) busyOf(db string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.busy[db]
}

func (m *mergeWatch) lastMerge(db string) (last, polled time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[db], m.polled
}

// stats over rounds.
func medianRange(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return fmt.Sprintf("%.2f", med)
	}
	return fmt.Sprintf("%.2f (%.2f…%.2f)", med, s[0], s[len(s)-1])
}
