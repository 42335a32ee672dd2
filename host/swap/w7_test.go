package swap_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// langCandidate is the order-summary example in Rust or C, as a candidate.
func langCandidate(t *testing.T, lang string) swap.Candidate {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	examples := filepath.Join(filepath.Dir(file), "..", "..", "plugins", "examples")
	modsMu.Lock()
	defer modsMu.Unlock()
	b, ok := mods[lang]
	if !ok {
		if lang == "rust" {
			b = wasmbuild.BuildRust(t, filepath.Join(examples, "order-summary-rs"))
		} else {
			b = wasmbuild.BuildC(t, []string{filepath.Join(examples, "order-summary-c", "order_summary.c")})
		}
		mods[lang] = b
	}
	return swap.Candidate{Wasm: b, Origin: "test:" + lang}
}

// TestW7_SwapFromGoToRustUnderLoad: lanes keep applying batches while the
// serving order-summary is swapped from the Go module to the Rust one, to
// the C one, back to Go and to Rust again. Every swap goes through the
// pipeline and takes, no call fails, every lane applies batches on each
// module, and every row counts its items and sums its total exactly, as
// the Go plugin alone would.
func TestW7_SwapFromGoToRustUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ctx := context.Background()
	rust, c := langCandidate(t, "rust"), langCandidate(t, "c")
	s := newSwapper(t, v1, swap.Config{WrittenBy: writtenBy, Plugin: pluginConfig()})
	o := newOrders(t, s)
	const lanes, perLane = 6, 2
	var (
		stop    atomic.Bool
		batches [lanes]atomic.Int64
		wg      sync.WaitGroup
		errMu   sync.Mutex
		errs    []error
		heads   [lanes][perLane]uint64
	)
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
		stop.Store(true)
	}
	for l := 0; l < lanes; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				k := n % perLane
				id := fmt.Sprintf("o-%d-%d", l, k)
				ev, err := o.next(ctx, id, heads[l][k])
				if err != nil {
					fail(err)
					return
				}
				heads[l][k] = ev.Version
				res := o.engine.ApplyBatch(ctx, []apply.Input{{Source: "Order", Event: ev, Pos: 0}})
				if len(res.Rows) != 1 || res.Rows[0].Failed() || !res.Rows[0].Written {
					fail(fmt.Errorf("lane %d %s v%d: %+v", l, id, ev.Version, res.Rows))
					return
				}
				batches[l].Add(1)
			}
		}()
	}
	progress := func() {
		var base [lanes]int64
		for l := range base {
			base[l] = batches[l].Load()
		}
		waitFor(t, "every lane to apply a batch", func() bool {
			for l := range base {
				if batches[l].Load() < base[l]+2 && !stop.Load() {
					return false
				}
			}
			return true
		})
	}
	progress()
	for i, cand := range []swap.Candidate{rust, c, candidate(t, v1), rust} {
		info, changed, err := s.Offer(ctx, cand)
		if err != nil || !changed {
			t.Fatalf("swap %d to %s: changed %v, %v", i+1, cand.Origin, changed, err)
		}
		if info.SHA256 != cand.SHA256() || info.Plugin != "order-summary@1.0.0" {
			t.Fatalf("swap %d: serving %+v, want %s", i+1, info, cand.Origin)
		}
		progress()
	}
	stop.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d failures under load, first: %v", len(errs), errs[0])
	}
	if st := s.Stats(); st.Swaps != 4 || st.Failed != 0 || s.Current().Origin != "test:rust" {
		t.Fatalf("after 4 swaps: %+v, serving %+v", st, s.Current())
	}
	waitFor(t, "every old version retired", func() bool { return s.Stats().Retired == 4 })
	for l := 0; l < lanes; l++ {
		for k := 0; k < perLane; k++ {
			id := fmt.Sprintf("o-%d-%d", l, k)
			it, err := dynamo.New(o.env.Client).GetItem(ctx, o.table, ordersummary.RowKey(id))
			if err != nil || it == nil {
				t.Fatalf("row %s: %v", id, err)
			}
			items := max(heads[l][k], 1) - 1
			want := abi.Item{"items": abi.N(fmt.Sprint(items)), "version": abi.N(fmt.Sprint(heads[l][k])),
				"total": abi.N(fmt.Sprintf("%d.%d", items*25/10, items*25%10)), "status": abi.S("placed")}
			if items*25%10 == 0 {
				want["total"] = abi.N(fmt.Sprint(items * 25 / 10))
			}
			for name, v := range want {
				if !it[name].Equal(v) {
					t.Errorf("row %s: %s = %v, want %v", id, name, it[name], v)
				}
			}
		}
	}
}
