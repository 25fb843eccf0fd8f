// Package secrets measures gitleaks' detector (its default rule set, used as
// a library) against errtrail's redactor parse.RedactString on the error
// message texts of corpus_test.go. See README.md for the commands and the
// figures.
package secrets

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/errtrail/errtrail/parse"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

var tableOut = flag.String("table", "", "TestCoverage writes its markdown table to this file")

var (
	setupOnce sync.Once
	detector  *detect.Detector // default config, library defaults (MaxDecodeDepth 0)
	detector5 *detect.Detector // default config, MaxDecodeDepth 5 as the gitleaks CLI sets it
	stage     *stages
)

func setup(tb testing.TB) {
	setupOnce.Do(func() {
		var err error
		if detector, err = detect.NewDetectorDefaultConfig(); err != nil {
			tb.Fatal(err)
		}
		if detector5, err = detect.NewDetectorDefaultConfig(); err != nil {
			tb.Fatal(err)
		}
		detector5.MaxDecodeDepth = 5
		stage = newStages(detector.Config)
	})
}

// stages re-does, outside gitleaks, the two first steps of its
// Detector.DetectContext on one text so that each can be timed alone:
// the keyword pre-filter (lower-casing, an Aho-Corasick match of every
// rule keyword, then the choice of the rules one of whose keywords
// occurred) and the regular expressions of the chosen rules. It uses the
// same Aho-Corasick package and the keywords and compiled rules of the
// detector's own config. Rules limited to file paths never run their regex
// on a text without a path, so they are left out of the regex stage.
type stages struct {
	trie  *ahocorasick.Trie
	rules []config.Rule // in the config's order
}

func newStages(cfg config.Config) *stages {
	kw := make([]string, 0, len(cfg.Keywords))
	for k := range cfg.Keywords {
		kw = append(kw, k)
	}
	sort.Strings(kw)
	st := &stages{trie: ahocorasick.NewTrieBuilder().AddStrings(kw).Build()}
	for _, id := range cfg.OrderedRules {
		st.rules = append(st.rules, cfg.Rules[id])
	}
	return st
}

// chosen appends to dst the index of each rule the pre-filter lets through.
func (st *stages) chosen(s string, dst []int) []int {
	lower := strings.ToLower(s)
	seen := make(map[string]bool)
	for _, m := range st.trie.MatchString(lower) {
		seen[lower[m.Pos():int(m.Pos())+len(m.Match())]] = true
	}
	for i, r := range st.rules {
		if len(r.Keywords) == 0 {
			dst = append(dst, i)
			continue
		}
		for _, k := range r.Keywords {
			if seen[strings.ToLower(k)] {
				dst = append(dst, i)
				break
			}
		}
	}
	return dst
}

// regexes runs the chosen rules' regular expressions; it returns the number
// of raw matches (before entropy checks and allow-lists).
func (st *stages) regexes(s string, chosen []int) int {
	n := 0
	for _, i := range chosen {
		r := &st.rules[i]
		if r.Regex == nil || r.Path != nil {
			continue
		}
		n += len(r.Regex.FindAllStringIndex(s, -1))
	}
	return n
}

var (
	sinkN        int
	sinkS        string
	sinkFindings []report.Finding
)

func totalBytes() int64 {
	n := 0
	for _, t := range corpus {
		n += len(t.s)
	}
	return int64(n)
}

// run benchmarks f on each text and on the whole corpus ("all", one op is
// one pass over every text: divide ns/op by len(corpus) for the mean).
func run(b *testing.B, f func(s string)) {
	setup(b)
	for _, t := range corpus {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(t.s)))
			for b.Loop() {
				f(t.s)
			}
		})
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(totalBytes())
		for b.Loop() {
			for _, t := range corpus {
				f(t.s)
			}
		}
	})
}

// BenchmarkGitleaks: the whole detector, default config, library defaults.
func BenchmarkGitleaks(b *testing.B) {
	run(b, func(s string) { sinkFindings = detector.DetectString(s) })
}

// BenchmarkGitleaksDepth5: the same with the CLI's --max-decode-depth 5,
// which also decodes base64, hex and percent-encoded runs and scans again.
func BenchmarkGitleaksDepth5(b *testing.B) {
	run(b, func(s string) { sinkFindings = detector5.DetectString(s) })
}

// BenchmarkGitleaksAhoCorasick: the first half of the pre-filter, the
// lower-casing and the Aho-Corasick keyword match, without the choice of
// rules.
func BenchmarkGitleaksAhoCorasick(b *testing.B) {
	run(b, func(s string) { sinkN = len(stage.trie.MatchString(strings.ToLower(s))) })
}

