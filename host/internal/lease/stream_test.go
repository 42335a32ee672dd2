package lease_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/lease"
)

// A lease belongs to the stream read when it names no stream (older
// leases), the same stream, or an earlier stream of the same table (the
// stream disabled and enabled again); another table's stream and another
// Kinesis stream are not.
func TestC3_ALeaseOfAnotherTablesStreamIsNotOurs(t *testing.T) {
	const ours = "arn:aws:dynamodb:us-east-1:1:table/events/stream/2026-12-05T01:00:00.000"
	for theirs, want := range map[string]bool{
		"":   true,
		ours: true,
		"arn:aws:dynamodb:us-east-1:1:table/events/stream/2026-11-01T01:00:00.000":          true,
		"arn:aws:dynamodb:us-east-1:1:table/inventory-event/stream/2026-12-05T01:00:00.000": false,
		"arn:aws:dynamodb:us-east-1:1:table/events2/stream/2026-12-05T01:00:00.000":         false,
		"arn:aws:kinesis:us-east-1:1:stream/events":                                         false,
	} {
		assert.Equal(t, want, lease.OfStream(ours, theirs), theirs)
	}
	const kin = "arn:aws:kinesis:us-east-1:1:stream/events"
	assert.True(t, lease.OfStream(kin, kin))
	assert.False(t, lease.OfStream(kin, "arn:aws:kinesis:us-east-1:1:stream/other"))
	own, other := lease.Split([]lease.Lease{{Key: "a"}, {Key: "b", Stream: ours}, {Key: "c", Stream: kin}, {Key: "d", Stream: kin}}, ours)
	assert.Equal(t, []string{"a", "b"}, []string{own[0].Key, own[1].Key})
	assert.Equal(t, map[string]int{kin: 2}, other)
}

// A lease written before leases recorded their stream gets the stream
// written by its next write.
func TestC3_ALeaseWithoutAStreamRecordsItAtItsNextWrite(t *testing.T) {
	tb := table(t)
	ctx := context.Background()
	_, err := tb.Create(ctx, "", "shard-1", nil)
	require.NoError(t, err)
	l, ok, err := tb.Get(ctx, "shard-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, l.Stream)
	l.Stream = "arn:aws:kinesis:us-east-1:1:stream/events"
	_, err = tb.Take(ctx, l, "w1", "i1")
	require.NoError(t, err)
	l, _, err = tb.Get(ctx, "shard-1")
	require.NoError(t, err)
	assert.Equal(t, "arn:aws:kinesis:us-east-1:1:stream/events", l.Stream)
	assert.Equal(t, "w1", l.Owner)
}
