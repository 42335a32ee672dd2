package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// The configuration's removal (and readModel.entityType) reaches the
// engine through host.New: removeRow writes a tombstone with the TTL, Row
// reports it absent, a redelivery is already applied, and a later event
// starts the row again from initial.
func TestT1_HostRemovesARowThroughTheConfiguration(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "ledger", false)
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": %q,
	    "checkpoint": {"field": "version"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "LedgerRow"},
	    "removal": {"ttl": "720h", "ttlAttribute": "expiresAt"}}]}`, events, testlogic.Stream, rows))
	require.NoError(t, err)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", &testlogic.Ledger{}), host.WithClient(env.Client),
		host.WithClock(func() time.Time { return now }), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0,
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}}, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("2")}},
		host.NewEvent{Type: "Close", Data: abi.Item{}})
	require.NoError(t, err)
	key := testlogic.RowKey("a")

	res, err := h.ApplyEvents(ctx, "ledger", evs[0], evs[1])
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	_, ok, err := h.Row(ctx, "ledger", key)
	require.NoError(t, err)
	require.True(t, ok)

	res, err = h.ApplyEvents(ctx, "ledger", evs[2])
	require.NoError(t, err)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.True(t, o.Removed)
	assert.True(t, o.Written)
	assert.Nil(t, o.State)
	assert.Equal(t, int64(2), o.Revision)

	it, ok, err := h.Row(ctx, "ledger", key)
	require.NoError(t, err)
	assert.False(t, ok, "Row reports a tombstone as absent")
	assert.Nil(t, it)
	stored, err := dynamo.New(env.Client).GetItem(ctx, rows, key)
	require.NoError(t, err)
	assert.Equal(t, abi.Item{
		"pk": key["pk"], "sk": key["sk"],
		"__edd_e__": abi.S("LedgerRow#tombstone"),
		"version":   abi.N("3"),
		"rev":       abi.N("2"),
		"expiresAt": abi.N(strconv.FormatInt(now.Add(720*time.Hour).Unix(), 10)),
	}, stored, "the tombstone keeps the key, the marker, the checkpoint, the revision and the TTL, nothing else (no createdAt)")

	res, err = h.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	o = res.Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "a redelivery never resurrects the tombstone")
	assert.True(t, o.Removed)
	assert.Len(t, o.Instances[0].AlreadyApplied, 3)

	later, err := h.Append(ctx, testlogic.Stream, "a", 3, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("7")}})
	require.NoError(t, err)
	res, err = h.ApplyEvents(ctx, "ledger", later...)
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	assert.False(t, res.Rows[0].Removed)
	it, ok, err = h.Row(ctx, "ledger", key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "7", it["total"].Str, "from initial")
	assert.Equal(t, "4", it["version"].Str)
	assert.Equal(t, "3", it["rev"].Str)
	assert.NotContains(t, it, "expiresAt")
	assert.NotContains(t, it, "__edd_e__")
}
