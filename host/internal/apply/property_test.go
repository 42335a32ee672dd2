package apply_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testlogic"
)

func TestP10_RacingLanesEachApplyEveryVersionOnce(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	var evs []abi.Event
	for i := 0; i < 20; i++ {
		evs = append(evs, f.append(t, "hot", "Add:1")...)
	}
	var wg sync.WaitGroup
	results := make([]apply.Result, 8)
	for lane := range results {
		wg.Add(1)
		go func(lane int) {
			defer wg.Done()
			// Each lane brings a different slice of the stream.
			results[lane] = e.ApplyBatch(ctx, inputs(evs[lane:lane+10]...))
		}(lane)
	}
	wg.Wait()
	// Whether a lane loses a race depends on timing (the deterministic
	// race is TestP10_LostRaceRereadsAndRetries); whatever the interleaving,
	// every version is applied by exactly one lane.
	applied := map[uint64]int{}
	for _, r := range results {
		require.Len(t, r.Rows, 1)
		require.NoError(t, r.Rows[0].Err)
		for _, ev := range r.Rows[0].Applied() {
			applied[ev.Version]++
		}
	}
	for v := uint64(1); v <= 17; v++ {
		assert.Equal(t, 1, applied[v], "version %d must be in exactly one call's applied", v)
	}
	assert.Equal(t, "17", attr(f.row(t, "hot"), "total"))
}

// raceOn makes another writer win the row's conditional write on the first
// n evolve calls: between the engine's read and its write it bumps the
// row's revision, leaving the rest of the row as it was.
func raceOn(t *testing.T, f *fixture, row string, n int64) {
	racer := dynamo.New(f.env.Client) // its requests are not counted with the engine's
	f.logic.OnEvolve = func(req *abi.EvolveRequest) {
		if f.logic.EvolveCalls.Load() > n {
			return
		}
		it, err := racer.GetItem(ctx, f.table, testlogic.RowKey(row))
		require.NoError(t, err)
		if it == nil {
			it = testlogic.RowKey(row)
		}
		rev := int64(0)
		if v, ok := it["rev"]; ok {
			fmt.Sscan(v.Str, &rev)
		}
		it["rev"] = abi.N(fmt.Sprint(rev + 1))
		require.NoError(t, racer.PutItem(ctx, putOf(f.table, it)))
	}
}

func withRevision(p *apply.Projection) { p.Revision = &apply.Revision{Field: "rev"} }

func TestP10_LostRaceRereadsAndRetries(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRevision)
	evs := f.append(t, "a", "Add:1", "Add:2")
	raceOn(t, f, "a", 2)
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 3, o.Attempts, "two lost races, then a win")
	assert.Equal(t, int64(2), f.db.Counts()["GetItem"], "each lost race re-reads the row")
	assert.Equal(t, "1,2", versions(o.Applied()))
	row := f.row(t, "a")
	assert.Equal(t, "3", attr(row, "total"))
	assert.Equal(t, "3", attr(row, "rev"), "the racer wrote revisions 1 and 2; the engine's write is 3")
}

func TestP10_ExhaustedRetriesFailWithConcurrentModification(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { withRevision(p); p.Retry = apply.Retry{Attempts: 3} })
	evs := f.append(t, "a", "Add:1")
	raceOn(t, f, "a", 1000)

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.ErrorIs(t, o.Err, apply.ErrConcurrentModification)
	assert.Equal(t, 3, o.Attempts)
	assert.Contains(t, o.Err.Error(), "lost 3 races")
	assert.Equal(t, []int{0}, o.Positions, "the row's records go back to the source")
}

