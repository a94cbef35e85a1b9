//go:build !race

package profiles

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
