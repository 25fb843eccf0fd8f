// Package scenarios holds the load tool's shipped scenario files, embedded
// so that `loadgen run NAME` and loadgen.Builtin work from any directory.
// The format is documented in package loadgen (Scenario) and by example in
// worked-example.yaml.
package scenarios

import "embed"

// FS holds every *.yaml file of this folder.
//
//go:embed *.yaml
var FS embed.FS
