package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/lease"
)

// One worker of the fleet claims each interval's verification pass of a
// projection; its result is kept in the lease table beside the leases,
// which List leaves out.
func TestV1_OneWorkerClaimsEachVerificationPass(t *testing.T) {
	ctx := context.Background()
	tb := table(t)
	_, err := tb.Create(ctx, "arn", "shard-1", nil)
	require.NoError(t, err)
	t0 := time.UnixMilli(1_800_000_000_000)
	every := time.Minute

	mine, err := tb.ClaimVerify(ctx, "summaries", "A", t0, every)
	require.NoError(t, err)
	assert.True(t, mine, "the first claim")
	mine, err = tb.ClaimVerify(ctx, "summaries", "B", t0.Add(every/2), every)
	require.NoError(t, err)
	assert.False(t, mine, "A runs this interval's pass")
	mine, err = tb.ClaimVerify(ctx, "other", "B", t0, every)
	require.NoError(t, err)
	assert.True(t, mine, "each projection is claimed on its own")
	mine, err = tb.ClaimVerify(ctx, "summaries", "B", t0.Add(every), every)
	require.NoError(t, err)
	assert.True(t, mine, "the next interval's pass")

	require.NoError(t, tb.PutVerifyResult(ctx, lease.VerifyResult{Projection: "summaries", Worker: "B", At: t0.Add(every + time.Second),
		Took: 1500 * time.Millisecond, Sample: 0.01, Counts: map[string]int64{"rows": 40, "differs": 2, "pending": 3}}))
	rs, err := tb.VerifyResults(ctx)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	var got lease.VerifyResult
	for _, r := range rs {
		if r.Projection == "summaries" {
			got = r
		}
	}
	assert.Equal(t, "B", got.Worker)
	assert.Equal(t, t0.Add(every+time.Second), got.At)
	assert.Equal(t, t0.Add(2*every), got.Next)
	assert.Equal(t, 1500*time.Millisecond, got.Took)
	assert.Equal(t, 0.01, got.Sample)
	assert.Equal(t, int64(40), got.Counts["rows"])
	assert.Equal(t, int64(2), got.Counts["differs"])
	assert.Equal(t, int64(0), got.Counts["orphan"])
	assert.Equal(t, "shard-1", one(t, tb).Key, "the leases alone are listed")
}
