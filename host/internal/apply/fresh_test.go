package apply_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// freshRows appends one "Add:1" stream per name and returns their events.
func (f *fixture) freshRows(t *testing.T, prefix string, n int) []abi.Event {
	t.Helper()
	var evs []abi.Event
	for i := range n {
		evs = append(evs, f.append(t, prefix+itoa(i), "Add:1")...)
	}
	return evs
}

func TestY7_FreshRowsAreWrittenWithoutARead(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3")
	evs = append(evs, f.freshRows(t, "r", 120)...)
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs...))

	require.Len(t, res.Rows, 121)
	for _, o := range res.Rows {
		require.NoError(t, o.Err)
		assert.True(t, o.Written)
		assert.Equal(t, 1, o.Attempts)
		assert.False(t, o.Existed)
	}
	counts := f.db.Counts()
	assert.Zero(t, counts["BatchGetItem"], "rows whose events begin their streams need no read")
	assert.Zero(t, counts["GetItem"])
	assert.Equal(t, int64(121), counts["PutItem"])
	row := f.row(t, "a")
	assert.Equal(t, "6", attr(row, "total"))
	assert.Equal(t, "3", attr(row, "version"))
	assert.NotEmpty(t, attr(row, "createdAt"))
	assert.Equal(t, "1", attr(f.row(t, "r119"), "total"))
}

// A redelivered first batch is fresh too, and its rows exist: the write
// from initial fails its condition, the row is read and its events are
// already applied, with nothing written and nothing lost.
func TestY7_AFreshRowThatExistsIsReadAndAppliedAsUsual(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	first := f.append(t, "a", "Add:1", "Add:2")
	require.NoError(t, e.ApplyBatch(ctx, inputs(first...)).Rows[0].Err)
	more := f.append(t, "a", "Add:3")
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(append(first, more...)...))

	require.Len(t, res.Rows, 1)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.Equal(t, "3", versions(o.Applied()))
	assert.Equal(t, "1,2", versions(o.Instances[0].AlreadyApplied))
	assert.Equal(t, 2, o.Attempts, "the write from initial whose condition failed, then the write")
	assert.True(t, o.Existed)
	counts := f.db.Counts()
	assert.Equal(t, int64(2), counts["PutItem"])
	assert.Equal(t, int64(1), counts["GetItem"], "the row is read once its condition failed")
	assert.Zero(t, counts["BatchGetItem"])
	row := f.row(t, "a")
	assert.Equal(t, "6", attr(row, "total"), "1+2+3, each once")
	assert.Equal(t, "3", attr(row, "version"))

	// The same batch again: every event is applied, nothing is written.
	f.db.ResetCounts()
	again := e.ApplyBatch(ctx, inputs(append(first, more...)...)).Rows[0]
	require.NoError(t, again.Err)
	assert.False(t, again.Written)
	assert.True(t, again.Existed)
	assert.Equal(t, "1,2,3", versions(again.Instances[0].AlreadyApplied))
	assert.Equal(t, "6", attr(again.State, "total"), "the outcome holds the row as read")
}

// A fold from initial that writes nothing (a rejected event alone never
// creates a row) does not decide the outcome: the row is read, as a row
// that exists might have the event applied already.
func TestY7_AFreshRowWhoseFoldWritesNothingIsRead(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Reject")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	require.Len(t, o.Instances[0].Rejected, 1)
	assert.Equal(t, uint64(1), o.Instances[0].Rejected[0].Event.Version)
	assert.Equal(t, 1, o.Attempts, "as for a row read first")
	counts := f.db.Counts()
	assert.Zero(t, counts["PutItem"])
	assert.Equal(t, int64(1), counts["GetItem"])
	assert.Nil(t, f.row(t, "a"), "a rejected event alone never creates a row")
}

// A new row whose event fails is read once to tell it from a row that
// has the event applied; absent, it fails as the fold decided, and the
// plugin is not called again.
func TestY7_ANewRowThatFailsCallsThePluginOnce(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int64
	f.logic.OnEvolve = func(*abi.EvolveRequest) { calls.Add(1) }
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Fail")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.Error(t, o.Err)
	assert.Equal(t, int64(1), calls.Load(), "one fold")
	counts := f.db.Counts()
	assert.Zero(t, counts["PutItem"])
	assert.Equal(t, int64(1), counts["GetItem"])
}

