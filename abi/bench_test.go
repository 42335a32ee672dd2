package abi

import (
	"fmt"
	"testing"
)

func benchRun(k int) (*EvolveRequest, *EvolveResponse) {
	q := &EvolveRequest{Key: Item{"pk": S("OrderSummary#o-1"), "sk": S("OrderSummary")}, StreamID: "o-1"}
	p := &EvolveResponse{State: Item{"orderId": S("o-1"), "customer": S("Ada"), "status": S("placed"), "items": N("3"), "total": N("37.5"), "version": N("0")}}
	p.Item = CloneItem(p.State)
	for v := 1; v <= k; v++ {
		q.Events = append(q.Events, SourcedEvent{Source: "Order", Event: Event{Stream: "Order", StreamID: "o-1", Version: uint64(v), Type: "ItemAdded",
			Data: Item{"_tag": S("ItemAdded"), "sku": S(fmt.Sprint("sku-", v)), "price": N("12.5")}, Timestamp: "2026-11-29T23:00:00.000Z"}})
		p.Decisions = append(p.Decisions, Decision{Outcome: Applied})
	}
	return q, p
}

// BenchmarkHostCodec measures the host's side of an evolve call of k events:
// encoding the request and decoding the response.
//
//	go test ./abi -run '^$' -bench HostCodec -benchmem
func BenchmarkHostCodec(b *testing.B) {
	q, p := benchRun(100)
	out := AppendEvolveResponse(nil, p)
	var buf []byte
	b.Run("AppendEvolveRequest/k=100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendEvolveRequest(buf[:0], q)
		}
	})
	b.Run("DecodeEvolveResponse/k=100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeEvolveResponse(out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
