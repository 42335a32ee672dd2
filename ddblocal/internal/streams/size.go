package streams

import (
	"fmt"
	"strconv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
)

// seqDigits is the length of every sequence number this package writes:
// a leading "1" and the counter on 20 digits, so the text sorts as the
// number does and has the 21 digits DynamoDB Streams clients expect.
const seqDigits = 21

// formatSeq writes a sequence number as DynamoDB Streams' decimal text.
func formatSeq(n uint64) string { return fmt.Sprintf("1%020d", n) }

// parseSeq reads a sequence number written by formatSeq.
func parseSeq(s string) (uint64, bool) {
	if len(s) != seqDigits || s[0] != '1' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 64)
	return n, err == nil
}

// itemSize is an item's size as DynamoDB counts it (the same rules as the
// 400 KB item limit).
func itemSize(it abi.Item) int { return expr.ItemSize(it) }
