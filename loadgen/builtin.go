package loadgen

import (
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/errtrail/errtrail/scenarios"
)

// Builtin returns a shipped scenario by name ("demo", "worked-example", ...;
// a ".yaml" suffix is optional).
func Builtin(name string) (*Scenario, error) {
	name = strings.TrimSuffix(name, ".yaml")
	b, err := fs.ReadFile(scenarios.FS, name+".yaml")
	if err != nil {
		return nil, err
	}
	return ParseScenario(b, ".")
}

// BuiltinNames lists the shipped scenarios.
func BuiltinNames() []string {
	var names []string
	ents, _ := fs.ReadDir(scenarios.FS, ".")
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	return names
}

// Resolve loads arg as a file when one exists at that path, else as a
// shipped scenario name.
func Resolve(arg string) (*Scenario, error) {
	if _, err := os.Stat(arg); err == nil {
		return LoadScenario(arg)
	}
	return Builtin(arg)
}
