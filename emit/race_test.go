//go:build race

package emit

// raceEnabled: the race detector is on, and allocation counts (sync.Pool
// drops items at random under it) mean nothing.
const raceEnabled = true
