package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/lookup"
)

// TestUnitLinksIn: every link to errtrail's pages that the Grafana
// dashboards ($errtrail_url) and the alert annotations (lookup, incident) build
// (and the new-group ticket's groups link) reaches a page of this package, with only parameters the page reads, and
// not its not-found page. Variables are replaced by sample values.
func TestUnitLinksIn(t *testing.T) {
	root := filepath.Join("..")
	h := New(Config{Incidents: &fakeIncidents{}, Groups: &fakeGroups{}}, &fakeService{story: sampleStory(), page: &lookup.Page{}}, &fakeReporter{rep: sampleReport()})
	var links []string
	dash, err := filepath.Glob(filepath.Join(root, "dashboards", "json", "*.json"))
	if err != nil || len(dash) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	reDash := regexp.MustCompile(`\$\{errtrail_url\}[^"]*`)
	for _, f := range dash {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range reDash.FindAllString(string(b), -1) {
			links = append(links, strings.ReplaceAll(l, `\u0026`, "&"))
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "alerts", "verdicts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	reAlert := regexp.MustCompile(`(?m)^\s+(?:lookup|incident|groups): '.*\{\{ end \}\}(/[^']*)'$`)
	nAlert := 0
	for _, m := range reAlert.FindAllStringSubmatch(string(b), -1) {
		links = append(links, "${errtrail_url}"+m[1])
		nAlert++
	}
	if nAlert < 12 {
		t.Fatalf("found %d lookup and incident annotations in alerts/verdicts.yml; want one of each per agent verdict alert", nAlert)
	}
	sample := strings.NewReplacer(
		"${errtrail_url}", "",
		"${__value.raw:percentencode}", "err_01SAMPLE",
		"${agent:percentencode}", "research-agent",
		"${caller:percentencode}", "orchestrator-7",
		"${error_id:percentencode}", "err_01SAMPLE",
		"${request_id:percentencode}", "req_01SAMPLE",
		"{{ $labels.agent | urlquery }}", "research-agent",
		"{{ $labels.caller | urlquery }}", "orchestrator-7",
		"{{ $labels.group | urlquery }}", "0123456789abcdef",
	)
	for _, l := range links {
		target := sample.Replace(l)
		if strings.ContainsAny(target, "${}") {
			t.Errorf("%s: a variable this test does not know: %s", l, target)
			continue
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s → GET %s: %d; want a page (200)", l, target, rec.Code)
		}
	}
	t.Logf("%d links checked (%d from alerts)", len(links), nAlert)
}
