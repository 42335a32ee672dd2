// Package suggest finds the name a mistyped one was probably meant to be:
// the "did you mean" of the configuration's errors and of a row whose
// checkpoint attribute is misnamed.
package suggest

import "strings"

// Nearest returns the name key was probably meant to be: the same name in
// other case, else the nearest within two edits ("" when none is).
func Nearest(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := Distance(strings.ToLower(key), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
