package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
)

// A worker whose lease rounds stopped succeeding (DynamoDB down, or
// throttling the lease table) is not ready: an operator's trial saw
// /readyz answer 200 through a two-minute outage. Ready again after the
// next round; never ready before the first.
func TestX1_ReadyzFailsWhileNoLeaseRoundSucceeds(t *testing.T) {
	ctx := context.Background()
	m := telemetry.New(telemetry.Options{})
	ready := admin.ReadyWhileLeasing(m, func() bool { return true }, 50*time.Millisecond)

	err := ready(ctx)
	require.ErrorIs(t, err, admin.ErrNotReady)
	assert.Contains(t, err.Error(), "no lease round done yet")

	m.LeasesHeld("w1", "arn:s", []string{"s-1"}, 1)
	require.NoError(t, ready(ctx))

	time.Sleep(120 * time.Millisecond) // no round for longer than 50 ms
	err = ready(ctx)
	require.True(t, errors.Is(err, admin.ErrNotReady), "%v", err)
	assert.Contains(t, err.Error(), "no lease round has succeeded for")
	assert.Contains(t, err.Error(), "is DynamoDB reachable")

	m.LeasesHeld("w1", "arn:s", []string{"s-1"}, 1)
	assert.NoError(t, ready(ctx), "ready again after the next round")
}
