package dynamo

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// BenchmarkBatchGetItemKeys measures BatchGetItem's per-key work on 10
// keys of BenchmarkClientRequest's shape (an S and an N): appendKey
// writing them into the request, AppendItem as it wrote them before,
// parts the values the answer is ordered by, and keyID the canonical
// text that ordered it before (still the path for keys of differing
// attributes).
//
//	go test ./host/internal/store/dynamo -run '^$' -bench BatchGetItemKeys -benchmem
func BenchmarkBatchGetItemKeys(b *testing.B) {
	var keys []abi.Item
	for i := range 10 {
		keys = append(keys, abi.Item{"pk": abi.S("p"), "sk": abi.N(strconv.Itoa(i))})
	}
	names := []string{"pk", "sk"}
	var buf bytes.Buffer
	b.Run("appendKey", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			for _, k := range keys {
				_ = appendKey(&buf, k, names)
			}
		}
	})
	b.Run("AppendItem", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			for _, k := range keys {
				_ = ddbjson.AppendItem(&buf, k)
			}
		}
	})
	b.Run("parts", func(b *testing.B) {
		parts := make([]keyPart, 0, 20)
		for b.Loop() {
			parts = parts[:0]
			for _, k := range keys {
				parts, _, _ = appendKeyParts(parts, k, names)
			}
		}
	})
	b.Run("keyID", func(b *testing.B) {
		id := make([]byte, 0, 400)
		for b.Loop() {
			id = id[:0]
			for _, k := range keys {
				id, _ = appendKeyID(id, k, nil)
			}
		}
	})
}
