package host_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// TestES7_ProcessBatchPassesOverARecordWhoseItemWasRemovedOrCorrected: a
// batch holds the INSERT record of a stray item (pk of g-1, streamId
// someone-else) and then g-2's event. While the item is in the event
// table, the record fails. Once the item is removed, the same record is
// passed over: listed in Result.Obsolete, not in DecodeFailures, not
// reported, with a warning naming its key. Once it is corrected (put
// again with the streamId its key says), the item as it is now is folded
// as the record's event at once (Result.Corrected), where its MODIFY
// record would never fold it. g-2's event is folded every time.
func TestES7_ProcessBatchPassesOverARecordWhoseItemWasRemovedOrCorrected(t *testing.T) {
	for _, fix := range []string{"removed", "corrected"} {
		t.Run(fix, func(t *testing.T) {
			ctx := context.Background()
			logs := &syncbuf.Buffer{}
			h, env, events, rows := stockHost(t, "", host.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			stray := strayItem(h, "g-1", "someone-else", 1, "3")
			env.Put(t, events, stray)
			evs, err := h.Append(ctx, "Warehouse", "g-2", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("7")}})
			require.NoError(t, err)
			recs := lambdaFile(t, stray, h.EventItem(evs[0]))

			res, err := h.ProcessBatch(ctx, recs)
			require.NoError(t, err)
			require.Len(t, res.DecodeFailures, 1, "the item is there as the record shows it")
			assert.Empty(t, res.Obsolete)
			assert.Empty(t, res.Corrected)
			resp, err := res.Response()
			require.NoError(t, err)
			assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures)

			key := abi.Item{"pk": stray["pk"], "sk": stray["sk"]}
			if fix == "removed" {
				env.Delete(t, events, key)
			} else {
				fixed := abi.CloneItem(stray)
				fixed["streamId"] = abi.S("g-1")
				env.Put(t, events, fixed)
			}
			res, err = h.ProcessBatch(ctx, recs)
			require.NoError(t, err)
			assert.Empty(t, res.DecodeFailures)
			resp, err = res.Response()
			require.NoError(t, err)
			assert.Empty(t, resp.BatchItemFailures, "not reported failed")
			assert.Equal(t, "7", stockRow(t, env, rows, "g-2")["qty"].Str)
			assert.Nil(t, stockRow(t, env, rows, "someone-else"), "the stray item is never folded")
			out := logs.String()
			assert.Contains(t, out, "level=WARN")
			assert.Contains(t, out, stray["pk"].Str, "the warning names the key")
			if fix == "corrected" {
				assert.Empty(t, res.Obsolete)
				require.Len(t, res.Corrected, 1)
				assert.Equal(t, 0, res.Corrected[0].Position)
				assert.Equal(t, "100", res.Corrected[0].Identifier)
				assert.ErrorIs(t, res.Corrected[0].Err, host.ErrEventItemKey, "the record's own error is kept")
				require.Len(t, res.Events, 2)
				assert.Equal(t, "g-1", res.Events[0].StreamID, "the event as the item is now, in the record's place")
				assert.Equal(t, 0, res.Events[0].Position)
				row := stockRow(t, env, rows, "g-1")
				require.NotNil(t, row, "the corrected event is folded at once")
				assert.Equal(t, "3", row["qty"].Str)
				assert.Contains(t, out, "change-feed record's event item was corrected since: the item as it is now is folded in its place")
				// a redelivery of the record changes nothing more
				res, err = h.ProcessBatch(ctx, recs)
				require.NoError(t, err)
				assert.Equal(t, "3", stockRow(t, env, rows, "g-1")["qty"].Str, "folded once")
				return
			}
			assert.Empty(t, res.Corrected)
			require.Len(t, res.Obsolete, 1)
			assert.Equal(t, 0, res.Obsolete[0].Position)
			assert.Equal(t, "100", res.Obsolete[0].Identifier)
			assert.ErrorIs(t, res.Obsolete[0].Err, host.ErrEventItemKey, "the record's own error is kept")
			assert.Nil(t, stockRow(t, env, rows, "g-1"))
			assert.Contains(t, out, "change-feed record passed over: the event table no longer holds its item (it was removed since)")
		})
	}
}

// TestES7_ARecordWhoseItemWasChangedIntoAnotherBadItemStillFails: the
// stray item changed into another one that does not decode (a wrong
// streamId again) is not passed over, which would skip its event: the
// record fails, with a warning that the item was changed but still does
// not decode; once the item is corrected, the same record folds it.
func TestES7_ARecordWhoseItemWasChangedIntoAnotherBadItemStillFails(t *testing.T) {
	ctx := context.Background()
	logs := &syncbuf.Buffer{}
	h, env, events, rows := stockHost(t, "", host.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	stray := strayItem(h, "g-1", "someone-else", 1, "3")
	env.Put(t, events, stray)
	recs := lambdaFile(t, stray)
	again := abi.CloneItem(stray)
	again["streamId"] = abi.S("someone-else-again")
	env.Put(t, events, again)

	res, err := h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	require.Len(t, res.DecodeFailures, 1, "still failed")
	assert.Empty(t, res.Obsolete, "not passed over")
	assert.Empty(t, res.Corrected)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures)
	assert.Contains(t, logs.String(), "the event item of a failing change-feed record was changed since, but does not decode either")
	assert.Contains(t, logs.String(), `streamId \"someone-else-again\"`, "the warning says why the item as it is now does not decode")
	assert.Nil(t, stockRow(t, env, rows, "g-1"))

	fixed := abi.CloneItem(stray)
	fixed["streamId"] = abi.S("g-1")
	env.Put(t, events, fixed)
	res, err = h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	assert.Empty(t, res.DecodeFailures)
	require.Len(t, res.Corrected, 1)
	row := stockRow(t, env, rows, "g-1")
	require.NotNil(t, row)
	assert.Equal(t, "3", row["qty"].Str)
}

// TestES7_ARecordWhoseItemIsUnchangedStillFails: a stray item left in the
// event table as its record shows it fails at every delivery (one read of
// the table each time), and is not passed over; nor is an item removed
// and put back the same.
func TestES7_ARecordWhoseItemIsUnchangedStillFails(t *testing.T) {
	ctx := context.Background()
	h, env, events, _ := stockHost(t, "")
	stray := strayItem(h, "g-1", "someone-else", 1, "3")
	env.Put(t, events, stray)
	recs := lambdaFile(t, stray)
	for i := range 3 {
		if i == 2 {
			env.Delete(t, events, abi.Item{"pk": stray["pk"], "sk": stray["sk"]})
			env.Put(t, events, stray)
		}
		res, err := h.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		require.Len(t, res.DecodeFailures, 1, "delivery %d", i+1)
		assert.ErrorIs(t, res.DecodeFailures[0].Err, host.ErrEventItemKey)
		assert.Contains(t, res.DecodeFailures[0].Err.Error(), "remove the item", "what to do")
		assert.Contains(t, res.DecodeFailures[0].Err.Error(), "at its next attempt it is passed over once the item is removed, and folded from the item as it is now once the item is corrected", "and what then becomes of the record")
		assert.Empty(t, res.Obsolete, "delivery %d", i+1)
		resp, err := res.Response()
		require.NoError(t, err)
		assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures, "delivery %d", i+1)
	}
}
