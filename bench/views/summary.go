package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

type metric func(result) float64

// table of results by variant name and round.
type table map[string]map[int]result

func (t table) values(name string, f metric) []float64 {
	var out []float64
	for _, r := range t[name] {
		out = append(out, f(r))
	}
	return out
}

// diff is a − b per round, for the rounds that have both: the variants of
// one round ran minutes apart under the same load, so the pairs are
// steadier than the difference of two medians.
func (t table) diff(a, b string, f metric) []float64 {
	var out []float64
	for round, ra := range t[a] {
		if rb, ok := t[b][round]; ok {
			out = append(out, f(ra)-f(rb))
		}
	}
	return out
}

func (b *bench) summary(rs []result, vs []variant) {
	t := table{}
	for _, r := range rs {
		if t[r.v.name] == nil {
			t[r.v.name] = map[int]result{}
		}
		t[r.v.name][r.round] = r
	}
	qlog, set, total := result.qlogIns, result.set, result.total
	pool := func(r result) float64 { return r.group("merges") }

	b.printf("\n## query_log: the INSERTs' own CPU per round, µs/event (inserts found / run)\n")
	for _, v := range vs {
		var cells []string
		for round := 1; round <= b.c.rounds; round++ {
			if r, ok := t[v.name][round]; ok {
				cells = append(cells, fmt.Sprintf("r%d %8.2f (%d/%d)", round, r.qlogIns(), r.qlogN, b.c.k))
			}
		}
		b.printf("  %-22s %s\n", v.name, strings.Join(cells, "   "))
	}

	b.printf("\n## per variant: µs/event, median (min…max) over %d rounds\n", b.c.rounds)
	b.printf("# insert = the INSERTs' own CPU (query_log); merges = the merge pool (BackgrProcPool) during inserts and settling;\n")
	b.printf("# total = the whole process over inserts and settling; all idle-corrected except query_log.\n")
	b.printf("# Δ all / Δ base: per round, the variant minus all / minus its base (the view-less variant with the same rows)\n")
	b.printf("  %-22s %6s %-22s %-22s %-22s %-24s %-24s %-24s %-24s %-20s\n",
		"variant", "rows/i", "insert (qlog)", "merges (pool)", "total (proc)", "Δ all: insert", "Δ all: total", "Δ base: insert", "Δ base: total", "settle (proc)")
	for _, v := range vs {
		if t[v.name] == nil {
			continue
		}
		b.printf("  %-22s %6d %-22s %-22s %-22s %-24s %-24s %-24s %-24s %-20s\n", v.name, b.rowsPerInsert(v),
			medianRange(t.values(v.name, qlog)), medianRange(t.values(v.name, pool)), medianRange(t.values(v.name, total)),
			medianRange(t.diff(v.name, "all", qlog)), medianRange(t.diff(v.name, "all", total)),
			medianRange(t.diff(v.name, v.base, qlog)), medianRange(t.diff(v.name, v.base, total)),
			medianRange(t.values(v.name, set)))
	}

	b.printf("\n## levers: µs/event saved, median (min…max) of the per-round differences\n")
	b.printf("  %-56s %-22s %-22s %s\n", "", "insert (qlog)", "merges (pool)", "total (proc)")
	line := func(label, a, c string) {
		if t[a] == nil || t[c] == nil {
			return
		}
		b.printf("  %-56s %-22s %-22s %s\n", label, medianRange(t.diff(a, c, qlog)), medianRange(t.diff(a, c, pool)), medianRange(t.diff(a, c, total)))
	}
	line("all views together (all − none)", "all", "none")
	type marg struct {
		view string
		med  float64
	}
	var ms []marg
	for _, mv := range landingViews {
		if d := t.diff("all", "no-"+mv, qlog); len(d) > 0 {
			ms = append(ms, marg{mv, median(d)})
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].med > ms[j].med })
	var sumQ, sumP, sumT float64
	for _, m := range ms {
		line("drop "+m.view+" (all − no-"+m.view+")", "all", "no-"+m.view)
		sumQ += median(t.diff("all", "no-"+m.view, qlog))
		sumP += median(t.diff("all", "no-"+m.view, pool))
		sumT += median(t.diff("all", "no-"+m.view, total))
	}
	if len(ms) > 0 {
		b.printf("  %-56s %-22.2f %-22.2f %.2f\n", "sum of the "+strconv.Itoa(len(ms))+" marginal medians", sumQ, sumP, sumT)
	}
	line("error_lookup with 3 id kinds (all − lookup-3ids)", "all", "lookup-3ids")
	line("migration 010: errors_1m_v2 for errors_1m (old-errors_1m − all)", "old-errors_1m", "all")
	line("cap errors.message at 8 KiB, 64 KiB messages", "msg-64k", "msg-64k-cap8k")
	b.printf("\n## message size: the views' cost (variant − its base), µs/event; rows per insert cut at %d message bytes\n", b.c.batchBytes)
	for _, p := range [][2]string{{"all", "none"}, {"msg-8k", "none-8k"}, {"msg-64k", "none-64k"}, {"msg-64k-cap8k", "none-64k"}} {
		line(p[0]+" − "+p[1], p[0], p[1])
	}
	b.printf("\n## generating the rows and inserting them into landing with no view (the bases), µs/event\n")
	for _, n := range []string{"none", "none-8k", "none-64k"} {
		if t[n] != nil {
			b.printf("  %-56s %-22s %-22s %s\n", n, medianRange(t.values(n, qlog)), medianRange(t.values(n, pool)), medianRange(t.values(n, total)))
		}
	}
	var loads []string
	for round := 1; round <= b.c.rounds; round++ {
		var l []string
		for _, r := range rs {
			if r.round == round {
				l = append(l, strings.SplitN(r.load, "/", 2)[0])
			}
		}
		if len(l) > 0 {
			loads = append(loads, fmt.Sprintf("round %d: %s…%s", round, minStr(l), maxStr(l)))
		}
	}
	b.printf("\n# 1-minute load average at the variants' starts: %s\n", strings.Join(loads, "; "))
}

