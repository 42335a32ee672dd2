package plugin_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
)

// BenchmarkFold folds k order-summary events (OrderPlaced then ItemAdded...)
// from an absent row in one evolve call, through the Wasm plugin and through
// logic.Native on the same Go projection. Both go through logic.Logic, so the
// Wasm numbers include the host's encoding of the request, the copy into the
// guest, the guest's decode, fold and encode, and the host's decode.
//
//	go test ./host/plugin -run '^$' -bench 'Fold|CallOverhead' -benchtime 2s
func BenchmarkFold(b *testing.B) {
	ctx := context.Background()
	p, err := plugin.Load(ctx, orderSummaryWasm(b), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	impls := []struct {
		name string
		l    logic.Logic
	}{{"native", nativeOrderSummary()}, {"wasm", p}}
	for _, impl := range impls {
		for _, k := range []int{1, 10, 100} {
			req := orderRun(k)
			b.Run(fmt.Sprintf("%s/k=%d", impl.name, k), func(b *testing.B) {
				for b.Loop() {
					if _, err := impl.l.Evolve(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				reportPerEvent(b, k)
			})
		}
	}
}

// BenchmarkCallOverhead measures the fixed cost of one call: describe,
// whose input is empty and whose output is a few dozen bytes.
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	p, err := plugin.Load(ctx, orderSummaryWasm(b), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	for b.Loop() {
		if _, err := p.Call(ctx, abi.CapDescribe, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdStart measures, from nothing (no runtime alive), the time to
// the first evolve result: runtime, compilation (or the cache), instantiation,
// _initialize, describe and one evolve call. "cache" starts from a warm
// compilation cache directory (a precompiled plugin, SPEC Y6).
//
//	go test ./host/plugin -run '^$' -bench ColdStart -benchtime 10x
func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	wasm := orderSummaryWasm(b)
	req := orderRun(1)
	warm, err := os.MkdirTemp("", "dynafold-coldstart-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(warm)
	if err := plugin.Precompile(ctx, wasm, plugin.Config{CacheDir: warm}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, dir string }{{"nocache", ""}, {"cache", warm}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: tc.dir})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Evolve(ctx, req); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := p.Close(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/start")
		})
	}
}

func reportPerEvent(b *testing.B, k int) {
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
}
