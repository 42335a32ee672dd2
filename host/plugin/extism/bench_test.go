package extism_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
)

// BenchmarkFold folds k order-summary events (OrderPlaced then ItemAdded...)
// from an absent row in one evolve call: natively, through the Go plugin on
// the raw ABI ("wasm") and through the AssemblyScript plugin on Extism
// ("extism"), all through logic.Logic, as host/plugin's BenchmarkFold.
//
//	go test ./host/plugin/extism -run '^$' -bench 'Fold|CallOverhead' -benchtime 2s
func BenchmarkFold(b *testing.B) {
	ctx := context.Background()
	raw, err := plugin.Load(ctx, orderSummaryRaw(b), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close(ctx)
	ext := load(b, orderSummaryAS(b), extism.Config{})
	// The same plugin without wazero's close-on-context-done (timeouts
	// could not stop it): what enforcing CallTimeout costs on this path.
	extism.SetCloseOnContextDone(false)
	extNoClose := load(b, orderSummaryAS(b), extism.Config{})
	extism.SetCloseOnContextDone(true)
	impls := []struct {
		name string
		l    logic.Logic
	}{{"native", nativeOrderSummary()}, {"wasm", raw}, {"extism", ext}, {"extism-noclose", extNoClose}}
	for _, impl := range impls {
		for _, k := range []int{1, 10, 100} {
			req := orderRun(k)
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
	}
}

// BenchmarkCallOverhead measures the fixed cost of one call, describe (no
// input, a few dozen bytes out), on each transport; "extism-empty" calls the
// Extism function dynafold_abi_version, which does nothing at all, so it is
// the SDK's own cost per call.
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	raw, err := plugin.Load(ctx, orderSummaryRaw(b), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close(ctx)
	ext := load(b, orderSummaryAS(b), extism.Config{})
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"wasm", func() error { _, err := raw.Call(ctx, abi.CapDescribe, nil); return err }},
		{"extism", func() error { _, err := ext.Call(ctx, abi.CapDescribe, nil); return err }},
		{"extism-empty", func() error { return ext.CallVersion(ctx) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if err := tc.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkColdStart measures the time from nothing to the first evolve
// result through Extism: runtime, compilation of the kernel and the plugin
// (or the cache), instantiation, describe and one evolve.
//
//	go test ./host/plugin/extism -run '^$' -bench ColdStart -benchtime 10x
func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	wasm := orderSummaryAS(b)
	req := orderRun(1)
	for _, tc := range []struct{ name, dir string }{{"nocache", ""}, {"cache", b.TempDir()}} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.dir != "" { // warm the cache
				p, err := extism.Load(ctx, wasm, extism.Config{CacheDir: tc.dir})
				if err != nil {
					b.Fatal(err)
				}
				p.Close(ctx)
			}
			for b.Loop() {
				p, err := extism.Load(ctx, wasm, extism.Config{CacheDir: tc.dir})
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

// reportPerEvent reports wall time per event, events per second and the
// process's CPU time per event.
func reportPerEvent(b *testing.B, k int, cpu time.Duration) {
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(k), "cpu-ns/event")
}
