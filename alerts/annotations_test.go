package alerts_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryAlertLinksItsRunbookAndDashboard: on-call reads an alert's
// summary and description, follows its runbook to a section of
// docs/operations.md that exists, and opens a dashboard. An alert without
// one of these, or a runbook anchor that names no heading, fails.
func TestEveryAlertLinksItsRunbookAndDashboard(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchors[slug(h)] = true
		}
	}
	const runbookPrefix = "https://github.com/errtrail/errtrail/blob/main/docs/operations.md#"
	n := 0
	for f, rf := range ruleFiles(t) {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue // a recording rule
				}
				n++
				for _, key := range []string{"summary", "description", "runbook_url", "dashboard"} {
					if strings.TrimSpace(r.Annotations[key]) == "" {
						t.Errorf("%s: %s has no %s annotation", f, r.Alert, key)
					}
				}
				if d := r.Annotations["dashboard"]; d != "" && !strings.Contains(d, "/d/errtrail-") {
					t.Errorf("%s: %s's dashboard %q is not one of errtrail's dashboards", f, r.Alert, d)
				}
				u := r.Annotations["runbook_url"]
				if a, ok := strings.CutPrefix(u, runbookPrefix); !ok || !anchors[a] {
					t.Errorf("%s: %s's runbook %q names no section of docs/operations.md", f, r.Alert, u)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no alert read from alerts/*.yml")
	}
}

// slug is the anchor a Markdown heading gets: lower case, spaces to
// hyphens, other punctuation dropped.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}
