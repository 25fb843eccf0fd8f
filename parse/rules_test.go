package parse

import (
	"os"
	"strings"
	"testing"
)

// rulesDocTable renders the Findings table of docs/record.md from Rules.
func rulesDocTable() string {
	var b strings.Builder
	b.WriteString("| Finding | Level | Raised when | Sentence it checks |\n|---|---|---|---|\n")
	for i := range Rules {
		r := &Rules[i]
		b.WriteString("| `" + string(r.Name) + "` | " + string(r.Level) + " | " + r.When + " | " + r.Checks() + " |\n")
	}
	return b.String()
}

// Markers around the generated table in docs/record.md.
const (
	rulesDocBegin = "<!-- rules table: generated from parse.Rules; go test ./parse -run TestRulesDocTable -update -->\n"
	rulesDocEnd   = "<!-- end of rules table -->\n"
)

// TestRulesDocTable holds docs/record.md's Findings table equal to the Go
// table, row for row; -update rewrites it.
func TestRulesDocTable(t *testing.T) {
	const path = "../docs/record.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, rulesDocBegin), strings.Index(s, rulesDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated rules table markers", path)
	}
	want := rulesDocTable()
	got := s[i+len(rulesDocBegin) : j]
	if *update {
		if got != want {
			os.WriteFile(path, []byte(s[:i+len(rulesDocBegin)]+want+s[j:]), 0o644)
		}
		return
	}
	if got != want {
		t.Errorf("docs/record.md's Findings table differs from parse.Rules (go test ./parse -run TestRulesDocTable -update)\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestRulesTable: every row is complete, names a known seed, has a level,
// and appears once; no cell breaks the Markdown table.
func TestRulesTable(t *testing.T) {
	seen := map[Finding]bool{}
	for i := range Rules {
		r := &Rules[i]
		if seen[r.Name] {
			t.Errorf("rule %s appears twice", r.Name)
		}
		seen[r.Name] = true
		if r.Name == "" || r.Source == "" || r.Sentence == "" || r.Title == "" || r.When == "" || r.Change == "" {
			t.Errorf("rule %s is incomplete: %+v", r.Name, *r)
		}
		if r.Level != LevelMust && r.Level != LevelShould {
			t.Errorf("rule %s: level %q", r.Name, r.Level)
		}
		switch r.Seed {
		case "000", "002", "003", "004":
			if r.Source != "Seed "+r.Seed {
				t.Errorf("rule %s: seed %s but source %q", r.Name, r.Seed, r.Source)
			}
		case "":
			if strings.HasPrefix(r.Source, "Seed") {
				t.Errorf("rule %s: source %q without a seed", r.Name, r.Source)
			}
		default:
			t.Errorf("rule %s: unknown seed %q", r.Name, r.Seed)
		}
		for _, c := range []string{r.Sentence, r.When, r.Title, r.Change} {
			if strings.ContainsAny(c, "|\n") {
				t.Errorf("rule %s: a cell contains | or a newline: %q", r.Name, c)
			}
		}
		if got, ok := RuleOf(r.Name); !ok || got != r {
			t.Errorf("RuleOf(%s) = %v, %v", r.Name, got, ok)
		}
	}
	if len(AllFindings) != len(Rules) {
		t.Errorf("AllFindings has %d ids, Rules %d rows", len(AllFindings), len(Rules))
	}
	if _, ok := RuleOf("a_finding_of_a_newer_ingester"); ok {
		t.Error("RuleOf knows an id that is no rule")
	}
}
