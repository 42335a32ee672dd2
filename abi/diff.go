package abi

import (
	"fmt"
	"sort"
)

// DiffItems compares the attributes of two items of the row named key and
// returns one line per difference, in attribute order: "row KEY: A
// missing, want W", "row KEY: A = G not expected", "row KEY: A = G, want
// W". show renders a value in the caller's notation. It serves the host's
// fixture checks and the guest SDK's native test helper alike, so both
// report a difference the same way.
func DiffItems(key string, want, got Item, show func(Value) string) []string {
	names := make([]string, 0, len(want)+len(got))
	for k := range want {
		names = append(names, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var lines []string
	for _, k := range names {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !gok:
			lines = append(lines, fmt.Sprintf("row %s: %s missing, want %s", key, k, show(w)))
		case !wok:
			lines = append(lines, fmt.Sprintf("row %s: %s = %s not expected", key, k, show(g)))
		case !w.Equal(g):
			lines = append(lines, fmt.Sprintf("row %s: %s = %s, want %s", key, k, show(g), show(w)))
		}
	}
	return lines
}
