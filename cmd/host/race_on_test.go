//go:build race

package main

// raceEnabled is set under the race detector, which slows the host's side
// of a plugin load several times: timing bounds are relaxed.
const raceEnabled = true
