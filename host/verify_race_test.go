package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// The verification runs beside the live feed. Each row is changed by a
// live batch while the verification folds it (the ledger's evolve hook
// delivers a new event to the row then), other rows take live batches
// all along, and one row lacks an old event when it is read that the live
// feed delivers while the row is checked: read again, it is right, so
// nothing is reported but the one row edited behind the host's back.
func TestV1_VerifyBesideTheLiveFeedReportsNoFalseFinding(t *testing.T) {
	ctx := context.Background()
	f := opstest.Start(t, "")
	past := f.NewHost(t, host.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }))
	history := func(id string, after uint64, data ...abi.Item) []host.Record {
		var nes []host.NewEvent
		for _, d := range data {
			nes = append(nes, host.NewEvent{Type: d["_tag"].Str, Data: d})
		}
		evs, err := past.Append(ctx, testlogic.Stream, id, after, nes...)
		require.NoError(t, err)
		return f.Records(evs...)
	}
	process := func(recs []host.Record) {
		res, err := f.Host.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		require.Empty(t, res.Failed())
	}
	var recs []host.Record
	for i := range 12 {
		recs = append(recs, history(fmt.Sprint("a", i), 0, opstest.Add(1), opstest.Add(2))...)
	}
	held := history("lag", 0, opstest.Add(1), opstest.Add(2), opstest.Add(3))
	process(append(recs, held[:2]...))
	bad := f.Env.Get(t, f.Rows, testlogic.RowKey("a0"))
	bad["total"] = abi.N("99")
	f.Env.Put(t, f.Rows, bad)

	// every fold of a row by the verification (from the initial state)
	// first changes the row through the live feed
	var mu sync.Mutex
	next := map[string]uint64{}
	var live, lagDelivered atomic.Int64
	f.Ledger.OnEvolve = func(req *abi.EvolveRequest) {
		if req.State != nil {
			return // the live feed's own folds
		}
		id := req.Key["pk"].Str[len("Ledger#"):]
		if id == "lag" {
			if lagDelivered.CompareAndSwap(0, 1) {
				process(held[2:])
			}
			return
		}
		if !strings.HasPrefix(id, "a") {
			return
		}
		mu.Lock()
		after := next[id]
		if after == 0 {
			after = 2
		}
		next[id] = after + 1
		mu.Unlock()
		process(f.Append(t, id, after, opstest.Add(10)))
		live.Add(1)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var busyErr error
	wg.Go(func() { // live batches on another row all along
		for n := uint64(0); busyErr == nil; n++ {
			select {
			case <-stop:
				return
			default:
			}
			evs, err := f.Host.Append(ctx, testlogic.Stream, "busy", n, host.NewEvent{Type: "Add", Data: opstest.Add(1)})
			if err != nil {
				busyErr = err
				return
			}
			res, err := f.Host.ProcessBatch(ctx, f.Records(evs...))
			if err == nil && len(res.Failed()) > 0 {
				err = fmt.Errorf("busy v%d failed", n+1)
			}
			busyErr = err
			live.Add(1)
		}
	})

	rep, err := f.Host.Verify(ctx, host.VerifyOptions{Now: time.Now})
	close(stop)
	wg.Wait()

	require.NoError(t, err)
	require.NoError(t, busyErr)
	require.Empty(t, rep.Errors)
	assert.Equal(t, int64(1), lagDelivered.Load(), "the held event was delivered while its row was checked")
	assert.Greater(t, live.Load(), int64(12), "live batches ran during the verification")
	d := only(t, rep, host.FindingDiffers)
	assert.Equal(t, testlogic.RowKey("a0"), d.Key)
	assert.GreaterOrEqual(t, rep.Total().Rows, 13)
}