// Fresh rows that mostly exist cost a round trip each: after two such
// rows the projection reads fresh rows again, and once most fresh rows it
// reads are absent, it writes them without a read again.
func TestY7_FreshRowsAreReadAgainWhileTheyMostlyExist(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	old := f.freshRows(t, "old", 10)
	for _, o := range e.ApplyBatch(ctx, inputs(old...)).Rows {
		require.NoError(t, o.Err)
	}

	// A redelivery: 10 fresh rows, every one there already.
	f.db.ResetCounts()
	for _, o := range e.ApplyBatch(ctx, inputs(old...)).Rows {
		require.NoError(t, o.Err)
		assert.False(t, o.Written)
	}
	assert.Equal(t, int64(10), f.db.Counts()["GetItem"])

	// The next fresh rows are read first, in one BatchGetItem.
	f.db.ResetCounts()
	for _, o := range e.ApplyBatch(ctx, inputs(f.freshRows(t, "new", 20)...)).Rows {
		require.NoError(t, o.Err)
		assert.True(t, o.Written)
	}
	counts := f.db.Counts()
	assert.Equal(t, int64(1), counts["BatchGetItem"])
	assert.Zero(t, counts["GetItem"])

	// Twenty absent rows read: fresh rows are written without a read again.
	f.db.ResetCounts()
	for _, o := range e.ApplyBatch(ctx, inputs(f.freshRows(t, "newer", 5)...)).Rows {
		require.NoError(t, o.Err)
		assert.True(t, o.Written)
	}
	counts = f.db.Counts()
	assert.Zero(t, counts["BatchGetItem"])
	assert.Zero(t, counts["GetItem"])
	assert.Equal(t, int64(5), counts["PutItem"])
}

func TestY7_ReadNewRowsReadsEveryRowFirst(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.ReadNewRows = true })
	f.db.ResetCounts()

	for _, o := range e.ApplyBatch(ctx, inputs(f.freshRows(t, "r", 5)...)).Rows {
		require.NoError(t, o.Err)
		assert.True(t, o.Written)
	}
	counts := f.db.Counts()
	assert.Equal(t, int64(1), counts["BatchGetItem"])
	assert.Equal(t, int64(5), counts["PutItem"])
}

// Lanes racing on one new row, every one bringing its version 1 (and more
// or fewer of the next versions): each writes without a read (until two
// have found the row there); one creates the row, the others find it
// there, read it and apply what it lacks.
// Every version is applied by exactly one lane, and the row holds each once.
func TestY7_LanesRacingOnANewRowApplyEveryVersionOnce(t *testing.T) {
	for round := range 5 {
		f := newFixture(t)
		e := f.engine(t, nil)
		id := "new" + itoa(round)
		var evs []abi.Event
		for range 12 {
			evs = append(evs, f.append(t, id, "Add:1")...)
		}
		var wg sync.WaitGroup
		results := make([]apply.Result, 6)
		for lane := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[lane] = e.ApplyBatch(ctx, inputs(evs[:6+lane]...)) // versions 1 … 6+lane
			}()
		}
		wg.Wait()
		applied := map[uint64]int{}
		existed := 0
		for _, r := range results {
			require.Len(t, r.Rows, 1)
			require.NoError(t, r.Rows[0].Err)
			for _, ev := range r.Rows[0].Applied() {
				applied[ev.Version]++
			}
			if r.Rows[0].Existed {
				existed++
			}
		}
		for v := uint64(1); v <= 11; v++ {
			assert.Equal(t, 1, applied[v], "round %d: version %d in exactly one lane's applied", round, v)
		}
		// one lane created the row; the others found it, by a write that
		// failed its condition until two had (then the engine reads first)
		assert.GreaterOrEqual(t, existed, 2, "round %d", round)
		assert.LessOrEqual(t, existed, 5, "round %d", round)
		assert.Equal(t, "11", attr(f.row(t, id), "total"))
	}
}
