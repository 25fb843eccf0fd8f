package alerts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestOverloadKeepIsPinnedByPromtoolCases: the overload page's
// keep_firing_for is a trade (docs/alerting.md, "Rules"): long enough that
// a clear of two rule evaluations while ingest's lag gauge catches up stays
// one page, short enough that the page resolves within 45 s of the last
// overload reply. The promtool cases of alerts/tests/verdicts_test.yml hold
// both ends, so they must pass with the shipped keep and fail with a keep
// one evaluation (5 s) shorter or longer. A change of the keep that does
// not change those cases fails here.
func TestOverloadKeepIsPinnedByPromtoolCases(t *testing.T) {
	promtool := testenv.Binary(t, "promtool")
	rules, err := os.ReadFile("verdicts.yml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.ReadFile(filepath.Join("tests", "verdicts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	keepRe := regexp.MustCompile(`(?m)^(\s+- alert: ErrtrailAgentOverloaded\n(?:\s{8,}.*\n)*?\s+keep_firing_for: )(\S+)`)
	m := keepRe.FindSubmatchIndex(rules)
	if m == nil {
		t.Fatal("verdicts.yml: ErrtrailAgentOverloaded has no keep_firing_for")
	}
	keep, err := time.ParseDuration(string(rules[m[4]:m[5]]))
	if err != nil {
		t.Fatalf("keep_firing_for %q: %v", rules[m[4]:m[5]], err)
	}
	const step = 5 * time.Second // the cases' evaluation interval
	if !strings.Contains(string(cases), "evaluation_interval: 5s") {
		t.Fatal("tests/verdicts_test.yml no longer evaluates every 5 s: change step here")
	}

	// run writes verdicts.yml with the given keep and the cases beside it,
	// and returns promtool's output and error.
	run := func(k time.Duration) (string, error) {
		dir := t.TempDir()
		mutated := string(rules[:m[4]]) + k.String() + string(rules[m[5]:])
		if err := os.WriteFile(filepath.Join(dir, "verdicts.yml"), []byte(mutated), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "tests"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tests", "verdicts_test.yml"), cases, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "tests", "verdicts_test.yml")).CombinedOutput()
		return string(out), err
	}

	if out, err := run(keep); err != nil {
		t.Fatalf("the cases fail with the shipped keep_firing_for %v: %v\n%s", keep, err, out)
	}
	for _, k := range []time.Duration{keep - step, keep + step} {
		out, err := run(k)
		if err == nil {
			t.Errorf("the cases pass with keep_firing_for %v (shipped: %v): they do not pin the keep", k, keep)
			continue
		}
		if !strings.Contains(out, "ErrtrailAgentOverloaded") {
			t.Errorf("keep_firing_for %v: promtool failed, but not on ErrtrailAgentOverloaded: %v\n%s", k, err, out)
		}
	}
}
