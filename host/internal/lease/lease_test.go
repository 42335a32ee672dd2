package lease_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
)

func table(t *testing.T) *lease.Table {
	e := testenv.Start(t)
	_, err := dynamo.New(e.Client).EnsureTable(context.Background(), dynamo.TableSpec{Name: "leases", KeyAttrs: []string{lease.AttrKey}})
	require.NoError(t, err)
	return lease.NewTable(e.Client, "leases")
}

func one(t *testing.T, tb *lease.Table) lease.Lease {
	t.Helper()
	ls, err := tb.List(context.Background())
	require.NoError(t, err)
	require.Len(t, ls, 1)
	return ls[0]
}

func TestC3_ConditionalWritesOnTheCounterLetOnlyOneWorkerHoldALease(t *testing.T) {
	ctx := context.Background()
	tb := table(t)
	made, err := tb.Create(ctx, "arn", "shard-1", []string{"shard-0"})
	require.NoError(t, err)
	assert.True(t, made)
	made, err = tb.Create(ctx, "arn", "shard-1", nil)
	require.NoError(t, err)
	assert.False(t, made, "an existing lease is never overwritten")
	fresh := one(t, tb)
	assert.Equal(t, lease.TrimHorizon, fresh.Checkpoint)
	assert.Equal(t, []string{"shard-0"}, fresh.Parents)
	assert.Empty(t, fresh.Owner)

	a, err := tb.Take(ctx, fresh, "A", "a-1")
	require.NoError(t, err)
	_, err = tb.Take(ctx, fresh, "B", "b-1") // read before A took it: loses
	require.ErrorIs(t, err, lease.ErrLost)
	a, err = tb.Renew(ctx, a)
	require.NoError(t, err)
	a, err = tb.Checkpoint(ctx, a, "42")
	require.NoError(t, err)
	stored := one(t, tb)
	assert.Equal(t, "A", stored.Owner)
	assert.Equal(t, "42", stored.Checkpoint)
	assert.Equal(t, a.Counter, stored.Counter)

	// B asks for it: A's next write fails, A reads the request, finishes,
	// checkpoints and releases; the lease is then B's to take
	_, err = tb.RequestSteal(ctx, stored, "B")
	require.NoError(t, err)
	_, err = tb.Renew(ctx, a)
	require.ErrorIs(t, err, lease.ErrLost)
	asked, ok, err := tb.Get(ctx, "shard-1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "A", asked.Owner, "still A's until it hands over")
	assert.Equal(t, "B", asked.StealBy)
	a, err = tb.Checkpoint(ctx, asked, "43")
	require.NoError(t, err)
	a, err = tb.Release(ctx, a)
	require.NoError(t, err)
	handed := one(t, tb)
	assert.Empty(t, handed.Owner)
	assert.Equal(t, "B", handed.StealBy, "kept, so the others leave it to B")
	assert.Equal(t, "43", handed.Checkpoint)
	a, err = tb.Take(ctx, handed, "A", "a-1") // a lease is taken conditionally on the counter only
	require.NoError(t, err)
	stored = one(t, tb)
	assert.Empty(t, stored.StealBy, "a take clears the request")

	// B takes it over from a live A (an expired lease); every write of A from
	// then on fails
	b, err := tb.Take(ctx, stored, "B", "b-1")
	require.NoError(t, err)
	_, err = tb.Renew(ctx, a)
	assert.ErrorIs(t, err, lease.ErrLost)
	_, err = tb.Checkpoint(ctx, a, "99")
	assert.ErrorIs(t, err, lease.ErrLost)
	_, err = tb.Release(ctx, a)
	assert.ErrorIs(t, err, lease.ErrLost)
	assert.Equal(t, "43", one(t, tb).Checkpoint, "the loser's checkpoint was not stored")

	// graceful handoff: checkpoint, then release
	b, err = tb.Checkpoint(ctx, b, "50")
	require.NoError(t, err)
	_, err = tb.Release(ctx, b)
	require.NoError(t, err)
	released := one(t, tb)
	assert.Empty(t, released.Owner)
	assert.Equal(t, "50", released.Checkpoint)

	// only a finished lease is deleted
	require.NoError(t, tb.Delete(ctx, released))
	released = one(t, tb)
	c, err := tb.Take(ctx, released, "C", "c-1")
	require.NoError(t, err)
	c, err = tb.Checkpoint(ctx, c, lease.ShardEnd)
	require.NoError(t, err)
	require.NoError(t, tb.Delete(ctx, c))
	ls, err := tb.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, ls)
}

// Two processes started with the same worker id draw different instance
// tokens: once the second takes the lease, every write of the first
// fails, even with the lease read afresh (same owner, new counter).
func TestC5_TwoInstancesOfOneWorkerIDNeverBothHoldALease(t *testing.T) {
	ctx := context.Background()
	tb := table(t)
	_, err := tb.Create(ctx, "arn", "shard-1", nil)
	require.NoError(t, err)
	first, err := tb.Take(ctx, one(t, tb), "w1", "instance-1")
	require.NoError(t, err)
	assert.Equal(t, "instance-1", one(t, tb).Instance)

	// the second process, once the lease expired, takes it under the same id
	second, err := tb.Take(ctx, one(t, tb), "w1", "instance-2")
	require.NoError(t, err)
	_, err = tb.Renew(ctx, first)
	require.ErrorIs(t, err, lease.ErrLost)
	// the first reads it again: same owner name, but not its instance
	fresh := one(t, tb)
	assert.Equal(t, "w1", fresh.Owner)
	assert.Equal(t, "instance-2", fresh.Instance)
	fresh.Instance = first.Instance // what the first process writes as
	_, err = tb.Renew(ctx, fresh)
	require.ErrorIs(t, err, lease.ErrLost)
	_, err = tb.Checkpoint(ctx, fresh, "7")
	require.ErrorIs(t, err, lease.ErrLost)
	_, err = tb.Release(ctx, fresh)
	require.ErrorIs(t, err, lease.ErrLost)
	// the second holds it as before
	second, err = tb.Checkpoint(ctx, second, "8")
	require.NoError(t, err)
	second, err = tb.Release(ctx, second)
	require.NoError(t, err)
	released := one(t, tb)
	assert.Empty(t, released.Owner)
	assert.Empty(t, released.Instance, "released: no instance either")
	assert.Equal(t, "8", released.Checkpoint)
	assert.Equal(t, second.Counter, released.Counter)
}
