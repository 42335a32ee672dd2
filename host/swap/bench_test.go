package swap_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// BenchmarkSwap measures hot swaps between order-summary 1.0.0 and 2.0.0
// (whose self_test runs at every swap to 2.0.0):
//
//   - Offer: the pipeline (load with a warm compilation cache, validation,
//     smoke test) plus the swap, per swap;
//   - AppearToFirstCall: from a module renamed into a watched directory to
//     the first call served by it (DirSource with a 5 ms settle delay);
//   - CallLatency: evolve calls from 4 goroutines, reporting the p50 and p99
//     latency with no swap and while swapping continuously.
func BenchmarkSwap(b *testing.B) {
	ctx := context.Background()
	cands := []swap.Candidate{candidate(b, v1), candidate(b, v2)}
	b.Run("Offer", func(b *testing.B) {
		s := newSwapper(b, v1, swap.Config{})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := s.Offer(ctx, cands[(i+1)%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppearToFirstCall", func(b *testing.B) {
		dir := b.TempDir()
		path := filepath.Join(dir, "p.wasm")
		if err := os.WriteFile(path, cands[0].Wasm, 0o644); err != nil {
			b.Fatal(err)
		}
		src, err := swap.NewDirSource(path, 5*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		defer src.Close()
		s := newSwapperFrom(b, src, swap.Config{})
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go swap.Watch(wctx, s, src)
		req := evolveReq("o-1", 2)
		var total time.Duration
		for i := 0; i < b.N; i++ {
			next := (i + 1) % 2
			want := map[int]string{0: "", 1: "2"}[next]
			tmp := filepath.Join(dir, ".next")
			if err := os.WriteFile(tmp, cands[next].Wasm, 0o644); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := os.Rename(tmp, path); err != nil {
				b.Fatal(err)
			}
			for {
				resp, err := s.Evolve(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if model(resp.Item) == want {
					break
				}
				time.Sleep(100 * time.Microsecond) // one caller polling, not spinning
			}
			total += time.Since(start)
		}
		b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/appear-to-call")
	})
	b.Run("CallLatency", func(b *testing.B) {
		s := newSwapper(b, v1, swap.Config{})
		measure := func(d time.Duration, during func(stop *atomic.Bool)) []time.Duration {
			var (
				stop atomic.Bool
				mu   sync.Mutex
				all  []time.Duration
				wg   sync.WaitGroup
			)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := evolveReq("o-1", 3)
					var mine []time.Duration
					for !stop.Load() {
						t0 := time.Now()
						if _, err := s.Evolve(ctx, req); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
				}()
			}
			if during != nil {
				during(&stop)
			} else {
				time.Sleep(d)
				stop.Store(true)
			}
			wg.Wait()
			slices.Sort(all)
			return all
		}
		pct := func(ds []time.Duration, p float64) float64 {
			if len(ds) == 0 {
				return 0
			}
			return float64(ds[int(float64(len(ds)-1)*p)].Microseconds())
		}
		idle := measure(300*time.Millisecond, nil)
		b.ResetTimer()
		busy := measure(0, func(stop *atomic.Bool) {
			for i := 0; i < b.N; i++ {
				if _, _, err := s.Offer(ctx, cands[(i+1)%2]); err != nil {
					b.Error(err)
				}
			}
			stop.Store(true)
		})
		b.ReportMetric(pct(idle, 0.5), "µs-p50-idle")
		b.ReportMetric(pct(idle, 0.99), "µs-p99-idle")
		b.ReportMetric(pct(busy, 0.5), "µs-p50-swapping")
		b.ReportMetric(pct(busy, 0.99), "µs-p99-swapping")
	})
}
