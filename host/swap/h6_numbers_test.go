package swap_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/swap"
)

// A fixture's expected row compares its numbers by value, as DynamoDB
// does: "2.20" expects a fold that makes 2.2, in a map, a list and a set
// too; a number of another value is still a difference, shown as written.
func TestH6_FixtureNumbersCompareByValue(t *testing.T) {
	key := abi.Item{"pk": abi.S("Cart#c-1"), "sk": abi.S("Cart")}
	got := abi.Item{"pk": key["pk"], "sk": key["sk"], "total": abi.N("2.2"), "qty": abi.N("3"),
		"lines": abi.L(abi.M(abi.Item{"price": abi.N("1.5")})), "sizes": abi.NS("1", "20")}
	want := abi.Item{"pk": key["pk"], "sk": key["sk"], "total": abi.N("2.20"), "qty": abi.N("3.0"),
		"lines": abi.L(abi.M(abi.Item{"price": abi.N("1.50")})), "sizes": abi.NS("2E1", "1.0")}
	assert.Empty(t, swap.CompareRows([]swap.Row{{Key: key, Item: got}}, []abi.Item{want}))

	want["total"] = abi.N("2.30")
	diffs := swap.CompareRows([]swap.Row{{Key: key, Item: got}}, []abi.Item{want})
	assert.Len(t, diffs, 1, "%v", diffs)
	assert.Contains(t, strings.Join(diffs, "\n"), `total = {"N":"2.2"}, want {"N":"2.30"}`)
	assert.Equal(t, "2.2", got["total"].Str, "the fold's row is not changed")
}