// TestP7_PropertyRandomBatchesLanesShufflesRedeliveries delivers random
// streams split into random batches, over concurrent lanes, shuffled and
// redelivered; every row ends equal to the sequential fold of its events and
// every applied event is in exactly one call's applied.
func TestP7_PropertyRandomBatchesLanesShufflesRedeliveries(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			f := newFixture(t)
			e := f.engine(t, nil)
			want := map[string]*fold{}
			var all []abi.Event
			for s := 0; s < 12; s++ {
				id := fmt.Sprintf("st%d", s)
				n := 1 + rng.IntN(12)
				var specs []string
				for i := 0; i < n; i++ {
					row := id
					if s%3 == 0 && rng.IntN(2) == 0 {
						row = id + "-b" // rows keyed by event fields
					}
					spec := []string{"Add:" + fmt.Sprint(1+rng.IntN(9)), "Same", "Skip", "Reject"}[weighted(rng)]
					if rng.IntN(10) == 0 {
						spec += "@" // addresses no row
					} else {
						spec += "@" + row
					}
					specs = append(specs, spec)
				}
				evs := f.append(t, id, specs...)
				all = append(all, evs...)
				for _, ev := range evs {
					want[rowOf(ev)] = want[rowOf(ev)].add(ev)
				}
			}
			// Deliveries: every event at least once, some twice, shuffled,
			// split into batches over 4 lanes.
			deliveries := append([]abi.Event(nil), all...)
			for _, ev := range all {
				if rng.IntN(4) == 0 {
					deliveries = append(deliveries, ev)
				}
			}
			rng.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
			var batches [][]abi.Event
			for len(deliveries) > 0 {
				k := min(len(deliveries), 1+rng.IntN(15))
				batches = append(batches, deliveries[:k])
				deliveries = deliveries[k:]
			}
			appliedCount := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			next := make(chan []abi.Event)
			for lane := 0; lane < 4; lane++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for b := range next {
						r := e.ApplyBatch(ctx, inputs(b...))
						mu.Lock()
						for _, o := range r.Rows {
							if !assert.NoError(t, o.Err) {
								continue
							}
							for _, ev := range o.Applied() {
								appliedCount[fmt.Sprintf("%s/%d", ev.StreamID, ev.Version)]++
							}
						}
						mu.Unlock()
					}
				}()
			}
			for _, b := range batches {
				next <- b
			}
			close(next)
			wg.Wait()

			for row, w := range want {
				if row == "" {
					continue
				}
				got := f.row(t, row)
				if w.log == "" && !w.created {
					assert.Nil(t, got, "row %s: rejected/skipped events alone create no row", row)
					continue
				}
				require.NotNil(t, got, "row %s", row)
				assert.Equal(t, w.log, attr(got, "log"), "row %s log", row)
				assert.Equal(t, fmt.Sprint(w.total), attr(got, "total"), "row %s total", row)
			}
			for _, ev := range all {
				k := fmt.Sprintf("%s/%d", ev.StreamID, ev.Version)
				if (ev.Type == "Add" || ev.Type == "Same") && rowOf(ev) != "" {
					assert.Equal(t, 1, appliedCount[k], "event %s (%s) must be applied exactly once", k, ev.Type)
				} else {
					assert.Zero(t, appliedCount[k], "event %s (%s) is never applied", k, ev.Type)
				}
			}
		})
	}
}

func weighted(rng *rand.Rand) int {
	switch n := rng.IntN(10); {
	case n < 6:
		return 0
	case n < 7:
		return 1
	case n < 9:
		return 2
	default:
		return 3
	}
}

func rowOf(ev abi.Event) string {
	if v, ok := ev.Data["none"]; ok && v.Bool {
		return ""
	}
	return ev.Data["row"].Str
}

// fold is the sequential fold of a row's events, as the Ledger computes it.
type fold struct {
	log     string
	total   int
	created bool
}

func (f *fold) add(ev abi.Event) *fold {
	if f == nil {
		f = &fold{}
	}
	switch ev.Type {
	case "Add", "Same":
		if ev.Type == "Add" {
			var n int
			fmt.Sscan(ev.Data["n"].Str, &n)
			f.total += n
		}
		f.log = strings.TrimPrefix(f.log+","+fmt.Sprint(ev.Version), ",")
		f.created = true
	}
	return f
}
