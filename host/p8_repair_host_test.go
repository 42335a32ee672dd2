package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// TestP8_AnEventRepairedInPlaceIsFoldedByCatchUpAndItsRecordThenPasses: an
// event whose data the plugin cannot fold (qty a string) fails its row;
// the error says to repair the event and run `host catchup --id`. Once the
// item is repaired in the event table, the change-feed record (which keeps
// the event as it was) still fails; the catch-up folds the repaired event,
// and the same record then passes (the row holds its version), so the
// shard moves on.
func TestP8_AnEventRepairedInPlaceIsFoldedByCatchUpAndItsRecordThenPasses(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	evs, err := h.Append(ctx, "Warehouse", "g-1", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.S("2")}})
	require.NoError(t, err)
	item := h.EventItem(evs[0])
	recs := lambdaFile(t, item)

	failing := func() *host.Outcome {
		t.Helper()
		res, err := h.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		rows := res.Projections["stock"].Rows
		require.Len(t, rows, 1)
		if !rows[0].Failed() {
			return nil
		}
		resp, err := res.Response()
		require.NoError(t, err)
		assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures)
		return &rows[0]
	}
	o := failing()
	require.NotNil(t, o, "the event's data does not fit the plugin's type")
	assert.Contains(t, o.Err.Error(), "or the event is repaired in the event table and the row caught up (`host catchup --id g-1`: a change-feed record keeps the event as it was)")

	repaired := abi.CloneItem(item)
	data := abi.CloneItem(repaired["data"].Map)
	data["qty"] = abi.N("2")
	repaired["data"] = abi.M(data)
	env.Put(t, events, repaired)
	require.NotNil(t, failing(), "the record still carries the event as it was")
	assert.Nil(t, stockRow(t, env, rows, "g-1"))

	c, err := h.CatchUp(ctx, "stock", "g-1")
	require.NoError(t, err)
	require.NoError(t, c.Err)
	assert.Len(t, c.Applied(), 1, "the repaired event")
	assert.Equal(t, "2", stockRow(t, env, rows, "g-1")["qty"].Str)

	assert.Nil(t, failing(), "the record passes: the row holds its version")
	assert.Equal(t, "2", stockRow(t, env, rows, "g-1")["qty"].Str, "and is not folded twice")
}
