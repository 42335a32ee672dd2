package apply

import (
	"fmt"
	"math"
	"testing"
)

// TestO1_OutboxSequenceIsFmtsPadding: an outbox item's sequence text is
// fmt's "%020d#%03d" for revisions and indexes of every width, negative
// ones included.
func TestO1_OutboxSequenceIsFmtsPadding(t *testing.T) {
	revs := []int64{0, 1, 9, 10, 99, 12345, 1<<40 + 7, math.MaxInt64, -1, math.MinInt64}
	idxs := []int{0, 1, 9, 10, 99, 100, 999, 1000, 123456, -1, -42}
	for _, r := range revs {
		for _, i := range idxs {
			if got, want := seq(r, i), fmt.Sprintf("%020d#%03d", r, i); got != want {
				t.Fatalf("seq(%d, %d) = %q, want %q", r, i, got, want)
			}
		}
	}
}
