package backfill_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// seeded appends 1..n Add events to each of streams instances, without
// processing them: the history a new projection backfills.
func seeded(t *testing.T, f *opstest.Fixture, streams, n int) map[string]uint64 {
	heads := map[string]uint64{}
	for s := range streams {
		id := fmt.Sprint("acct-", s)
		for v := 1; v <= n; v++ {
			f.Append(t, id, uint64(v-1), opstest.Add(v))
		}
		heads[id] = uint64(n)
	}
	return heads
}

// checkFold asserts every stream's row in table equals the sequential fold
// of its events: Add v at version v, so total is the sum of 1..head.
func checkFold(t *testing.T, f *opstest.Fixture, table string, heads map[string]uint64) {
	t.Helper()
	for id, head := range heads {
		row := f.Env.Get(t, table, testlogic.RowKey(id))
		require.NotNil(t, row, id)
		var log []string
		sum := uint64(0)
		for v := uint64(1); v <= head; v++ {
			log = append(log, strconv.FormatUint(v, 10))
			sum += v
		}
		assert.Equal(t, strconv.FormatUint(sum, 10), row["total"].Str, id)
		assert.Equal(t, strings.Join(log, ","), row["log"].Str, "%s folds each event once, in order", id)
		assert.Equal(t, strconv.FormatUint(head, 10), row["version"].Str, id)
	}
}

// The backfill runs while events keep arriving and the live feed folds
// them through ProcessBatch into the same table: every row ends equal to
// the sequential fold of its stream, and the progress is reported.
func TestX3_BackfillWhileTheLiveFeedWritesEqualsTheSequentialFold(t *testing.T) {
	ctx := context.Background()
	f := opstest.Start(t, "")
	heads := seeded(t, f, 24, 4)
	// Slow folds widen the window in which the live feed and the backfill
	// write the same rows.
	f.Ledger.OnEvolve = func(*abi.EvolveRequest) { time.Sleep(time.Millisecond) }
	var during atomic.Int64 // live events processed while the backfill ran
	running := atomic.Bool{}
	running.Store(true)
	ids := make([]string, 0, len(heads))
	for id := range heads {
		ids = append(ids, id)
	}
	var mu sync.Mutex
	stop := make(chan struct{})
	live := make(chan error, 1)
	go func() { // the live feed: append, then process the record until it succeeds
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop: // nothing after the backfill repairs what it left
				live <- nil
				return
			default:
			}
			id := ids[rng.IntN(len(ids))]
			mu.Lock()
			v := heads[id] + 1
			heads[id] = v
			mu.Unlock()
			recs := f.Append(t, id, v-1, opstest.Add(int(v)))
			for try := 0; ; try++ {
				res, err := f.Host.ProcessBatch(ctx, recs)
				if err == nil && len(res.Failed()) == 0 {
					if running.Load() {
						during.Add(1)
					}
					break
				}
				if try == 20 {
					live <- fmt.Errorf("live feed: %s v%d never succeeded: %v", id, v, err)
					return
				}
			}
		}
	}()
	var out bytes.Buffer
	rep, err := backfill.Run(ctx, f.Host, backfill.Options{Projection: "ledger", Segments: 3, Workers: 3,
		Progress: backfill.NewLines(&out, time.Nanosecond)})
	running.Store(false)
	close(stop)
	require.NoError(t, <-live)
	require.NoError(t, err)
	assert.Equal(t, 24, rep.Streams)
	assert.Equal(t, testlogic.Stream, rep.Stream)
	assert.Empty(t, rep.Failed)
	assert.NotZero(t, during.Load(), "the live feed wrote while the backfill ran")
	t.Logf("live events during the backfill: %d; instances caught up past their watermark: %d", during.Load(), rep.CaughtUp)
	assert.Contains(t, out.String(), "backfill: 24 stream instances to rebuild")
	assert.Contains(t, out.String(), "backfill: 24/24 (100%)")
	checkFold(t, f, f.Rows, heads)
}

// Versioned cutover: a host whose configuration names a new table
// backfills it while the old table keeps serving; after the switch, a
// backfill with Since set to the first one's start brings in only the
// streams that moved meanwhile, and the new table equals the fold.
func TestX3_CutoverToANewTableThenCatchUpSinceTheWatermark(t *testing.T) {
	ctx := context.Background()
	f := opstest.Start(t, "")
	heads := seeded(t, f, 6, 3)
	time.Sleep(5 * time.Millisecond) // the timestamps have millisecond resolution
	newTable := f.Env.Table(t, "ledger-v2", false)
	cfg := *f.Cfg
	cfg.Projections = append([]host.ProjectionConfig(nil), f.Cfg.Projections...)
	cfg.Projections[0].Table = newTable
	h2 := f.NewHostFor(t, &cfg)

	rep, err := backfill.Run(ctx, h2, backfill.Options{Projection: "ledger", Segments: 2})
	require.NoError(t, err)
	assert.Equal(t, 6, rep.Streams)
	assert.Equal(t, 6, rep.Rows)
	checkFold(t, f, newTable, heads)
	assert.Nil(t, f.Env.Get(t, f.Rows, testlogic.RowKey("acct-0")), "the old table is untouched")

	// Events arrive after the backfill; the old table's live feed folds them.
	time.Sleep(5 * time.Millisecond) // the timestamps have millisecond resolution
	for _, id := range []string{"acct-1", "acct-4"} {
		recs := f.Append(t, id, heads[id], opstest.Add(int(heads[id]+1)))
		heads[id]++
		res, err := f.Host.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		require.Empty(t, res.Failed())
	}
	rep2, err := backfill.Run(ctx, h2, backfill.Options{Projection: "ledger", Since: rep.Started})
	require.NoError(t, err)
	assert.Equal(t, 2, rep2.Streams, "only the streams with events since the watermark")
	checkFold(t, f, newTable, heads)
}

// A projection the configuration does not define is an error naming it.
func TestX3_UnknownProjection(t *testing.T) {
	f := opstest.Start(t, "")
	_, err := backfill.Run(context.Background(), f.Host, backfill.Options{Projection: "nope"})
	assert.ErrorIs(t, err, host.ErrUnknownProjection)
}
