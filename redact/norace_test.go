//go:build !race

package redact

// raceEnabled reports whether the test binary was built with -race (see
// race_test.go).
const raceEnabled = false
