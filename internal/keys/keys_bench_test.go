package keys

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// BenchmarkString renders a one- and a two-attribute key.
//
//	go test ./internal/keys -run '^$' -bench String -benchmem
func BenchmarkString(b *testing.B) {
	one := abi.Item{"orderId": abi.S("c100-3-42")}
	two := abi.Item{"pk": abi.S("LedgerRow#ob3-7"), "sk": abi.S("OUTBOX#0000000001#0000")}
	b.Run("attrs=1", func(b *testing.B) {
		for b.Loop() {
			_ = String(one)
		}
	})
	b.Run("attrs=2", func(b *testing.B) {
		for b.Loop() {
			_ = String(two)
		}
	})
}