// BenchmarkGitleaksPrefilter: the keyword pre-filter alone (match, then
// the choice of rules).
func BenchmarkGitleaksPrefilter(b *testing.B) {
	var buf []int
	run(b, func(s string) { buf = stage.chosen(s, buf[:0]); sinkN = len(buf) })
}

// BenchmarkGitleaksRegex: the pre-filter and then the chosen rules'
// regular expressions (no findings built, no entropy, no allow-lists).
func BenchmarkGitleaksRegex(b *testing.B) {
	var buf []int
	run(b, func(s string) { buf = stage.chosen(s, buf[:0]); sinkN = stage.regexes(s, buf) })
}

// oneRule names, for the texts holding a provider token, the one rule that
// is meant to find it.
var oneRule = map[string]string{
	"s01-jwt":           "jwt",
	"s02-github-pat":    "github-pat",
	"s03-stripe-live":   "stripe-access-token",
	"s04-aws-akid":      "aws-access-token",
	"s09-slack-bot":     "slack-bot-token",
	"s10-gitlab-pat":    "gitlab-pat",
	"s11-gcp-key":       "gcp-api-key",
	"s12-anthropic-key": "anthropic-api-key", // gitleaks:allow (a rule name, not a key)
	"s13-openai-key":    "openai-api-key",
}

// BenchmarkGitleaksOneRule: the regular expression of that one rule alone,
// the least a redactor that picked gitleaks' rules by its own prefix scan
// would still pay on a text that holds the prefix.
func BenchmarkGitleaksOneRule(b *testing.B) {
	setup(b)
	for _, t := range corpus {
		id, ok := oneRule[t.name]
		if !ok {
			continue
		}
		re := detector.Config.Rules[id].Regex
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(t.s)))
			for b.Loop() {
				sinkN = len(re.FindAllStringIndex(t.s, -1))
			}
		})
	}
}

// BenchmarkRedact: errtrail's redactor on the same texts.
func BenchmarkRedact(b *testing.B) {
	run(b, func(s string) { sinkS = parse.RedactString(s) })
}

// TestCoverage prints, for each text, what gitleaks finds, which rules the
// pre-filter let run, and what parse.RedactString makes of it.
func TestCoverage(t *testing.T) {
	setup(t)
	var sb strings.Builder
	sb.WriteString("| text | bytes | planted | gitleaks findings (rule: secret) | regexes run after the pre-filter | RedactString |\n")
	sb.WriteString("| --- | ---: | --- | --- | --- | --- |\n")
	for _, c := range corpus {
		var fs []string
		for _, f := range detector.DetectString(c.s) {
			fs = append(fs, fmt.Sprintf("%s: `%s`", f.RuleID, short(f.Secret)))
		}
		sort.Strings(fs)
		var ran []string
		for _, i := range stage.chosen(c.s, nil) {
			if r := stage.rules[i]; r.Regex != nil && r.Path == nil {
				ran = append(ran, r.RuleID)
			}
		}
		red := parse.RedactString(c.s)
		redCol := "unchanged"
		if red != c.s {
			redCol = "changed: " + strings.Join(placeholders(c.s, red), " ")
		}
		planted := c.planted
		if planted == "" {
			planted = "—"
		}
		sb.WriteString(fmt.Sprintf("| %s | %d | %s | %s | %s | %s |\n",
			c.name, len(c.s), planted, orDash(strings.Join(fs, "; ")), orDash(strings.Join(ran, ", ")), redCol))
		if c.planted != "" && red == c.s {
			t.Logf("%s: RedactString left the %s in place", c.name, c.planted)
		}
	}
	if *tableOut != "" {
		if err := os.WriteFile(*tableOut, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("\n" + sb.String())
	}
}

// TestSourceHasNoFinding: the corpus's credentials are split in the source
// so that gitleaks (and scanners like it) report nothing in this folder.
func TestSourceHasNoFinding(t *testing.T) {
	setup(t)
	for _, name := range []string{"corpus_test.go", "secrets_test.go", "README.md"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range detector.DetectString(string(b)) {
			t.Errorf("%s:%d: gitleaks %s finds %q", name, f.StartLine+1, f.RuleID, short(f.Secret))
		}
	}
}

func short(s string) string {
	if len(s) > 24 {
		return s[:10] + "…" + s[len(s)-6:]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// placeholders lists the placeholders RedactString put into out: the
// "[word]" runs of out that the original text does not hold.
func placeholders(orig, out string) []string {
	var ph []string
	for i := 0; i < len(out); i++ {
		if out[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(out) && out[j] >= 'a' && out[j] <= 'z' {
			j++
		}
		if j > i+1 && j < len(out) && out[j] == ']' && !strings.Contains(orig, out[i:j+1]) {
			ph = append(ph, out[i:j+1])
			i = j
		}
	}
	return ph
}
