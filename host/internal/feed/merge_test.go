package feed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynafold/dynafold/host/internal/feed"
)

// A shard two shards were merged into is ready only once both parents are
// finished (or no longer listed), as Kinesis data streams merge shards.
func TestK2_ReadyWaitsForBothParentsOfAMerge(t *testing.T) {
	shards := []feed.Shard{{ID: "a", EndingSequenceNumber: "9"}, {ID: "b", EndingSequenceNumber: "9"}, {ID: "m", ParentID: "a", AdjacentParentID: "b"}}
	ids := func(ss []feed.Shard) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	assert.Equal(t, []string{"a", "b"}, ids(feed.Ready(shards, nil)))
	assert.Equal(t, []string{"b"}, ids(feed.Ready(shards, map[string]bool{"a": true})), "one parent finished is not enough")
	assert.Equal(t, []string{"a"}, ids(feed.Ready(shards, map[string]bool{"b": true})))
	assert.Equal(t, []string{"m"}, ids(feed.Ready(shards, map[string]bool{"a": true, "b": true})))
	assert.Equal(t, []string{"m"}, ids(feed.Ready(shards[1:], map[string]bool{"b": true})), "a parent trimmed away does not hold the child back")
	assert.Equal(t, []string{"a", "b"}, shards[2].Parents())
	assert.Empty(t, shards[0].Parents())
}
