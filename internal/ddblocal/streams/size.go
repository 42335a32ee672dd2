package streams

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
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

// itemSize is an item's size as DynamoDB counts it: attribute names plus
// values (strings and binaries by length, numbers by digits, containers
// with their overhead).
func itemSize(it abi.Item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v abi.Value) int {
	switch v.Kind {
	case abi.KindS:
		return len(v.Str)
	case abi.KindN:
		return numberSize(v.Str)
	case abi.KindB:
		return len(v.Bytes)
	case abi.KindBOOL, abi.KindNULL:
		return 1
	case abi.KindM:
		n := 3
		for k, e := range v.Map {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case abi.KindL:
		n := 3
		for _, e := range v.List {
			n += valueSize(e) + 1
		}
		return n
	case abi.KindSS:
		n := 0
		for _, s := range v.Strs {
			n += len(s)
		}
		return n
	case abi.KindNS:
		n := 0
		for _, s := range v.Strs {
			n += numberSize(s)
		}
		return n
	case abi.KindBS:
		n := 0
		for _, b := range v.Blobs {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize approximates DynamoDB's number size: one byte per two
// significant digits, plus one.
func numberSize(s string) int {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.Replace(s, ".", "", 1)
	s = strings.Trim(s, "0")
	if s == "" {
		return 1
	}
	return (len(s)+1)/2 + 1
}
