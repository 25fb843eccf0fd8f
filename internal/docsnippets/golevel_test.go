package docsnippets

import (
	"go/version"
	"os/exec"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestGoLineIsTheFloor: go.mod's go line is the highest go line of the
// module's dependencies, no more: a module that imports emit is held to
// the go line, so a higher one (1.26.8 once) forces it onto a release
// nothing needs. That the code builds at that release is scripts/test's
// "emit with go.mod's go version" step (GOTOOLCHAIN). Should the code
// itself ever need a newer release than every dependency, raise the line
// and say why here.
func TestGoLineIsTheFloor(t *testing.T) {
	root := testenv.ModuleRoot(t)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Main}} {{.Path}} {{.GoVersion}}", "all")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	var main, floor, floorBy string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 { // a dependency without a go line asks for nothing
			continue
		}
		v := "go" + f[2]
		if f[0] == "true" {
			main = v
			continue
		}
		if floor == "" || version.Compare(v, floor) > 0 {
			floor, floorBy = v, f[1]
		}
	}
	if main == "" || floor == "" {
		t.Fatalf("no go line found (main %q, dependencies %q) in:\n%s", main, floor, out)
	}
	if version.Compare(main, floor) != 0 {
		t.Fatalf("go.mod's go line is %s, the dependencies need %s (%s): require exactly that", main, floor, floorBy)
	}
}
