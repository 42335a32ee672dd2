package keys

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestKeys_SortedReadableAndDistinct(t *testing.T) {
	k := abi.Item{"sk": abi.S("OrderSummary"), "pk": abi.S("OrderSummary#o-1")}
	if got, want := String(k), "pk=OrderSummary#o-1,sk=OrderSummary"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if String(abi.Item{"pk": abi.B([]byte("a,b"))}) == String(abi.Item{"pk": abi.S("a,b")}) {
		t.Fatal("a binary value renders like a string")
	}
}
