package lookup

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// readSide are the packages that read errtrail's tables for people, and
// must not link the alerter: they take its verdicts from the incidents
// table, or from an incidents.Recomputer the command hands them.
var readSide = []string{
	"github.com/errtrail/errtrail/lookup",
	"github.com/errtrail/errtrail/report",
}

// TestReadSideImportsNoAlerter: neither lookup nor report depends on the
// alerter package, directly or through another package (go list -deps,
// tests left out). The check must see the packages: lookup itself and
// schema are in the list it reads.
func TestReadSideImportsNoAlerter(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	for _, pkg := range readSide {
		out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		has := func(p string) bool {
			for _, d := range deps {
				if d == p {
					return true
				}
			}
			return false
		}
		if !has(pkg) || !has("github.com/errtrail/errtrail/schema") {
			t.Fatalf("go list -deps %s does not list the package and schema: %v", pkg, deps)
		}
		for _, d := range deps {
			if d == "github.com/errtrail/errtrail/alerter" || strings.HasPrefix(d, "github.com/errtrail/errtrail/alerter/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
