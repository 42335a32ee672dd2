//go:build !wasip1

package examples_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// BenchmarkOrderSummaryEvolve measures one evolve call of k events of one
// order from an absent row, through the Wasm module on wazero (compiled
// mode) and natively; ns/event = ns/op / k. The request is encoded once, as a
// host would per call, and the response decoded, so the numbers include the
// guest's decoding, folding and encoding and the host's copy in and out.
//
//	go test ./plugins/examples -run '^$' -bench OrderSummaryEvolve -benchtime 2s
func BenchmarkOrderSummaryEvolve(b *testing.B) {
	md := load(b, "order-summary/wasm")
	native := guest.MustNew(ordersummary.Projection)
	for _, k := range []int{1, 10, 100} {
		req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1", Events: orderRun("o-1", k)}
		in := abi.AppendEvolveRequest(nil, req)
		b.Run(fmt.Sprintf("wasm/k=%d", k), func(b *testing.B) {
			cpu0 := startCPU()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				out, err := md.call("evolve", in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := abi.DecodeEvolveResponse(out); err != nil {
					b.Fatal(err)
				}
			}
			report(b, k, cpu0)
		})
		b.Run(fmt.Sprintf("wasm-raw/k=%d", k), func(b *testing.B) {
			cpu0 := startCPU()
			for b.Loop() {
				if _, err := md.call("evolve", in); err != nil {
					b.Fatal(err)
				}
			}
			report(b, k, cpu0)
		})
		b.Run(fmt.Sprintf("native/k=%d", k), func(b *testing.B) {
			cpu0 := startCPU()
			for b.Loop() {
				if _, err := native.Evolve(req); err != nil {
					b.Fatal(err)
				}
			}
			report(b, k, cpu0)
		})
	}
	b.Run("wasm-raw/existing-row/k=1", func(b *testing.B) {
		// A row that exists: its state is decoded, folded, encoded.
		in := abi.AppendEvolveRequest(nil, &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1",
			State: abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary"), "orderId": abi.S("o-1"),
				"customer": abi.S("Ada"), "status": abi.S("placed"), "items": abi.N("3"), "total": abi.N("37.5"),
				"version": abi.N("4"), "gsi1pk": abi.S("placed"), "gsi1sk": abi.S("o-1"), "createdAt": abi.S("2026-11-29T23:00:00Z")},
			Events: orderRun("o-1", 6)[4:5]})
		cpu0 := startCPU()
		for b.Loop() {
			if _, err := md.call("evolve", in); err != nil {
				b.Fatal(err)
			}
		}
		report(b, 1, cpu0)
	})
	b.Run("wasm-raw/empty-run", func(b *testing.B) {
		cpu0 := startCPU()
		defer report(b, 1, cpu0)
		in := abi.AppendEvolveRequest(nil, &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1"})
		for b.Loop() {
			if _, err := md.call("evolve", in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// report adds ns/event (wall clock) and cpu-ns/event: the process's CPU time
// (user + system) per event, which a loaded machine inflates much less than
// the wall clock.
func report(b *testing.B, k int, cpu0 time.Duration) {
	n := float64(b.N) * float64(k)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/n, "cpu-ns/event")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startCPU collects earlier garbage (a module's compilation leaves much), so
// that no collection of it is counted, and returns the CPU time.
func startCPU() time.Duration {
	runtime.GC()
	return cpuTime()
}
