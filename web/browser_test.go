package web

// Browser tests: the pages in headless Chromium, driven by
// internal/browsertest (a missing Chromium skips them outside CI and fails
// them in CI). Each test saves full-page screenshots under the folder it
// logs: $ERRTRAIL_ARTIFACTS/web/<test>, else os.TempDir()/errtrail-artifacts/web/<test>.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/browsertest"
	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/lookup"
)

// browser is internal/browsertest's: the pages' screenshots go under
// the artifacts' "web" folder.
type browser = browsertest.Browser

func newBrowser(t *testing.T) *browser { return browsertest.New(t, "web") }

func wantShown(t *testing.T, page, text string, want ...string) {
	t.Helper()
	missing := false
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the browser shows no %q", page, w)
			missing = true
		}
	}
	if missing {
		t.Logf("%s shows:\n%s", page, text)
	}
}

// TestUnitBrowserFake drives the pages over the fake service: the plumbing
// of the stack's browser test (Chromium, keyboard submission, statuses,
// screenshots) and what a browser makes of the pages (the stylesheet loads
// under the CSP, the id field has focus, the tables render).
func TestUnitBrowserFake(t *testing.T) {
	start := time.Now()
	b := newBrowser(t)
	svc := &fakeService{story: sampleStory(), page: &lookup.Page{}}
	rep := &fakeReporter{rep: sampleReport()}
	srv := httptest.NewServer(New(Config{GrafanaURL: "http://grafana.invalid", Logger: stackload.Logger(t)}, svc, rep))
	defer srv.Close()

	if st := b.Open(srv.URL + "/"); st != http.StatusOK {
		t.Fatalf("start page: status %d", st)
	}
	if got := b.Eval(`document.activeElement.id`); got != "id" {
		t.Errorf("the focused element is %q; want the id field", got)
	}
	// The stylesheet loaded (same origin, allowed by the CSP): the form has
	// its border.
	if got := b.Eval(`getComputedStyle(document.querySelector('form.lookup')).borderTopStyle`); got != "solid" {
		t.Errorf("form.lookup border %q: the stylesheet did not apply", got)
	}
	if got := b.Eval(`document.querySelector('label[for=id]').textContent`); got != "Id from the ticket" {
		t.Errorf("the id field's label is %q", got)
	}
	b.Screenshot("1-start")

	res := b.SubmitByKeyboard(typedID, "")
	if res.Status != http.StatusOK {
		t.Fatalf("story: status %d", res.Status)
	}
	if svc.gotID != typedID {
		t.Errorf("the form sent id %q; want %q", svc.gotID, typedID)
	}
	if loc := b.Eval(`location.pathname + location.search`); loc != "/errors?id="+strings.ReplaceAll(typedID, "@", "%40")+"&agent=" {
		t.Errorf("the form led to %s", loc)
	}
	text := b.Text()
	wantShown(t, "story", text,
		"orchestrator-7 went over its SendMessage limit on research-agent.",
		"Attempts", "(this reply)", "retry_before_delay", "Context", "Retry storm", "Findings for the agent team",
		"retry_after_header_missing", "The record", "http_status")
	if n := b.Eval(`String(document.querySelectorAll('table.attempts tbody tr').length)`); n != "2" {
		t.Errorf("attempts table has %s rows; want 2", n)
	}
	if bg := b.Eval(`getComputedStyle(document.querySelector('table.attempts tr.broke')).backgroundColor`); bg == "rgba(0, 0, 0, 0)" {
		t.Error("the attempt that broke a rule is not highlighted")
	}
	if v := b.Eval(`document.getElementById('id').value`); v != typedID {
		t.Errorf("the id field holds %q after the lookup", v)
	}
	b.Screenshot("2-story")

	svc.storyErr = lookup.ErrNotFound
	if res := b.SubmitByKeyboard("no-such-id", ""); res.Status != http.StatusNotFound {
		t.Errorf("not found: status %d", res.Status)
	}
	wantShown(t, "not found", b.Text(), "No error reply found", "What was searched", "message_id")
	b.Screenshot("3-notfound")

	svc.storyErr = &lookup.UnavailableError{Err: context.DeadlineExceeded}
	if res := b.SubmitByKeyboard(typedID, ""); res.Status != http.StatusServiceUnavailable {
		t.Errorf("unavailable: status %d", res.Status)
	}
	wantShown(t, "unavailable", b.Text(), "Try again in a moment", "Retry in a minute")
	b.Screenshot("4-unavailable")

	if st := b.Open(srv.URL + "/agents/research-agent/report"); st != http.StatusOK {
		t.Errorf("report: status %d", st)
	}
	wantShown(t, "report", b.Text(), "Conformance report of research-agent", "retry_after_header_missing", "25 %", "Rules kept")
	b.Screenshot("5-report")
	t.Logf("browser test over the fake service: %s, %d screenshots", time.Since(start).Round(time.Millisecond), b.Shots)
}
