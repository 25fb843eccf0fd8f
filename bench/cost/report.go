// The printed results: each round's lines and the medians per consumer.

package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

func (h *harness) printRound(rs []result) {
	var floor *result
	for i := range rs {
		if rs[i].consumer == "floor" && rs[i].skipped == "" {
			floor = &rs[i]
		}
	}
	fmt.Printf("  %-13s %8s %8s %8s %9s %10s %10s %6s  %-15s %s\n", "consumer", "own", "server", "total", "events/s", "total/flr", "own/flr", "idle", "load@start", "server by thread (µs/event), query_log")
	for _, r := range rs {
		if r.skipped != "" {
			fmt.Printf("  %-13s skipped\n", r.consumer)
			continue
		}
		own, srv := r.perEvent(r.own, h.n), r.perEvent(r.srv, h.n)
		rt, ro := "-", "-"
		if floor != nil {
			ft, fo := floor.perEvent(floor.own+floor.srv, h.n), floor.perEvent(floor.own, h.n)
			rt = fmt.Sprintf("%.2f×", (own+srv)/ft)
			if r.consumer != "kafka-engine" {
				ro = fmt.Sprintf("%.2f×", own/fo)
			}
		}
		ownS := fmt.Sprintf("%.2f", own)
		if r.consumer == "kafka-engine" {
			ownS = "(in srv)"
		}
		var th []string
		keys := make([]string, 0, len(r.byThread))
		for k := range r.byThread {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := r.perEvent(r.byThread[k], h.n); v >= 0.05 || v <= -0.05 {
				th = append(th, fmt.Sprintf("%s=%.2f", k, v))
			}
		}
		ql := ""
		if r.inserts > 0 {
			ql = fmt.Sprintf("; %d INSERTs, their own CPU %.2f", r.inserts, r.perEvent(r.insertCPU, h.n))
		}
		fmt.Printf("  %-13s %8s %8.2f %8.2f %9.0f %10s %10s %5.0f%%  %-15s %s%s\n", r.consumer, ownS, srv, own+srv,
			float64(h.n)/r.wall.Seconds(), rt, ro, r.idle*100, r.load, strings.Join(th, " "), ql)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (h *harness) printMedians(all []result, order []string) {
	fmt.Printf("\n## medians over the rounds (µs/event; ratios are medians of each round's ratio to that round's floor; inserts = the INSERTs' own server CPU from query_log, views included, merges not)\n")
	fmt.Printf("  %-13s %8s %8s %8s %9s %10s %10s %8s %s\n", "consumer", "own", "server", "total", "events/s", "total/flr", "own/flr", "inserts", "rounds")
	floors := map[int]result{}
	for _, r := range all {
		if r.consumer == "floor" && r.skipped == "" {
			floors[r.round] = r
		}
	}
	for _, c := range order {
		var own, srv, tot, eps, rt, ro, ins []float64
		skipped := ""
		for _, r := range all {
			if r.consumer != c {
				continue
			}
			if r.skipped != "" {
				skipped = r.skipped
				continue
			}
			o, s := r.perEvent(r.own, h.n), r.perEvent(r.srv, h.n)
			own, srv, tot, eps = append(own, o), append(srv, s), append(tot, o+s), append(eps, float64(h.n)/r.wall.Seconds())
			if r.inserts > 0 {
				ins = append(ins, r.perEvent(r.insertCPU, h.n))
			}
			if f, ok := floors[r.round]; ok {
				fo, fs := f.perEvent(f.own, h.n), f.perEvent(f.srv, h.n)
				rt, ro = append(rt, (o+s)/(fo+fs)), append(ro, o/fo)
			}
		}
		if len(tot) == 0 {
			fmt.Printf("  %-13s LEFT OUT: %s\n", c, firstLine(skipped))
			continue
		}
		ownS, roS := fmt.Sprintf("%.2f", median(own)), fmt.Sprintf("%.2f×", median(ro))
		if c == "kafka-engine" {
			ownS, roS = "(in srv)", "-"
		}
		insS := "-"
		if len(ins) > 0 {
			insS = fmt.Sprintf("%.2f", median(ins))
		}
		fmt.Printf("  %-13s %8s %8.2f %8.2f %9.0f %9.2f× %10s %8s %d\n", c, ownS, median(srv), median(tot), median(eps), median(rt), roS, insS, len(tot))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " (details above)"
	}
	return s
}
