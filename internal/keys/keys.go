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
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		v := k[n]
		b.WriteString(n)
		b.WriteByte('=')
		switch v.Kind {
		case abi.KindB:
			b.WriteString(strconv.Quote(string(v.Bytes)))
		default:
			b.WriteString(v.Str)
		}
	}
	return b.String()
}