func median(xs []float64) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func minStr(xs []string) string {
	best, bv := "", 0.0
	for _, x := range xs {
		if v, err := strconv.ParseFloat(x, 64); err == nil && (best == "" || v < bv) {
			best, bv = x, v
		}
	}
	return best
}

func maxStr(xs []string) string {
	best, bv := "", 0.0
	for _, x := range xs {
		if v, err := strconv.ParseFloat(x, 64); err == nil && (best == "" || v > bv) {
			best, bv = x, v
		}
	}
	return best
}

// tables prints what each variant's database holds at the end: a check
// that the views did what they should, and the storage side of the levers.
func (b *bench) tables(ctx context.Context, vs []variant) {
	rows, err := b.conn.Query(ctx, `SELECT database, table, toUInt64(sum(rows)), toUInt64(sum(data_compressed_bytes)),
		toUInt64(sum(data_uncompressed_bytes)), toUInt64(count())
		FROM system.parts WHERE active GROUP BY database, table`)
	if err != nil {
		b.printf("# system.parts: %v\n", err)
		return
	}
	defer rows.Close()
	type agg struct{ rows, comp, raw, parts uint64 }
	got := map[string]map[string]agg{}
	for rows.Next() {
		var db, tb string
		var a agg
		if err := rows.Scan(&db, &tb, &a.rows, &a.comp, &a.raw, &a.parts); err != nil {
			b.printf("# system.parts: %v\n", err)
			return
		}
		if strings.HasPrefix(db, dbPrefix) {
			if got[db] == nil {
				got[db] = map[string]agg{}
			}
			got[db][tb] = a
		}
	}
	b.printf("\n## stored at the end (active parts): rows per inserted event, errors' size; parts over all tables\n")
	b.printf("  %-22s %9s %7s %7s %7s %13s %7s %7s %7s %9s %9s %6s %6s\n", "variant", "events", "errors", "dead", "lookup", "err_1m/_v2", "outc_1m", "call_1m", "find_1h",
		"errors MB", "raw MB", "ratio", "parts")
	for _, v := range vs {
		g := got[v.db()]
		if g == nil {
			continue
		}
		events := float64(b.offset[v.name])
		per := func(tb string) string { return fmt.Sprintf("%.3f", float64(g[tb].rows)/events) }
		var parts uint64
		for tb, a := range g {
			if tb != "schema_migrations" {
				parts += a.parts
			}
		}
		e := g["errors"]
		ratio := "-"
		if e.comp > 0 {
			ratio = fmt.Sprintf("%.2f", float64(e.raw)/float64(e.comp))
		}
		b.printf("  %-22s %9.0f %7s %7s %7s %13s %7s %7s %7s %9.1f %9.1f %6s %6d\n", v.name, events,
			per("errors"), per("dead_letter"), per("error_lookup"), per("errors_1m")+"/"+per("errors_1m_v2"), per("outcomes_1m"),
			per("callers_1m"), per("findings_1h"), float64(e.comp)/1e6, float64(e.raw)/1e6, ratio, parts)
	}
}
