package swap_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// A plugin test folds removeRow as a host with removal does: the removed
// row is absent, and a later event starts it again from initial.
func TestT3_FoldReportsARemovedRowAbsentAndStartsItAgain(t *testing.T) {
	ev := func(id string, v uint64, typ string, n string) swap.SrcEvent {
		data := abi.Item{}
		if n != "" {
			data["n"] = abi.N(n)
		}
		return swap.SrcEvent{Event: abi.Event{Stream: testlogic.Stream, StreamID: id, Version: v, Type: typ, Data: data}}
	}
	rows, err := swap.Fold(context.Background(), &testlogic.Ledger{}, []swap.SrcEvent{
		ev("a", 1, "Add", "1"), ev("a", 2, "Close", ""),
		ev("b", 1, "Add", "1"), ev("b", 2, "Close", ""), ev("b", 3, "Add", "5"),
	})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.NoError(t, rows[0].Err)
	assert.Equal(t, testlogic.RowKey("a"), rows[0].Key)
	assert.Nil(t, rows[0].Item, "a removed row is absent")
	require.NoError(t, rows[1].Err)
	assert.Equal(t, "5", rows[1].Item["total"].Str)
	assert.Equal(t, "3", rows[1].Item["log"].Str, "started again from initial")
	assert.Empty(t, swap.CompareRows(rows, []abi.Item{{"pk": abi.S("Ledger#b"), "sk": abi.S("L"), "total": abi.N("5"), "count": abi.N("1"), "log": abi.S("3"), "doubled": abi.N("10")}}))
}
