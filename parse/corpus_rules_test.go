package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Which rules the real SDK replies under testdata/corpus break, per SDK
// release: docs/conformance.md's table is generated from the decoder's
// findings (TestCorpusRulesDoc, -update rewrites it), and the seed 003 and
// seed 004 rules are held to the breaks checked by hand against the seed
// text (TestCorpusFormRules), so that a new rule never fires on a clean
// capture unnoticed.

// corpusRelease names the SDK release a corpus reply came from: the
// directory's SDK and version (its cases.tsv), and "v0.3 compat" for the
// v03-* cases of a 1.x SDK's compatibility layer.
func corpusRelease(t *testing.T, dir, file string) string {
	data, err := os.ReadFile(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 {
		t.Fatalf("%s/cases.tsv has no case", dir)
	}
	cols := strings.Split(lines[1], "\t")
	if len(cols) < 2 {
		t.Fatalf("%s/cases.tsv: %q", dir, lines[1])
	}
	r := cols[0] + " " + cols[1]
	if strings.HasPrefix(file, "v03-") {
		r += " (v0.3 compat)"
	}
	return r
}

// corpusBreak is one rule broken by replies of one SDK release.
type corpusBreak struct {
	release string
	rule    Finding
	files   []string
}

// corpusBreaks decodes every corpus reply as TestGolden does and returns,
// per SDK release and rule, the replies that break it, and the number of
// error replies per release.
func corpusBreaks(t *testing.T) ([]corpusBreak, map[string]int) {
	d := NewDecoder(Options{})
	by := map[[2]string][]string{}
	replies := map[string]int{}
	for _, in := range goldenInputs(t) {
		if !strings.HasPrefix(in, filepath.Join("testdata", "corpus")+string(filepath.Separator)) {
			continue
		}
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		if d.DecodeMessage(data, contextOf(in), 1764489600000, &rec) != nil {
			continue // not an error reply (a control) or unreadable: no rule applies
		}
		dir, file := filepath.Dir(in), filepath.Base(in)
		rel := corpusRelease(t, dir, file)
		replies[rel]++
		for _, f := range rec.Findings {
			k := [2]string{rel, string(f)}
			by[k] = append(by[k], filepath.Base(dir)+"/"+file)
		}
	}
	var out []corpusBreak
	for k, files := range by {
		sort.Strings(files)
		out = append(out, corpusBreak{k[0], Finding(k[1]), files})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].release != out[j].release {
			return out[i].release < out[j].release
		}
		ri, _ := RuleOf(out[i].rule)
		rj, _ := RuleOf(out[j].rule)
		return ruleIndex[ri.Name] < ruleIndex[rj.Name]
	})
	return out, replies
}

// corpusDocTable renders the table of docs/conformance.md.
func corpusDocTable(t *testing.T) string {
	breaks, replies := corpusBreaks(t)
	var b strings.Builder
	b.WriteString("| SDK release | Rule | Level | Replies | For example |\n|---|---|---|---|---|\n")
	broke := map[string]bool{}
	for _, c := range breaks {
		broke[c.release] = true
	}
	var clean []string
	for rel := range replies {
		if !broke[rel] {
			clean = append(clean, rel)
		}
	}
	sort.Strings(clean)
	for _, rel := range clean {
		fmt.Fprintf(&b, "| %s | none | | 0 of %d | |\n", rel, replies[rel])
	}
	for _, c := range breaks {
		r, ok := RuleOf(c.rule)
		if !ok {
			t.Fatalf("finding %s has no rule", c.rule)
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %d of %d | `%s` |\n", c.release, c.rule, r.Level, len(c.files), replies[c.release], c.files[0])
	}
	return b.String()
}

const (
	corpusDocBegin = "<!-- corpus table: generated from the decoder's findings; go test ./parse -run TestCorpusRulesDoc -update -->\n"
	corpusDocEnd   = "<!-- end of corpus table -->\n"
)

// TestCorpusRulesDoc holds docs/conformance.md's per-release table equal to
// what the decoder finds in the captures; -update rewrites it.
func TestCorpusRulesDoc(t *testing.T) {
	const path = "../docs/conformance.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, corpusDocBegin), strings.Index(s, corpusDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated corpus table markers", path)
	}
	want := corpusDocTable(t)
	if got := s[i+len(corpusDocBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(s[:i+len(corpusDocBegin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/conformance.md's corpus table differs from the captures (go test ./parse -run TestCorpusRulesDoc -update)\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// corpusFormBreaks are the replies of real SDKs that break a seed 003 or
// seed 004 rule, each checked by hand against the seed's sentence. Any other
// capture that raised one of these rules would be a false finding.
var corpusFormBreaks = map[Finding][]string{
	// Seed 003: "Send `application/a2a+json`, and accept all three types
	// when you read." a2a-go's v0.3 JSON-RPC handler (v0.3.15, and v2.4.0's
	// a2acompat/a2av0) writes its replies with Content-Type
	// "text/plain; charset=utf-8", none of the three.
	FindA2AMediaType: {
		"a2a-go-v0.3/jsonrpc-*", "a2a-go-v2-compat-v0.3/jsonrpc-*",
	},
	// Seed 003: "An HTTP+JSON error uses the HTTP status and a JSON
	// `google.rpc.Status`". @a2a-js/sdk's v0.3 REST handler (0.3.14, and
	// 1.3.0's v0.3 compat routes) answers with a flat {code, message, data}
	// whose code is the JSON-RPC number.
	FindA2ABodyNotStatus: {
		"a2a-js-0.3/rest-*", "a2a-js-1/v03-rest-*",
	},
}

// TestCorpusFormRules: the seed 003 and seed 004 rules fire only on the
// captures corpusFormBreaks names, and each of its patterns names at least
// one capture that breaks its rule. (Not every reply a pattern names breaks
// the rule: a reply whose protocol the decoder cannot tell, or an event
// stream, is not judged by A2A's media type.)
func TestCorpusFormRules(t *testing.T) {
	d := NewDecoder(Options{})
	seen := map[string]bool{}
	for _, in := range goldenInputs(t) {
		if !strings.HasPrefix(in, filepath.Join("testdata", "corpus")+string(filepath.Separator)) {
			continue
		}
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		if d.DecodeMessage(data, contextOf(in), 1764489600000, &rec) != nil {
			continue
		}
		name := filepath.Base(filepath.Dir(in)) + "/" + filepath.Base(in)
		for i := range Rules {
			r := &Rules[i]
			if (r.Seed != "003" && r.Seed != "004") || r.Name == FindErrorInfoMissing || r.Name == FindStatusBodyMismatch {
				continue
			}
			if !rec.HasFinding(r.Name) {
				continue
			}
			allowed := false
			for _, pat := range corpusFormBreaks[r.Name] {
				if ok, _ := filepath.Match(pat, name); ok {
					allowed, seen[pat] = true, true
				}
			}
			if !allowed {
				t.Errorf("%s: %s raised on a capture not checked against the seed (findings %v)", name, r.Name, rec.Findings)
			}
		}
	}
	for _, pats := range corpusFormBreaks {
		for _, p := range pats {
			if !seen[p] {
				t.Errorf("pattern %s names no capture that breaks its rule", p)
			}
		}
	}
}
