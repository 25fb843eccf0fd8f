//go:build race

package redact

// raceEnabled reports whether the test binary was built with -race, under
// which the 1 MiB texts of the work tests shrink to 64 KiB: the work count
// is the same with or without the detector, which only makes them slow.
const raceEnabled = true
