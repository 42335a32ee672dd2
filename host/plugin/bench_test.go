package plugin_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

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
	wasm := orderSummaryWasm(b)
	p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	// The same module without the loop instrumentation: wazero's
	// close-on-context-done enforces the timeout (the fallback path).
	plugin.SetInstrumentForTest(false)
	slow, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: cacheDir})
	plugin.SetInstrumentForTest(true)
	if err != nil {
		b.Fatal(err)
	}
	defer slow.Close(ctx)
	// The same module with a loop budget (Config.MaxLoopIterations) set
	// before every call, too large to be reached.
	budget, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: cacheDir, MaxLoopIterations: plugin.MaxLoopIterationsLimit})
	if err != nil {
		b.Fatal(err)
	}
	defer budget.Close(ctx)
	impls := []struct {
		name string
		l    logic.Logic
	}{{"native", nativeOrderSummary()}, {"wasm", p}, {"wasm-loopbudget", budget}, {"wasm-closeondone", slow}}
	for _, impl := range impls {
		for _, k := range []int{1, 10, 100} {
			req := orderRun(k)
			req.OmitState = true // as the engine calls it
			b.Run(fmt.Sprintf("%s/k=%d", impl.name, k), func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					if _, err := impl.l.Evolve(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				reportPerEvent(b, k, cpuTime()-cpu)
			})
		}
		if impl.name != "wasm-closeondone" {
			b.Run(impl.name+"/fixed", func(b *testing.B) { benchFixed(b, impl.l) })
		}
	}
	// The host's share of a Wasm call: encoding the request and decoding
	// the response, without the guest.
	for _, k := range []int{1, 10, 100} {
		req := orderRun(k)
		req.OmitState = true
		out, err := p.Call(ctx, abi.CapEvolve, abi.AppendEvolveRequest(nil, req))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hostcodec/k=%d", k), func(b *testing.B) {
			cpu := cpuTime()
			var buf []byte
			for b.Loop() {
				buf = abi.AppendEvolveRequest(buf[:0], req)
				if _, err := abi.DecodeEvolveResponse(out); err != nil {
					b.Fatal(err)
				}
			}
			reportPerEvent(b, k, cpuTime()-cpu)
		})
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
	cpu := cpuTime()
	for b.Loop() {
		if _, err := p.Call(ctx, abi.CapDescribe, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
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

// benchFixed reports the fixed cost of an evolve call, fixed-ns/call: the
// time of a k=1 call minus the per-event time of a k=100 call, both timed
// in every iteration, side by side (the target is <= 5 µs for Wasm).
func benchFixed(b *testing.B, l logic.Logic) {
	ctx := context.Background()
	one, hundred := orderRun(1), orderRun(100)
	one.OmitState, hundred.OmitState = true, true
	var t1, t100 time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := l.Evolve(ctx, one); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := l.Evolve(ctx, hundred); err != nil {
			b.Fatal(err)
		}
		t1, t100 = t1+mid.Sub(start), t100+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(t1.Nanoseconds())/n, "k1-ns/call")
	b.ReportMetric(float64(t100.Nanoseconds())/n/100, "k100-ns/event")
	b.ReportMetric((float64(t1.Nanoseconds())-float64(t100.Nanoseconds())/100)/n, "fixed-ns/call")
}

// reportPerEvent reports wall time per event, events per second and, as the
// machine is shared, the process's CPU time per event.
func reportPerEvent(b *testing.B, k int, cpu time.Duration) {
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(k), "cpu-ns/event")
}
