// Package browsertest drives errtrail's pages in headless Chromium for
// tests: Debian's chromium package (installed by scripts/stack install),
// through chromedp. A missing Chromium skips the test outside CI and fails
// it in CI, as internal/testenv does for the servers.
//
// Screenshots are test artifacts: each test saves them under
// $ERRTRAIL_ARTIFACTS/<area>/<test name>/ (.ci/run sets ERRTRAIL_ARTIFACTS
// to .stack/artifacts), else under os.TempDir()/errtrail-artifacts/, and
// logs the folder. Only tests import this package.
package browsertest

import (
	"context"
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
)

// ChromiumPath finds the browser: $ERRTRAIL_CHROMIUM, then chromium or
// chromium-browser on PATH.
func ChromiumPath(t testing.TB) string {
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

// Browser is one headless Chromium with one tab, stopped at the test's end.
type Browser struct {
	t         *testing.T
	ctx       context.Context
	Artifacts string // the folder of the screenshots
	Shots     int    // screenshots saved
}

// New starts Chromium for t; area names the artifacts' folder ("web").
func New(t *testing.T, area string) *Browser {
	t.Helper()
	path := ChromiumPath(t)
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
	return &Browser{t: t, ctx: ctx, Artifacts: ArtifactsDir(t, area)}
}

// ArtifactsDir is where t's artifacts of area go; it is created and logged.
func ArtifactsDir(t *testing.T, area string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "errtrail-artifacts", area)
	if a := os.Getenv("ERRTRAIL_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, area)
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// step bounds one browser action.
func (b *Browser) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 30*time.Second)
}

// Open loads url and returns its HTTP status.
func (b *Browser) Open(url string) int64 {
	b.t.Helper()
	return b.OpenResponse(url).Status
}

// OpenResponse loads url and returns the response (status and headers).
func (b *Browser) OpenResponse(url string) *network.Response {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
	return res
}

// SubmitByKeyboard types id into the id field (and agent into the agent
// field) and presses Enter, as a person would; it returns the response of
// the page the form leads to.
func (b *Browser) SubmitByKeyboard(id, agent string) *network.Response {
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

// Text is what the page shows in its main landmark (innerText: visible
// text, as a person or a screen reader gets it).
func (b *Browser) Text() string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		b.t.Fatalf("read the page: %v", err)
	}
	return s
}

// Eval evaluates js, whose value must be a string, in the page.
func (b *Browser) Eval(js string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// Screenshot saves the whole page as NAME.png in the artifacts folder.
func (b *Browser) Screenshot(name string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.Shots++
	path := filepath.Join(b.Artifacts, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
