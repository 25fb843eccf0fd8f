//go:build race

package parse

// raceEnabled reports whether the test binary was built with -race, under
// which allocation counts are not reliable (sync.Pool drops items at random
// and the detector's instrumentation allocates).
const raceEnabled = true
