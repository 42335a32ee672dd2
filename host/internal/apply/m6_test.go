package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/apply"
)

// One instance's failure is its own: an event that evolve fails (and
// terminal does not accept) takes its instance's events out of the write
// and leaves its checkpoint where it was; the row's other instance still
// applies in the same write, and only the failed instance's earliest record
// is reported failed. The row fails when every instance does.
func TestM6_OneInstancesFailureIsItsOwnTheRowFailsOnlyWhenEveryInstanceDoes(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	a := f.append(t, "s1", "Add:1@x", "Add:2@x")
	b := f.append(t, "s2", "Add:5@x", "Fail@x", "Add:7@x")

	o := e.ApplyBatch(ctx, inputs(a[0], b[0], b[1], a[1], b[2])).Rows[0]

	require.NoError(t, o.Err, "the row fails only when every instance does")
	assert.True(t, o.Written)
	assert.Equal(t, []int{1}, o.FailedPositions(), "the failed instance's earliest record")
	for _, in := range o.Instances {
		switch in.StreamID {
		case "s1":
			assert.NoError(t, in.Err)
			assert.Equal(t, "1,2", versions(in.Applied))
		case "s2":
			var ee *apply.EventError
			require.ErrorAs(t, in.Err, &ee)
			assert.Equal(t, uint64(2), ee.Event.Version, "the event that failed")
			assert.Empty(t, in.Applied, "its events leave the write, the one before the failure too")
		}
	}
	row := f.row(t, "x")
	assert.Equal(t, "3", attr(row, "total"), "only s1's events")
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "Acct#s1"))
	assert.Equal(t, "<absent>", mapEntry(row, "checkpoints", "Acct#s2"), "s2's checkpoint did not move")
	assert.Equal(t, "1", attr(row, "rev"))

	// Every instance with events fails: the row fails and nothing is written.
	c := f.append(t, "s3", "Fail@x")
	o = e.ApplyBatch(ctx, inputs(b[1], c[0])).Rows[0]
	require.Error(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1", attr(f.row(t, "x"), "rev"), "nothing written")
}
