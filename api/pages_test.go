package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// TestUnitPagesFallback: with Config.Pages set, paths no api route serves
// and that are outside /v1 reach the pages, rate limited and counted as
// "pages" but without the token check; /v1 paths never do, and the api's
// own routes are not shadowed.
func TestUnitPagesFallback(t *testing.T) {
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1")
	var seen []string
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path)
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Write([]byte("page"))
	})
	h := newHarness(t, func(c *Config) {
		c.Pages = func(lookup.Service, report.Reporter) http.Handler { return pages }
		c.RPS, c.Burst = 0.5, 2
		c.TokensEnv = "ERRTRAIL_TEST_TOKENS"
	})
	a := h.get("/errors?id=err_1", "X-Test-Remote: 192.0.2.1:1")
	if a.status != 200 || string(a.body) != "page" {
		t.Fatalf("page: %d %q", a.status, a.body)
	}
	if got := a.header.Get("Content-Security-Policy"); got != "default-src 'self'" {
		t.Errorf("the pages' own CSP did not win: %q", got)
	}
	if a := h.get("/v1/nowhere", "X-Test-Remote: 192.0.2.9:1"); a.status != 404 || a.problemCode() != "no-route" {
		t.Errorf("/v1/nowhere: %d %s; want the api's 404", a.status, a.body)
	}
	if a := h.get("/v1/errors/x", "X-Test-Remote: 192.0.2.9:1"); a.status != 401 {
		t.Errorf("an api route without a token: %d; want 401 (not a page)", a.status)
	}
	h.get("/report", "X-Test-Remote: 192.0.2.1:1")
	if a := h.get("/", "X-Test-Remote: 192.0.2.1:1"); a.status != 429 || a.header.Get("Retry-After") == "" {
		t.Errorf("third page request at burst 2: %d; want 429 with Retry-After", a.status)
	}
	if strings.Join(seen, ",") != "/errors,/report" {
		t.Errorf("pages saw %v; want /errors,/report (not /v1/*, not the limited one)", seen)
	}
	if a := h.do(http.MethodPost, "/errors", nil, "X-Test-Remote: 192.0.2.5:1"); a.status != 405 {
		t.Errorf("POST to a page: %d; want 405", a.status)
	}
	m := h.metrics()
	if !strings.Contains(m, `errtrail_api_requests_total{code="200",route="pages"} 2`) ||
		!strings.Contains(m, `errtrail_api_rate_limited_total{route="pages"} 1`) {
		t.Errorf("pages not counted under route=pages:\n%s", grepLines(m, "pages"))
	}
	if strings.Contains(m, "err_1") || strings.Contains(h.logs.String(), "err_1") {
		t.Error("the id of a page's query reached the metrics or the logs")
	}
}
