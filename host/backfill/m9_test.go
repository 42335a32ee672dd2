package backfill_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// outboxHost is a host of the fixture whose ledger commits one outbox
// effect per applied event, in the row's partition; with a checkpoint map,
// rows may have several instances (the backfill goes row by row).
func outboxHost(t *testing.T, f *opstest.Fixture, withMap bool) *host.Host {
	cfg := *f.Cfg
	cfg.Projections = append([]host.ProjectionConfig(nil), f.Cfg.Projections...)
	p := &cfg.Projections[0]
	p.Plugin = "native:ledgerfx"
	p.ReadModel.EntityType = "LedgerRow"
	p.Outbox = &host.OutboxConfig{}
	if withMap {
		p.Checkpoint = host.CheckpointConfig{Map: "checkpoints"}
	}
	return f.NewHostFor(t, &cfg, host.WithNative("ledgerfx", testlogic.WithEffects(f.Ledger, 1)))
}

// effectsByVersion counts the outbox items committed for each version of
// the row's stream.
func effectsByVersion(t *testing.T, f *opstest.Fixture, row string) map[string]int {
	t.Helper()
	out := map[string]int{}
	page, err := dynamo.New(f.Env.Client).Query(context.Background(), store.Query{Table: f.Rows, KeyCond: "pk = :h",
		Values: map[string]abi.Value{":h": testlogic.RowKey(row)["pk"]}})
	require.NoError(t, err)
	for _, it := range page.Items {
		if v, ok := it[apply.OutboxAttrVersion]; ok {
			out[v.Str]++
		}
	}
	return out
}

// A backfill whose rebuild races the live feed (which applies v3 between
// the rebuild's read and its write) commits v3's effect once: the rebuild
// reads the row again and folds up to what the live feed wrote, and the
// catch-up after it starts from what is stored, so v3 is never applied a
// second time.
func TestM9_BackfillRacingTheLiveFeedCommitsEachEffectOnce(t *testing.T) {
	for _, withMap := range []bool{false, true} {
		t.Run(map[bool]string{false: "instance by instance", true: "row by row"}[withMap], func(t *testing.T) {
			backfillRacingTheLiveFeed(t, withMap)
		})
	}
}

func backfillRacingTheLiveFeed(t *testing.T, withMap bool) {
	ctx := context.Background()
	f := opstest.Start(t, "")
	h := outboxHost(t, f, withMap)
	recs := f.Append(t, "a", 0, opstest.Add(1), opstest.Add(2))
	res, err := h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	var once atomic.Bool
	f.Ledger.OnEvolve = func(req *abi.EvolveRequest) {
		if req.State != nil || !once.CompareAndSwap(false, true) {
			return // only the rebuild folds from the initial state
		}
		live := f.Append(t, "a", 2, opstest.Add(3))
		res, err := h.ProcessBatch(ctx, live)
		require.NoError(t, err)
		require.Empty(t, res.Failed())
	}

	rep, err := backfill.Run(ctx, h, backfill.Options{Projection: "ledger", Segments: 1, Workers: 1})

	require.NoError(t, err)
	require.True(t, once.Load(), "the live feed wrote during the rebuild")
	assert.Equal(t, 1, rep.Streams)
	row := f.Env.Get(t, f.Rows, testlogic.RowKey("a"))
	assert.Equal(t, "6", row["total"].Str)
	assert.Equal(t, "1,2,3", row["log"].Str)
	if withMap {
		assert.Equal(t, "3", row["checkpoints"].Map["Acct#a"].Str, "the checkpoint never stepped back")
	} else {
		assert.Equal(t, "3", row["version"].Str, "the checkpoint never stepped back")
	}
	assert.Equal(t, map[string]int{"1": 1, "2": 1, "3": 1}, effectsByVersion(t, f, "a"), "each event's effect is committed once")
}
