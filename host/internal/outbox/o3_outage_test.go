package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// A store that stops taking the deletes of delivered effects (an outage,
// a throttled table) stops the delivery of a write's effects after at
// most two whose deletes failed. The rest stay claimed; once the claim
// ends and the store answers again, the sweep delivers all of them in
// order: nothing is lost and at most two effects go out twice, where each
// of the write's effects went out twice before.
func TestO3_AStoreThatStopsTakingDeletesStopsTheDeliveries(t *testing.T) {
	const n = 10
	f := newFixture(t, n)
	claimFor := 10 * time.Second
	d := *f.drain
	d.ClaimFor = claimFor
	got := &recorder{}
	var outage sync.Once
	got.fail = func(deliver.Effect) error {
		// The store goes away while the first effect is delivered.
		outage.Do(func() {
			f.env.Server.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"DeleteItem": {"ValidationException": 1}}})
		})
		return nil
	}
	var deliverErr error
	e := f.deliveringEngine(t, claimFor, func(ctx context.Context, c apply.Committed) (int, int) {
		rep, err := d.Deliver(ctx, c, got)
		deliverErr = err
		return len(rep.Delivered), 0
	})

	f.commit(t, e, "a", 1)

	require.Error(t, deliverErr, "the failed delete is reported")
	assert.Contains(t, deliverErr.Error(), "deleting the delivered effect of row")
	first := got.delivered()
	assert.LessOrEqual(t, len(first), 2, "deliveries stop once a delete fails: %v", first)
	assert.NotEmpty(t, first)

	f.env.Server.SetFaults(ddblocal.FaultConfig{})
	assert.Equal(t, n, f.pending(t, "a"), "every effect not deleted stays in the outbox")
	f.advance(claimFor + time.Second)
	after := &recorder{}
	_, err := d.Sweep(ctx, after)
	require.NoError(t, err)
	want := make([]string, n)
	for i := range want {
		want[i] = "a/v1." + string(rune('0'+i))
	}
	assert.Equal(t, want, after.delivered(), "the sweep delivers them all, in order")
	assert.Zero(t, f.pending(t, "a"))
}
