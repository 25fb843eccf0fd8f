package web

// Browser tests: the pages in headless Chromium (Debian's chromium package,
// installed by scripts/stack install), driven by chromedp. A missing
// Chromium skips them outside CI and fails them in CI, as internal/testenv
// does for the servers. Each test saves full-page screenshots under the
// folder it logs: $ERRTRAIL_ARTIFACTS/web, else os.TempDir()/errtrail-web-artifacts.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"

	"github.com/errtrail/errtrail/internal/stackload"
)

// chromiumPath finds the browser: $ERRTRAIL_CHROMIUM, then chromium or
// chromium-browser on PATH.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ERRTRAIL_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("ERRTRAIL_CHROMIUM=%s: %v", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium (chromium, chromium-browser or $ERRTRAIL_CHROMIUM); install it with scripts/stack install"
	if testenv.InCI() {
		t.Fatal("CI=true and " + msg)
	}
	t.Skip("skipped outside CI: " + msg)
	return ""
}

// browser is one headless Chromium with one tab, stopped at the test's end.
type browser struct {
	t         *testing.T
	ctx       context.Context
	artifacts string
	shots     int
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// This machine's network is closed: no update, sync or QUIC probes.
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	start := time.Now()
	// The first Run starts the browser; it must not carry a timeout.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	t.Logf("started %s in %s", path, time.Since(start).Round(time.Millisecond))
	return &browser{t: t, ctx: ctx, artifacts: artifactsDir(t)}
}

// artifactsDir is where the screenshots go; the test logs it.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "errtrail-web-artifacts")
	if a := os.Getenv("ERRTRAIL_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "web")
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// step bounds one browser action.
func (b *browser) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 30*time.Second)
}

// open loads url and returns its HTTP status.
func (b *browser) open(url string) int64 {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
	return res.Status
}

// submitByKeyboard types id into the id field (and agent into the agent
// field) and presses Enter, as a person would; it returns the status of the
// page the form leads to.
func (b *browser) submitByKeyboard(id, agent string) *network.Response {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	// Clear what a previous page left in the fields (SetValue refuses "").
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('id').value = ''; document.getElementById('agent').value = ''; true`)); err != nil {
		b.t.Fatalf("clear the form: %v", err)
	}
	if agent != "" {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("agent"), agent)); err != nil {
			b.t.Fatalf("type the agent: %v", err)
		}
	}
	res, err := chromedp.RunResponse(ctx, chromedp.SendKeys(chromedp.ID("id"), id+kb.Enter))
	if err != nil {
		b.t.Fatalf("type the id and press Enter: %v", err)
	}
	return res
}

// text is what the page shows in its main landmark (innerText: visible
// text, as a person or a screen reader gets it).
func (b *browser) text() string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		b.t.Fatalf("read the page: %v", err)
	}
	return s
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// screenshot saves the whole page as NAME.png in the artifacts folder.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.shots++
	path := filepath.Join(b.artifacts, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

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

	if st := b.open(srv.URL + "/"); st != http.StatusOK {
		t.Fatalf("start page: status %d", st)
	}
	if got := b.eval(`document.activeElement.id`); got != "id" {
		t.Errorf("the focused element is %q; want the id field", got)
	}
	// The stylesheet loaded (same origin, allowed by the CSP): the form has
	// its border.
	if got := b.eval(`getComputedStyle(document.querySelector('form.lookup')).borderTopStyle`); got != "solid" {
		t.Errorf("form.lookup border %q: the stylesheet did not apply", got)
	}
	if got := b.eval(`document.querySelector('label[for=id]').textContent`); got != "Id from the ticket" {
		t.Errorf("the id field's label is %q", got)
	}
	b.screenshot("1-start")

	res := b.submitByKeyboard(typedID, "")
	if res.Status != http.StatusOK {
		t.Fatalf("story: status %d", res.Status)
	}
	if svc.gotID != typedID {
		t.Errorf("the form sent id %q; want %q", svc.gotID, typedID)
	}
	if loc := b.eval(`location.pathname + location.search`); loc != "/errors?id="+strings.ReplaceAll(typedID, "@", "%40")+"&agent=" {
		t.Errorf("the form led to %s", loc)
	}
	text := b.text()
	wantShown(t, "story", text,
		"orchestrator-7 went over its SendMessage limit on research-agent.",
		"Attempts", "(this reply)", "retry_before_delay", "Context", "Retry storm", "Findings for the agent team",
		"retry_after_header_missing", "The record", "http_status")
	if n := b.eval(`String(document.querySelectorAll('table.attempts tbody tr').length)`); n != "2" {
		t.Errorf("attempts table has %s rows; want 2", n)
	}
	if bg := b.eval(`getComputedStyle(document.querySelector('table.attempts tr.broke')).backgroundColor`); bg == "rgba(0, 0, 0, 0)" {
		t.Error("the attempt that broke a rule is not highlighted")
	}
	if v := b.eval(`document.getElementById('id').value`); v != typedID {
		t.Errorf("the id field holds %q after the lookup", v)
	}
	b.screenshot("2-story")

	svc.storyErr = lookup.ErrNotFound
	if res := b.submitByKeyboard("no-such-id", ""); res.Status != http.StatusNotFound {
		t.Errorf("not found: status %d", res.Status)
	}
	wantShown(t, "not found", b.text(), "No error reply found", "What was searched", "message_id")
	b.screenshot("3-notfound")

	svc.storyErr = &lookup.UnavailableError{Err: context.DeadlineExceeded}
	if res := b.submitByKeyboard(typedID, ""); res.Status != http.StatusServiceUnavailable {
		t.Errorf("unavailable: status %d", res.Status)
	}
	wantShown(t, "unavailable", b.text(), "Try again in a moment", "Retry in a minute")
	b.screenshot("4-unavailable")

	if st := b.open(srv.URL + "/agents/research-agent/report"); st != http.StatusOK {
		t.Errorf("report: status %d", st)
	}
	wantShown(t, "report", b.text(), "Conformance report of research-agent", "retry_after_header_missing", "25 %", "Rules kept")
	b.screenshot("5-report")
	t.Logf("browser test over the fake service: %s, %d screenshots", time.Since(start).Round(time.Millisecond), b.shots)
}
