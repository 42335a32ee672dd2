// Package keys renders a row key the one way the host shows keys to people
// and uses them as map keys: attributes sorted by name, "pk=a,sk=b".
package keys

import (
	"sort"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// String returns k's canonical, readable form: name=value pairs sorted by
// name and joined with commas; a binary value is quoted.
func String(k abi.Item) string {
	if len(k) == 1 { // the usual partition key alone: one pass, no sort
		for n, v := range k {
			return pair(n, v)
		}
	}
	// The names of a key of up to four attributes (every DynamoDB key has
	// one or two) are sorted in place on the stack, and the text is
	// written into one allocation of its final size.
	var small [4]string
	names := small[:0]
	if len(k) > len(small) {
		names = make([]string, 0, len(k))
	}
	size := 0
	for n, v := range k {
		names = append(names, n)
		size += len(n) + 2 + len(v.Str)
		if v.Kind == abi.KindB {
			size += len(v.Bytes) + 2
		}
	}
	if len(names) == 2 {
		if names[1] < names[0] {
			names[0], names[1] = names[1], names[0]
		}
	} else {
		sort.Strings(names)
	}
	var b strings.Builder
	b.Grow(size)
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writePair(&b, n, k[n])
	}
	return b.String()
}

// pair is one attribute's "name=value".
func pair(n string, v abi.Value) string {
	if v.Kind == abi.KindB {
		var b strings.Builder
		writePair(&b, n, v)
		return b.String()
	}
	return n + "=" + v.Str
}

// writePair writes "name=value"; a binary value quoted.
func writePair(b *strings.Builder, n string, v abi.Value) {
	b.WriteString(n)
	b.WriteByte('=')
	switch v.Kind {
	case abi.KindB:
		b.WriteString(strconv.Quote(string(v.Bytes)))
	default:
		b.WriteString(v.Str)
	}
}
