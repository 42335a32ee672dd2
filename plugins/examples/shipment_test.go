//go:build !wasip1

package examples_test

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func shipEvent(source, stream, id string, v uint64, typ string, data abi.Item) abi.SourcedEvent {
	data["_tag"] = abi.S(typ)
	return abi.SourcedEvent{Source: source, Event: abi.Event{Stream: stream, StreamID: id, Version: v, Type: typ, Data: data}}
}

func shipmentCases() []evolveCase {
	key := shipmentsummary.RowKey("sh-1")
	order := shipEvent("order", "Order", "o-1", 1, "ParcelsAdded", abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("3")})
	scan := shipEvent("scan", "Scan", "sh-1", 2, "Scanned", abi.Item{"location": abi.S("Oslo")})
	tare := shipEvent("weigh", "Weigh", "w-1", 1, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("0")})
	weigh := shipEvent("weigh", "Weigh", "w-1", 2, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("12")})
	cancel := shipEvent("order", "Order", "o-1", 2, "OrderCancelled", abi.Item{"shipmentId": abi.S("sh-1")})
	existing := abi.Item{"pk": key["pk"], "sk": key["sk"], "shipmentId": abi.S("sh-1"), "parcels": abi.N("1"),
		"location": abi.S("Bergen"), "kg": abi.N("4"), "revision": abi.N("3"), "checkpoints": abi.M(abi.Item{"order#o-1": abi.N("1")})}
	return []evolveCase{
		{"three sources", &abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{order, scan, tare, weigh}}},
		{"existing row", &abi.EvolveRequest{Key: key, State: existing, Events: []abi.SourcedEvent{scan, weigh}}},
		{"cancelled", &abi.EvolveRequest{Key: key, State: existing, Events: []abi.SourcedEvent{cancel}}},
		{"cancelled then weighed", &abi.EvolveRequest{Key: key, State: existing, Events: []abi.SourcedEvent{cancel, weigh}}},
		{"tare alone", &abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{tare}}},
	}
}

func shipmentKeys() *abi.KeyRequest {
	return &abi.KeyRequest{Source: "order", Events: []abi.Event{
		shipEvent("order", "Order", "o-1", 1, "ParcelsAdded", abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("3")}).Event,
		shipEvent("order", "Order", "o-1", 2, "ParcelsAdded", abi.Item{"parcels": abi.N("3")}).Event}}
}

func TestM1_ShipmentSummaryFold(t *testing.T) {
	p := guest.MustNew(shipmentsummary.Projection)
	d := p.Describe()
	if len(d.Sources) != 3 || d.Sources[1].Mode != abi.ModeLatest || d.Sources[0].Mode != abi.ModeFold {
		t.Fatalf("sources %+v", d.Sources)
	}
	cases := shipmentCases()
	r, err := p.Evolve(cases[0].req)
	if err != nil {
		t.Fatal(err)
	}
	want := []abi.Outcome{abi.Applied, abi.Applied, abi.Skipped, abi.Applied}
	for i, d := range r.Decisions {
		if d.Outcome != want[i] {
			t.Fatalf("decision %d: %v, want %v", i, d.Outcome, want[i])
		}
	}
	if r.Item["parcels"].Str != "3" || r.Item["location"].Str != "Oslo" || r.Item["kg"].Str != "12" || r.Item["shipmentId"].Str != "sh-1" {
		t.Fatalf("item %v", r.Item)
	}
	if fx := r.Decisions[1].Effects; len(fx) != 1 || fx[0].Map["kind"].Str != "at Oslo" || fx[0].Map["shipmentId"].Str != "sh-1" {
		t.Fatalf("effects %v", fx)
	}
	r, err = p.Evolve(cases[2].req)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Removed || !r.Decisions[0].Remove || r.State != nil {
		t.Fatalf("cancelled: %+v", r)
	}
	k, err := p.Key(shipmentKeys())
	if err != nil || k.Keys[0].Key["pk"].Str != "Shipment#sh-1" || k.Keys[1].Key != nil {
		t.Fatalf("keys %+v %v", k, err)
	}
}
