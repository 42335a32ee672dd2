package host_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// pausedBehind returns a host delivering to sink whose ledger row "a" was
// written at version 1 and then left behind, paused, by n one-effect events
// (each appended and handed over in a batch of its own, as `host append`
// does while the projection is paused); the projection is resumed.
func pausedBehind(t *testing.T, sink *webhookSink, n int) *host.Host {
	t.Helper()
	ctx := context.Background()
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	h, _ := outboxHost(t, srv.URL, 1)
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0, add(1))
	require.NoError(t, err)
	res, err := h.ProcessBatch(ctx, records(h, evs))
	require.NoError(t, err)
	require.Empty(t, res.Failed())

	require.NoError(t, h.Pause("ledger"))
	for v := uint64(1); v <= uint64(n); v++ {
		more, err := h.Append(ctx, testlogic.Stream, "a", v, add(1))
		require.NoError(t, err)
		rec := records(h, more)
		rec[0].EventID, rec[0].DynamoDB.SequenceNumber = fmt.Sprint("p-", v), fmt.Sprint(1000+v)
		res, err := h.ProcessBatch(ctx, rec)
		require.NoError(t, err)
		require.True(t, res.Projections["ledger"].Paused)
	}
	require.NoError(t, h.Resume("ledger"))
	return h
}

func effectsUpTo(v int) []string {
	var out []string
	for i := 1; i <= v; i++ {
		out = append(out, fmt.Sprintf("a/v%d.0", i))
	}
	return out
}

func rowVersion(t *testing.T, h *host.Host) (total, checkpoint string) {
	t.Helper()
	row, ok, err := h.Row(context.Background(), "ledger", testlogic.RowKey("a"))
	require.NoError(t, err)
	require.True(t, ok)
	return row["total"].Str, row["checkpoints"].Map[testlogic.Stream+"#a"].Str
}

// A row left 150 effects behind while its projection was paused is caught
// up by its next live event (a gap fill), written in steps whose effects
// fit a transaction: every effect delivered once, in order, and the row at
// the head; later events fold as usual.
func TestO1_ARowFarBehindIsWrittenAgainByItsNextEvent(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{}
	h := pausedBehind(t, sink, 150)

	next, err := h.Append(ctx, testlogic.Stream, "a", 151, add(1))
	require.NoError(t, err)
	res, err := h.ProcessBatch(ctx, records(h, next))

	require.NoError(t, err)
	assert.Empty(t, res.Failed())
	o := res.Projections["ledger"].Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 151, o.Enqueued)
	assert.Equal(t, 151, o.Delivered)
	assert.Equal(t, effectsUpTo(152), sink.versions())
	total, cp := rowVersion(t, h)
	assert.Equal(t, "152", total)
	assert.Equal(t, "152", cp)

	last, err := h.Append(ctx, testlogic.Stream, "a", 152, add(1))
	require.NoError(t, err)
	res, err = h.ProcessBatch(ctx, records(h, last))
	require.NoError(t, err)
	assert.Empty(t, res.Failed())
	assert.Equal(t, effectsUpTo(153), sink.versions())
}

// CatchUpRow (`host catchup`) of a row far behind writes it in steps too.
func TestO1_CatchUpOfARowFarBehindIsWrittenInSteps(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{}
	h := pausedBehind(t, sink, 120)

	o, err := h.CatchUpRow(ctx, "ledger", testlogic.RowKey("a"))

	require.NoError(t, err)
	assert.Equal(t, 120, o.Enqueued)
	assert.Equal(t, 120, o.Delivered)
	assert.Equal(t, effectsUpTo(121), sink.versions())
	total, cp := rowVersion(t, h)
	assert.Equal(t, "121", total)
	assert.Equal(t, "121", cp)
}
