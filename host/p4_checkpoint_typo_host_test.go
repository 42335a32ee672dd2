package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// TestP4_ARowTheHostWroteWithoutItsCheckpointIsNotFoldedAgain: a row the
// host wrote (it carries writtenBy) read under a configuration whose
// checkpoint field is misspelled ("verison") would look like a legacy row,
// on which every event applies: the catch-up and the live fold refuse it,
// naming the attribute and what to check, and the row is left as it is
// (before, its quantity doubled). A legacy row (no writtenBy) still folds
// every event, and a rebuild under the new name writes the row anew.
func TestP4_ARowTheHostWroteWithoutItsCheckpointIsNotFoldedAgain(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	evs, err := h.Append(ctx, "Warehouse", "g-1", 0,
		host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("2")}}, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("3")}})
	require.NoError(t, err)
	_, err = h.CatchUp(ctx, "stock", "g-1")
	require.NoError(t, err)
	before := stockRow(t, env, rows, "g-1")
	require.Equal(t, "5", before["qty"].Str)

	typo := stockHostOn(t, env, stockConfig(events, rows, "verison"))
	err = catchUpErr(typo, "g-1")
	require.ErrorIs(t, err, host.ErrCheckpointMissing)
	assert.ErrorContains(t, err, `holds none of the checkpoint attributes the configuration names ("verison")`)
	assert.ErrorContains(t, err, "Check the projection's checkpoint field names for a typo")
	res, err := typo.ProcessBatch(ctx, lambdaFile(t, h.EventItem(evs[1])))
	require.NoError(t, err)
	require.Len(t, res.Projections["stock"].Rows, 1)
	assert.ErrorIs(t, res.Projections["stock"].Rows[0].Err, host.ErrCheckpointMissing, "the live fold too")
	assert.Equal(t, before, stockRow(t, env, rows, "g-1"), "the row is left as it was")

	// a legacy row, written by another system, folds every event
	legacy := abi.Item{"pk": abi.S("Stock#g-2"), "sk": abi.S("S"), "qty": abi.N("0")}
	env.Put(t, rows, legacy)
	_, err = h.Append(ctx, "Warehouse", "g-2", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("4")}})
	require.NoError(t, err)
	require.NoError(t, catchUpErr(typo, "g-2"))
	assert.Equal(t, "4", stockRow(t, env, rows, "g-2")["qty"].Str)

	// renamed on purpose: the rebuild writes the row anew
	_, err = typo.RebuildInstance(ctx, "stock", host.InstanceRef{Source: "Warehouse", StreamID: "g-1"})
	require.NoError(t, err)
	row := stockRow(t, env, rows, "g-1")
	assert.Equal(t, "5", row["qty"].Str)
	assert.Equal(t, "2", row["verison"].Str)
}

// TestP4_ACheckpointFieldMisspelledIsCaughtWithoutWrittenBy: a projection
// that records no writtenBy (the default) reads its rows under a
// misspelled checkpoint field ("verison"); the row holds "version", a
// whole number within two edits of it, so the fold refuses the row with a
// "did you mean" and leaves it as it is. A name far from any of the row's
// numbers (a row written without a checkpoint) still folds every event.
func TestP4_ACheckpointFieldMisspelledIsCaughtWithoutWrittenBy(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	_, err := h.Append(ctx, "Warehouse", "g-1", 0,
		host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("2")}}, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("3")}})
	require.NoError(t, err)
	_, err = h.CatchUp(ctx, "stock", "g-1")
	require.NoError(t, err)
	before := stockRow(t, env, rows, "g-1")

	cfg := stockConfig(events, rows, "verison")
	cfg.Projections[0].WrittenBy = ""
	typo := stockHostOn(t, env, cfg)
	err = catchUpErr(typo, "g-1")
	require.ErrorIs(t, err, host.ErrCheckpointMissing)
	assert.ErrorContains(t, err, `the row has no checkpoint attribute "verison" but a number "version" (2): did you mean "version"?`)
	assert.Equal(t, before, stockRow(t, env, rows, "g-1"), "the row is left as it was")

	cfg = stockConfig(events, rows, "appliedUpTo")
	cfg.Projections[0].WrittenBy = ""
	legacy := stockHostOn(t, env, cfg)
	env.Put(t, rows, abi.Item{"pk": abi.S("Stock#g-2"), "sk": abi.S("S"), "qty": abi.N("0")})
	_, err = h.Append(ctx, "Warehouse", "g-2", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("4")}})
	require.NoError(t, err)
	require.NoError(t, catchUpErr(legacy, "g-2"))
	assert.Equal(t, "4", stockRow(t, env, rows, "g-2")["qty"].Str)
}

// TestP4_VerifyUnderAMisspelledCheckpointFieldChecksNothingAndRepairsNothing:
// `host verify` under a configuration whose checkpoint field is misspelled
// counts each row as not checked, with the "did you mean", where it called
// every row drift and its repair rewrote them under the wrong name.
func TestP4_VerifyUnderAMisspelledCheckpointFieldChecksNothingAndRepairsNothing(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	for _, id := range []string{"g-1", "g-2"} {
		_, err := h.Append(ctx, "Warehouse", id, 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("2")}})
		require.NoError(t, err)
		_, err = h.CatchUp(ctx, "stock", id)
		require.NoError(t, err)
	}
	before := stockRow(t, env, rows, "g-1")
	cfg := stockConfig(events, rows, "verison")
	cfg.Projections[0].WrittenBy = ""
	typo := stockHostOn(t, env, cfg)
	rep, err := typo.Verify(ctx, host.VerifyOptions{Repair: true})
	require.NoError(t, err)
	c := rep.Total()
	assert.Equal(t, 0, c.Drift(), "no row called drift")
	assert.Equal(t, 0, c.Repaired, "nothing repaired")
	assert.Equal(t, 2, c.Errors, "both rows not checked")
	require.NotEmpty(t, rep.Errors)
	assert.ErrorIs(t, rep.Errors[0], host.ErrCheckpointMissing)
	assert.ErrorContains(t, rep.Errors[0], `did you mean "version"?`)
	assert.Equal(t, before, stockRow(t, env, rows, "g-1"), "the row is left as it was")
}

// catchUpErr is the error of h's catch-up of g's stock row, the call's or
// the row's.
func catchUpErr(h *host.Host, id string) error {
	o, err := h.CatchUp(context.Background(), "stock", id)
	if err == nil {
		err = o.Err
	}
	return err
}
