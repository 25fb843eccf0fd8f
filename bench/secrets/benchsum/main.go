// Command benchsum reads the go test -bench output of run.sh and prints the
// medians of the secrets benchmarks as markdown tables.
//
//	go run ./benchsum results/FILE.txt...
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
)

var line = regexp.MustCompile(`^Benchmark(\w+)/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op\s+[\d.]+ MB/s\s+(\d+) B/op\s+(\d+) allocs/op`)

type sample struct{ ns, bytes, allocs float64 }

type key struct{ bench, text string }

func main() {
	samples := map[key][]sample{}
	var texts []string
	seen := map[string]bool{}
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			m := line.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			ns, _ := strconv.ParseFloat(m[3], 64)
			b, _ := strconv.ParseFloat(m[4], 64)
			a, _ := strconv.ParseFloat(m[5], 64)
			k := key{m[1], m[2]}
			samples[k] = append(samples[k], sample{ns, b, a})
			if !seen[m[2]] && m[2] != "all" {
				seen[m[2]] = true
				texts = append(texts, m[2])
			}
		}
		f.Close()
	}
	n := float64(len(texts))
	med := func(bench, text string) (sample, int, float64) {
		s := samples[key{bench, text}]
		if len(s) == 0 {
			return sample{-1, -1, -1}, 0, 0
		}
		get := func(f func(sample) float64) float64 {
			v := make([]float64, len(s))
			for i := range s {
				v[i] = f(s[i])
			}
			sort.Float64s(v)
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		lo, hi := s[0].ns, s[0].ns
		for _, x := range s {
			lo, hi = min(lo, x.ns), max(hi, x.ns)
		}
		r := sample{get(func(x sample) float64 { return x.ns }), get(func(x sample) float64 { return x.bytes }), get(func(x sample) float64 { return x.allocs })}
		if text == "all" {
			r = sample{r.ns / n, r.bytes / n, r.allocs / n}
		}
		return r, len(s), hi / lo
	}
	ns := func(v float64) string {
		switch {
		case v < 0:
			return "—"
		case v >= 10000:
			return fmt.Sprintf("%.0f µs", v/1000)
		case v >= 1000:
			return fmt.Sprintf("%.1f µs", v/1000)
		}
		return fmt.Sprintf("%.0f ns", v)
	}
	num := func(v float64) string {
		if v < 0 {
			return "—"
		}
		if v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10)
		}
		return fmt.Sprintf("%.1f", v)
	}

	fmt.Println("Medians per text (one op = one text); the last row is the corpus benchmark's median divided by the number of texts.")
	fmt.Println()
	fmt.Println("| text | gitleaks ns | B | allocs | RedactString ns | B | allocs | gitleaks ÷ Redact | Aho-Corasick | pre-filter | pre-filter + scan regexes | scan regexes ÷ gitleaks | rest ÷ gitleaks | gitleaks, decode depth 5 | its one rule's regex |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var ratios, shares []float64
	meanOfMedians := map[string]float64{}
	row := func(label, t string) {
		g, _, _ := med("Gitleaks", t)
		r, _, _ := med("Redact", t)
		ac, _, _ := med("GitleaksAhoCorasick", t)
		p, _, _ := med("GitleaksPrefilter", t)
		x, _, _ := med("GitleaksRegex", t)
		d, _, _ := med("GitleaksDepth5", t)
		o, _, _ := med("GitleaksOneRule", t)
		ratio, share, rest := "—", "—", "—"
		if g.ns > 0 && r.ns > 0 {
			ratio = fmt.Sprintf("%.0f×", g.ns/r.ns)
			if t != "all" {
				ratios = append(ratios, g.ns/r.ns)
			}
		}
		if g.ns > 0 && x.ns > 0 && p.ns > 0 {
			sh := max(x.ns-p.ns, 0) / g.ns
			share = fmt.Sprintf("%.0f %%", 100*sh)
			rest = fmt.Sprintf("%.0f %%", 100*max(g.ns-x.ns, 0)/g.ns)
			if t != "all" {
				shares = append(shares, sh)
			}
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label,
			ns(g.ns), num(g.bytes), num(g.allocs), ns(r.ns), num(r.bytes), num(r.allocs), ratio,
			ns(ac.ns), ns(p.ns), ns(x.ns), share, rest, ns(d.ns), ns(o.ns))
	}
	for _, t := range texts {
		row(t, t)
	}
	row(fmt.Sprintf("**mean per text** (all ÷ %d)", len(texts)), "all")
	for _, b := range []string{"Gitleaks", "Redact", "GitleaksAhoCorasick", "GitleaksPrefilter", "GitleaksRegex", "GitleaksDepth5"} {
		sum := 0.0
		for _, t := range texts {
			m, _, _ := med(b, t)
			sum += m.ns
		}
		if sum > 0 {
			meanOfMedians[b] = sum / n
		}
	}
	if g, r := meanOfMedians["Gitleaks"], meanOfMedians["Redact"]; g > 0 && r > 0 {
		fmt.Printf("| **mean of the per-text medians** | %s | | | %s | | | %.0f× | %s | %s | %s | | | %s | |\n",
			ns(g), ns(r), g/r, ns(meanOfMedians["GitleaksAhoCorasick"]), ns(meanOfMedians["GitleaksPrefilter"]),
			ns(meanOfMedians["GitleaksRegex"]), ns(meanOfMedians["GitleaksDepth5"]))
	}
	fmt.Println()
	if len(ratios) > 0 {
		sort.Float64s(ratios)
		sort.Float64s(shares)
		fmt.Printf("Per text, gitleaks ÷ RedactString: min %.0f×, median %.0f×, max %.0f×. Scan regexes ÷ gitleaks' time: min %.0f %%, median %.0f %%, max %.0f %%.\n\n",
			ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1], 100*shares[0], 100*shares[len(shares)/2], 100*shares[len(shares)-1])
	}
	fmt.Println("Samples and spread (max ÷ min of ns/op) of the corpus benchmark:")
	fmt.Println()
	for _, b := range []string{"Gitleaks", "GitleaksDepth5", "GitleaksAhoCorasick", "GitleaksPrefilter", "GitleaksRegex", "GitleaksOneRule", "Redact"} {
		_, k, spread := med(b, "all")
		if k > 0 {
			fmt.Printf("- %s: %d samples, spread %.2f×\n", b, k, spread)
		}
	}
}
