package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestP8_DomainErrorOfEvolveIsAnAbiErrorInOutcomeErr: a plugin's domain
// error (guest.Errorf("Boom", ...)) that terminal does not accept fails the
// row, and Outcome.Err matches errors.As with *abi.Error, its tag and
// message as the plugin gave them.
func TestP8_DomainErrorOfEvolveIsAnAbiErrorInOutcomeErr(t *testing.T) {
	ctx := context.Background()
	failing := visits
	failing.Evolve = func(s Counter, e guest.Event) (Counter, error) {
		return s, guest.Errorf("Boom", "page %s cannot be visited", s.Page)
	}
	cfg, stop := exampleConfig(ctx)
	t.Cleanup(stop)
	p, err := guest.New(failing)
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("visits", logic.Native(p, "visits")), host.WithLogger(quietLogger()))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	evs, err := h.Append(ctx, "Page", "home", 0, host.NewEvent{Type: "Visited", Data: abi.Item{}})
	require.NoError(t, err)
	res, err := h.ProcessBatch(ctx, insertRecords(h, evs))
	require.NoError(t, err)
	rows := res.Projections["counters"].Rows
	require.Len(t, rows, 1)
	var de *abi.Error
	require.True(t, errors.As(rows[0].Err, &de), "Outcome.Err %v holds an *abi.Error", rows[0].Err)
	assert.Equal(t, "Boom", de.Tag)
	assert.Equal(t, "page home cannot be visited", de.Message)
}
