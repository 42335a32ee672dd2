package extism_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
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
// (or the cache), instantiation, describe and one evolve. "cache" starts
// from a writable cache a previous load filled, "precompiled" from a
// directory Precompile filled in a separate step, opened read-only (SPEC
// W5, Y6).
//
//	go test ./host/plugin/extism -run '^$' -bench ColdStart -benchtime 10x -count 3
func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	wasm := orderSummaryAS(b)
	req := orderRun(1)
	for _, tc := range coldStartCases(b, wasm) {
		b.Run(tc.Name, func(b *testing.B) {
			cfg := extism.Config{CacheDir: tc.Dir, CacheReadOnly: tc.ReadOnly}
			for b.Loop() {
				p, err := extism.Load(ctx, wasm, cfg)
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

// BenchmarkColdStartProcess is BenchmarkColdStart from process start: each
// iteration execs this test binary as a child that reads the
// AssemblyScript order-summary module, loads it and folds one event;
// ms/start is the wall time from exec to the first fold (target <= 100 ms
// precompiled).
//
//	go test ./host/plugin/extism -run '^$' -bench ColdStartProcess -benchtime 10x -count 3
func BenchmarkColdStartProcess(b *testing.B) {
	wasm := orderSummaryAS(b)
	path := filepath.Join(b.TempDir(), "order-summary-as.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	wasmcachetest.BenchStartProcess(b, path, coldStartCases(b, wasm))
}

// coldStartCases are no cache, a writable cache a load filled, and a cache
// Precompile filled, read-only.
func coldStartCases(b *testing.B, wasm []byte) []wasmcachetest.Case {
	ctx := context.Background()
	return wasmcachetest.Cases(b, func(dir string) error {
		p, err := extism.Load(ctx, wasm, extism.Config{CacheDir: dir})
		if err != nil {
			return err
		}
		return p.Close(ctx)
	}, func(dir string) error { return extism.Precompile(ctx, wasm, extism.Config{CacheDir: dir}) })
}

// BenchmarkPoolMemory reports the resident memory of a process (a child)
// that loaded the AssemblyScript order-summary plugin from a precompiled
// read-only cache with an instance pool of 10, every instance created and
// used for one fold: RSS-MB (VmRSS) and HWM-MB (VmHWM); "none" is the same
// process without a plugin (host/plugin's BenchmarkPoolMemory has the Go
// plugins).
//
//	go test ./host/plugin/extism -run '^$' -bench PoolMemory -benchtime 1x -count 3
func BenchmarkPoolMemory(b *testing.B) {
	dir := b.TempDir()
	wasm := orderSummaryAS(b)
	path := filepath.Join(dir, "order-summary-as.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := extism.Precompile(context.Background(), wasm, extism.Config{CacheDir: dir}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{{"none", ""}, {"order-summary-as", path}} {
		b.Run(tc.name, func(b *testing.B) {
			var rss, hwm float64
			for b.Loop() {
				c := wasmcachetest.StartChild(b, tc.path, dir, true, 10, true)
				rss, hwm = rss+c.RSSMB, hwm+c.HWMMB
			}
			b.ReportMetric(rss/float64(b.N), "RSS-MB")
			b.ReportMetric(hwm/float64(b.N), "HWM-MB")
		})
	}
}

// childStart is what a child of BenchmarkColdStartProcess and
// BenchmarkPoolMemory does: load, fold once, and fill the pool.
func childStart(ctx context.Context, wasm []byte, cfg plugin.Config, fill bool) (any, error) {
	p, err := extism.Load(ctx, wasm, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := p.Evolve(ctx, orderRun(1)); err != nil {
		return nil, err
	}
	if fill {
		if err := p.FillPoolForTest(ctx, orderRun(1)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// reportPerEvent reports wall time per event, events per second and the
// process's CPU time per event.
func reportPerEvent(b *testing.B, k int, cpu time.Duration) {
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(k), "cpu-ns/event")
}
