package ddblocal

import (
	"strconv"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// BenchmarkTableGet looks up items of a range-key table in memory: 8
// partitions of 2500 items with numeric range keys, the shape
// BenchmarkServerCPU's PutItem leaves behind. Every GetItem and every
// write (its condition's read, then its apply) runs this search.
//
//	go test ./ddblocal -run '^$' -bench TableGet -benchmem
func BenchmarkTableGet(b *testing.B) {
	t := newTable(tableMeta{TableName: "t",
		KeySchema:            []keyElem{{"pk", "HASH"}, {"sk", "RANGE"}},
		AttributeDefinitions: []attrDef{{"pk", "S"}, {"sk", "N"}}})
	const parts, rows = 8, 2500
	for p := range parts {
		for i := range rows {
			t.put(abi.Item{"pk": abi.Value{Kind: abi.KindS, Str: "w" + strconv.Itoa(p)},
				"sk": abi.Value{Kind: abi.KindN, Str: strconv.Itoa(i)}, "name": abi.Value{Kind: abi.KindS, Str: "item-name"}})
		}
	}
	keys := make([]abi.Item, 1024)
	for i := range keys {
		keys[i] = abi.Item{"pk": abi.Value{Kind: abi.KindS, Str: "w" + strconv.Itoa(i%parts)},
			"sk": abi.Value{Kind: abi.KindN, Str: strconv.Itoa(i * 7919 % rows)}}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if t.get(keys[i%len(keys)]) == nil {
			b.Fatal("item not found")
		}
	}
}
