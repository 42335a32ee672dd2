package lease

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fleet simulates lease rounds of several workers over one lease table:
// each round every worker in turn first hands over the leases it was
// asked for (release, the request kept), then runs Balance on what it
// reads and applies the plan as the conditional writes would.
type fleet struct {
	leases  map[string]*Lease
	workers []string
}

func newFleet(shards int) *fleet {
	f := &fleet{leases: map[string]*Lease{}}
	for i := 0; i < shards; i++ {
		k := fmt.Sprintf("s%02d", i)
		f.leases[k] = &Lease{Key: k, Checkpoint: TrimHorizon}
	}
	return f
}

func (f *fleet) list() []Lease {
	out := make([]Lease, 0, len(f.leases))
	for _, l := range f.leases {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// round runs one lease round of worker w.
func (f *fleet) round(w string) {
	for _, l := range f.leases {
		if l.Owner == w && l.StealBy != "" {
			l.Owner = "" // handed over after the batch in flight
		}
	}
	p := Balance(Available(f.list(), nil), w, func(Lease) bool { return false })
	for _, t := range p.Take {
		l := f.leases[t.Key]
		if l.Owner == "" && (l.StealBy == "" || l.StealBy == w) { // the conditional take
			l.Owner, l.StealBy = w, ""
		}
	}
	for _, s := range p.Steal {
		if l := f.leases[s.Key]; l.Owner == s.Owner && l.StealBy == "" {
			l.StealBy = w
		}
	}
}

// rounds runs n rounds of every worker, in turn.
func (f *fleet) rounds(n int) {
	for i := 0; i < n; i++ {
		for _, w := range f.workers {
			f.round(w)
		}
	}
}

func (f *fleet) held() map[string]int {
	out := map[string]int{}
	for _, w := range f.workers {
		out[w] = 0
	}
	for _, l := range f.leases {
		if l.Owner != "" {
			out[l.Owner]++
		}
	}
	return out
}

// requireFair checks every lease is held and each worker holds its fair
// share: floor or ceil of shards per worker.
func (f *fleet) requireFair(t *testing.T, when string) {
	t.Helper()
	n, w := len(f.leases), len(f.workers)
	h := f.held()
	total := 0
	for worker, c := range h {
		total += c
		assert.GreaterOrEqual(t, c, n/w, "%s: %s holds %d of %d shards (%v)", when, worker, c, n, h)
		assert.LessOrEqual(t, c, (n+w-1)/w, "%s: %s holds %d of %d shards (%v)", when, worker, c, n, h)
	}
	assert.Equal(t, n, total, "%s: every shard held (%v)", when, h)
}

func TestC5_WorkersThatJoinReachTheirFairShareOfEightShardsWithinAFewRounds(t *testing.T) {
	for _, workers := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("%d workers joining one by one", workers), func(t *testing.T) {
			f := newFleet(8)
			for i := 0; i < workers; i++ {
				f.workers = append(f.workers, fmt.Sprintf("w%d", i+1))
				f.rounds(4) // each newcomer settles within four rounds
				f.requireFair(t, fmt.Sprintf("after w%d joined", i+1))
			}
		})
		t.Run(fmt.Sprintf("%d workers starting together", workers), func(t *testing.T) {
			f := newFleet(8)
			for i := 0; i < workers; i++ {
				f.workers = append(f.workers, fmt.Sprintf("w%d", i+1))
			}
			f.rounds(5)
			f.requireFair(t, "started together")
		})
	}
}

// Nine shards held three by each of three workers: a fourth that joins is
// below the fair share (ceil 9/4 = 3) while nobody holds more than it, and
// still takes two.
func TestC5_AWorkerBelowItsShareStealsWhileAnotherHoldsTwoMore(t *testing.T) {
	for _, shards := range []int{9, 10, 11} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			f := newFleet(shards)
			f.workers = []string{"w1", "w2", "w3"}
			f.rounds(5)
			f.requireFair(t, "three workers")
			f.workers = append(f.workers, "w4")
			f.rounds(5)
			f.requireFair(t, "after w4 joined")
		})
	}
}

func TestC5_TheLeasesOfAWorkerThatLeavesAreSharedByTheRest(t *testing.T) {
	f := newFleet(8)
	f.workers = []string{"w1", "w2", "w3", "w4"}
	f.rounds(5)
	f.requireFair(t, "four workers")
	// w2 stops gracefully: its leases are released
	for _, l := range f.leases {
		if l.Owner == "w2" {
			l.Owner = ""
		}
	}
	f.workers = slices.DeleteFunc(f.workers, func(w string) bool { return w == "w2" })
	f.rounds(2)
	f.requireFair(t, "after w2 left")
}

// Stealing only when the busiest holds at least two more than this worker
// never moves a lease back and forth: once fair, rounds change nothing.
func TestC5_OnceFairNoLeaseMoves(t *testing.T) {
	f := newFleet(8)
	f.workers = []string{"w1", "w2", "w3"}
	f.rounds(6)
	f.requireFair(t, "three workers")
	before := f.list()
	f.rounds(6)
	require.Equal(t, before, f.list())
}
