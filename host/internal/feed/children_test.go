package feed_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/feed"
)

// A shard's children come from DescribeStream's child filter: the two of
// a split, the one of a rollover, none of an open shard, never the rest of
// the stream.
func TestC5_ChildrenListsTheShardsThatContinueAFinishedOne(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 3, ShardMaxRecords: 1000})
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	r := e.reader(100)
	shards, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 3)
	split := shards[1].ID
	kids, err := e.Server.SplitShard(ctx, e.arn, split)
	require.NoError(t, err)
	require.Len(t, kids, 2)

	got, err := r.Children(ctx, split)
	require.NoError(t, err)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
		assert.Equal(t, split, s.ParentID)
		assert.False(t, s.Closed())
	}
	assert.ElementsMatch(t, kids, ids, "both children of the split, nothing else")

	none, err := r.Children(ctx, shards[0].ID)
	require.NoError(t, err)
	assert.Empty(t, none, "an open shard has no children")

	// the parent reads to its end; the children are Ready only then
	all, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, all, 5)
	ready := feed.Ready(all, map[string]bool{})
	for _, s := range ready {
		assert.NotContains(t, kids, s.ID, "a child waits for its parent")
	}
	ready = feed.Ready(all, map[string]bool{split: true})
	var readyIDs []string
	for _, s := range ready {
		readyIDs = append(readyIDs, s.ID)
	}
	assert.Subset(t, readyIDs, kids)
}
