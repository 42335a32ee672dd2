//go:build !wasip1

package examples_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	zonereadings "github.com/dynafold/dynafold/plugins/examples/zone-readings"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func orderEvent(id string, v uint64, typ string, data abi.Item) abi.Event {
	if data == nil {
		data = abi.Item{}
	}
	data["_tag"] = abi.S(typ)
	return abi.Event{Stream: "Order", StreamID: id, Version: v, Type: typ, Data: data,
		Timestamp: "2026-11-29T23:00:00.000Z"}
}

// orderRun is a run of k events of order id: placed, k-2 items, shipped.
func orderRun(id string, k int) []abi.SourcedEvent {
	run := make([]abi.SourcedEvent, 0, k)
	for v := 1; v <= k; v++ {
		var e abi.Event
		switch {
		case v == 1:
			e = orderEvent(id, uint64(v), "OrderPlaced", abi.Item{"customer": abi.S("Ada")})
		case v == k:
			e = orderEvent(id, uint64(v), "OrderShipped", nil)
		default:
			e = orderEvent(id, uint64(v), "ItemAdded", abi.Item{"sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N("12.5")})
		}
		run = append(run, abi.SourcedEvent{Source: "Order", Event: e})
	}
	return run
}

func sensorEvent(v uint64, typ, zone string, celsius string) abi.SourcedEvent {
	data := abi.Item{"_tag": abi.S(typ), "zone": abi.S(zone)}
	if celsius != "" {
		data["celsius"] = abi.N(celsius)
	}
	return abi.SourcedEvent{Source: "Sensor", Event: abi.Event{Stream: "Sensor", StreamID: "s-1", Version: v, Type: typ, Data: data}}
}

type evolveCase struct {
	name string
	req  *abi.EvolveRequest
}

func orderCases() []evolveCase {
	key := ordersummary.RowKey("o-1")
	existing := abi.Item{"pk": key["pk"], "sk": key["sk"], "orderId": abi.S("o-1"), "customer": abi.S("Bob"),
		"status": abi.S("placed"), "items": abi.N("2"), "total": abi.N("20.25"), "version": abi.N("3"),
		"createdAt": abi.S("2026-01-01"), "gsi1pk": abi.S("placed")}
	run := orderRun("o-1", 6)
	return []evolveCase{
		{"new row", &abi.EvolveRequest{Key: key, StreamID: "o-1", Events: run}},
		{"existing row", &abi.EvolveRequest{Key: key, StreamID: "o-1", State: existing, Events: run[1:3]}},
		{"unknown event fails", &abi.EvolveRequest{Key: key, StreamID: "o-1", Events: []abi.SourcedEvent{run[0],
			{Source: "Order", Event: orderEvent("o-1", 2, "OrderLost", nil)}, run[2]}}},
		{"bad price fails", &abi.EvolveRequest{Key: key, StreamID: "o-1", Events: []abi.SourcedEvent{
			{Source: "Order", Event: orderEvent("o-1", 1, "ItemAdded", abi.Item{"price": abi.S("x")})}}}},
		{"empty run", &abi.EvolveRequest{Key: key, StreamID: "o-1", State: existing}},
	}
}

func zoneCases() []evolveCase {
	key := zonereadings.RowKey("s-1", "north")
	return []evolveCase{
		{"rejected alone", &abi.EvolveRequest{Key: key, StreamID: "s-1", Events: []abi.SourcedEvent{
			sensorEvent(1, "SensorReading", "north", "20")}}},
		{"placed then readings", &abi.EvolveRequest{Key: key, StreamID: "s-1", Events: []abi.SourcedEvent{
			sensorEvent(1, "SensorReading", "north", "20"), sensorEvent(2, "SensorPlaced", "north", ""),
			sensorEvent(3, "SensorReading", "north", "21.5"), sensorEvent(4, "SensorReading", "north", "30.25")}}},
		{"existing row", &abi.EvolveRequest{Key: key, StreamID: "s-1", State: abi.Item{"sensorId": abi.S("s-1"), "zone": abi.S("north"),
			"readings": abi.N("0"), "seq": abi.N("2"), "alertKey": abi.S("normal")}, Events: []abi.SourcedEvent{
			sensorEvent(3, "SensorReading", "north", "-4")}}},
	}
}

// TestW2_NativeAndWasmAgree runs the same requests through the projection in
// process and through its Wasm module, and compares the responses.
func TestW2_NativeAndWasmAgree(t *testing.T) {
	for _, ex := range []struct {
		dir   string
		def   guest.Definition
		cases []evolveCase
		keys  *abi.KeyRequest
	}{
		{"order-summary/wasm", ordersummary.Projection, orderCases(), &abi.KeyRequest{Source: "Order", Events: []abi.Event{orderRun("o-1", 3)[1].Event, orderRun("o-2", 2)[0].Event}}},
		{"zone-readings/wasm", zonereadings.Projection, zoneCases(), &abi.KeyRequest{Source: "Sensor", Events: []abi.Event{
			sensorEvent(1, "SensorPlaced", "north", "").Event, sensorEvent(2, "SensorReading", "", "3").Event}}},
		{"shipment-summary/wasm", shipmentsummary.Projection, shipmentCases(), shipmentKeys()},
	} {
		t.Run(ex.dir, func(t *testing.T) {
			md := load(t, ex.dir)
			if v := md.version(t); v != abi.VersionMajor<<16|abi.VersionMinor {
				t.Fatalf("abi version %#x", v)
			}
			native, wasm := guest.MustNew(ex.def), wasmHandler{t, md}
			if n, w := native.Describe(), wasm.Describe(); !reflect.DeepEqual(n, w) {
				t.Fatalf("describe differs:\nnative %+v\nwasm   %+v", n, w)
			}
			nk, err := native.Key(ex.keys)
			if err != nil {
				t.Fatal(err)
			}
			wk, err := wasm.Key(ex.keys)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nk, wk) || len(nk.Keys) != len(ex.keys.Events) {
				t.Fatalf("keys differ:\nnative %+v\nwasm   %+v", nk, wk)
			}
			for _, c := range ex.cases {
				n, nerr := native.Evolve(c.req)
				w, werr := wasm.Evolve(c.req)
				if nerr != nil || werr != nil {
					t.Fatalf("%s: native %v, wasm %v", c.name, nerr, werr)
				}
				if !reflect.DeepEqual(n, w) {
					t.Fatalf("%s: responses differ:\nnative %+v\nwasm   %+v", c.name, n, w)
				}
			}
			// Garbage is a guest-level failure (status 1), not a trap.
			if _, err := md.call("evolve", []byte{0xff, 0xff, 0xff}); err == nil || !strings.Contains(err.Error(), "status 1") {
				t.Fatalf("garbage: %v", err)
			}
			// The instance still works after it.
			if _, err := wasm.Evolve(ex.cases[0].req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestP2_OrderSummaryFold(t *testing.T) {
	p := guest.MustNew(ordersummary.Projection)
	r, err := p.Evolve(&abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1", Events: orderRun("o-1", 5)})
	if err != nil {
		t.Fatal(err)
	}
	want := abi.Item{"orderId": abi.S("o-1"), "customer": abi.S("Ada"), "status": abi.S("shipped"),
		"items": abi.N("3"), "total": abi.N("37.5"), "version": abi.N("0")}
	if !abi.ItemsEqual(r.State, want) {
		t.Fatalf("state %v", r.State)
	}
	if r.Item["gsi1pk"].Str != "shipped" || r.Item["gsi1sk"].Str != "o-1" || r.Item["total"].Str != "37.5" {
		t.Fatalf("item %v", r.Item)
	}
	if len(r.Decisions) != 5 {
		t.Fatalf("decisions %v", r.Decisions)
	}
	for _, d := range r.Decisions {
		if d.Outcome != abi.Applied {
			t.Fatalf("decision %+v", d)
		}
	}
}

func TestP9_ZoneReadings(t *testing.T) {
	p := guest.MustNew(zonereadings.Projection)
	k, err := p.Key(&abi.KeyRequest{Source: "Sensor", Events: []abi.Event{sensorEvent(1, "SensorPlaced", "north", "").Event,
		sensorEvent(2, "SensorPlaced", "south", "").Event}})
	if err != nil {
		t.Fatal(err)
	}
	if k.Keys[0].Key["sk"].Str != "north" || k.Keys[1].Key["sk"].Str != "south" || k.Keys[0].Key["pk"].Str != "ZoneReading#s-1" {
		t.Fatalf("keys %+v", k.Keys)
	}
	for _, c := range zoneCases() {
		r, err := p.Evolve(c.req)
		if err != nil {
			t.Fatal(err)
		}
		switch c.name {
		case "rejected alone":
			if r.State != nil || len(r.Decisions) != 1 || r.Decisions[0].Outcome != abi.Rejected || r.Decisions[0].Error.Tag != "ZoneNotPlaced" {
				t.Fatalf("%s: %+v", c.name, r)
			}
		case "placed then readings":
			if r.State["readings"].Str != "2" || r.State["maxCelsius"].Str != "30.25" || r.Item["alertKey"].Str != "hot" {
				t.Fatalf("%s: %+v", c.name, r)
			}
		case "existing row":
			if r.State["readings"].Str != "1" || r.State["maxCelsius"].Str != "-4" || r.Item["alertKey"].Str != "normal" {
				t.Fatalf("%s: %+v", c.name, r)
			}
		}
	}
	// Before any reading maxCelsius (-Infinity in the reference) is absent.
	r, err := p.Evolve(&abi.EvolveRequest{Key: zonereadings.RowKey("s-1", "north"), StreamID: "s-1", Events: []abi.SourcedEvent{sensorEvent(1, "SensorPlaced", "north", "")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Item["maxCelsius"]; ok || r.Item["readings"].Str != "0" || r.Item["alertKey"].Str != "normal" {
		t.Fatalf("placed: %+v", r.Item)
	}
}

// TestW1_ModuleShape checks a built plugin against ABI.md §1: the exports,
// and no imports beyond wasi_snapshot_preview1.
func TestW1_ModuleShape(t *testing.T) {
	md := load(t, "order-summary/wasm")
	for _, name := range []string{"_initialize", "dynafold_abi_version", "dynafold_alloc", "describe", "key", "evolve",
		"initial", "terminal", "to_item", "effects"} {
		if md.m.ExportedFunction(name) == nil {
			t.Errorf("missing export %s", name)
		}
	}
	if md.m.ExportedMemory("memory") == nil {
		t.Error("missing memory export")
	}
	cm, err := md.rt.CompileModule(context.Background(), wasmbuild.Build(t, "order-summary/wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cm.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod != "wasi_snapshot_preview1" {
			t.Errorf("unexpected import %s", mod)
		}
	}
	// An input buffer the guest did not hand out is refused with status 1.
	md.stack[0], md.stack[1] = 8, 4
	if err := md.fns["evolve"].CallWithStack(context.Background(), md.stack); err != nil {
		t.Fatal(err)
	}
	out, _ := md.m.Memory().Read(uint32(md.stack[0]>>32), uint32(md.stack[0]))
	if len(out) == 0 || out[0] != 1 {
		t.Fatalf("foreign buffer: %q", out)
	}
}
