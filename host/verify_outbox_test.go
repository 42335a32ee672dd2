package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// With an outbox in the rows' partitions, the outbox items are no rows
// (never orphans), and a repair commits the effect of an event the row
// lacked once, and none of the events it had: no effect is committed
// twice.
func TestV1_VerifyRepairCommitsNoEffectTwice(t *testing.T) {
	ctx := context.Background()
	f := opstest.Start(t, "")
	cfg := *f.Cfg
	cfg.Projections = append([]host.ProjectionConfig(nil), f.Cfg.Projections...)
	p := &cfg.Projections[0]
	p.Plugin = "native:ledgerfx"
	p.ReadModel.EntityType = "LedgerRow"
	p.Outbox = &host.OutboxConfig{}
	h := f.NewHostFor(t, &cfg, host.WithNative("ledgerfx", testlogic.WithEffects(f.Ledger, 1)))
	recs := f.Append(t, "a", 0, opstest.Add(1), opstest.Add(2), opstest.Add(3))
	res, err := h.ProcessBatch(ctx, recs[:2]) // v3 is never delivered
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	require.Equal(t, map[string]int{"1": 1, "2": 1}, effectsOf(t, f, "a"))

	rep := verifyAll(t, h, host.VerifyOptions{Repair: true})

	d := only(t, rep, host.FindingDiffers)
	assert.True(t, d.Repaired, "%v", d.RepairErr)
	assert.Equal(t, []host.EventRef{{Instance: host.InstanceRef{Source: "Acct", StreamID: "a"}, Version: 3}}, d.Unapplied)
	assert.Equal(t, 1, rep.Total().Rows, "the outbox items are no rows")
	assert.Equal(t, "6", f.Env.Get(t, f.Rows, testlogic.RowKey("a"))["total"].Str)
	assert.Equal(t, map[string]int{"1": 1, "2": 1, "3": 1}, effectsOf(t, f, "a"), "v3's effect once, v1's and v2's not again")
	assert.Empty(t, verifyAll(t, h, host.VerifyOptions{}).Findings)
}

// effectsOf counts the outbox items committed for each version of a row.
func effectsOf(t *testing.T, f *opstest.Fixture, row string) map[string]int {
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
