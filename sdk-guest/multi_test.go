package guest_test

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type shipment struct {
	ShipmentID string   `ddb:"shipmentId"`
	Parcels    int64    `ddb:"parcels"`
	Location   string   `ddb:"location"`
	Kg         float64  `ddb:"kg"`
	Sources    []string `ddb:"sources"`
}

type notice struct {
	ShipmentID string `ddb:"shipmentId"`
	Kind       string `ddb:"kind"`
}

func shipmentKey(_ string, e guest.Event) (guest.Key, bool) {
	var d struct {
		ShipmentID string `ddb:"shipmentId"`
	}
	if err := e.Decode(&d); err != nil || d.ShipmentID == "" {
		return nil, false
	}
	return guest.StringKey("pk", "Shipment#"+d.ShipmentID, "sk", "Shipment"), true
}

// shipments is the ShipmentProjection of reference 001: three sources, a
// removeRow, a skip and outbox effects.
var shipments = guest.MultiProjection[shipment]{
	Name: "shipments", Version: "1",
	Initial: func(key guest.Key) shipment {
		return shipment{ShipmentID: key["pk"].Str[len("Shipment#"):]}
	},
	Sources: []guest.Source[shipment]{
		{Name: "order", Stream: "Order", EventTypes: []string{"ParcelAdded", "OrderCancelled"}, Key: shipmentKey,
			Evolve: func(s shipment, e guest.Event, ctx guest.SourceContext) (shipment, error) {
				if e.Type == "OrderCancelled" {
					return s, guest.RemoveRow
				}
				var d struct {
					Parcels int64 `ddb:"parcels"`
				}
				if err := e.Decode(&d); err != nil {
					return s, err
				}
				s.Parcels += d.Parcels
				s.Sources = append(s.Sources, ctx.Source+"#"+ctx.StreamID)
				return s, nil
			}},
		{Name: "scan", Stream: "Scan", Mode: abi.ModeLatest,
			Key: func(streamID string, _ guest.Event) (guest.Key, bool) {
				return guest.StringKey("pk", "Shipment#"+streamID, "sk", "Shipment"), true
			},
			Evolve: func(s shipment, e guest.Event, _ guest.SourceContext) (shipment, error) {
				var d struct {
					Location string `ddb:"location"`
				}
				err := e.Decode(&d)
				s.Location = d.Location
				return s, err
			}},
		{Name: "weigh", Stream: "Weigh", Key: shipmentKey,
			Evolve: func(s shipment, e guest.Event, _ guest.SourceContext) (shipment, error) {
				var d struct {
					Kg float64 `ddb:"kg"`
				}
				if err := e.Decode(&d); err != nil {
					return s, err
				}
				if d.Kg == 0 {
					return s, guest.Skip
				}
				s.Kg += d.Kg
				return s, nil
			}},
	},
	Effects: func(e guest.Event, next *shipment, ctx guest.EffectContext) []any {
		if e.Type == "Scanned" && next != nil {
			return []any{notice{ShipmentID: next.ShipmentID, Kind: "at " + next.Location}}
		}
		return nil
	},
}

func sev(source, stream, id string, v uint64, typ string, data abi.Item) abi.SourcedEvent {
	data["_tag"] = abi.S(typ)
	return abi.SourcedEvent{Source: source, Event: abi.Event{Stream: stream, StreamID: id, Version: v, Type: typ, Data: data}}
}

func TestM1_MultiSourceFold(t *testing.T) {
	p := guest.MustNew(shipments)
	d := p.Describe()
	if len(d.Sources) != 3 || d.Sources[1].Mode != abi.ModeLatest || d.Sources[0].Mode != abi.ModeFold || d.Sources[2].Stream != "Weigh" {
		t.Fatalf("describe %+v", d.Sources)
	}
	key := guest.StringKey("pk", "Shipment#sh-1", "sk", "Shipment")
	r, err := p.Evolve(&abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{
		sev("order", "Order", "o-1", 1, "ParcelAdded", abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("2")}),
		sev("scan", "Scan", "sh-1", 4, "Scanned", abi.Item{"location": abi.S("Oslo")}),
		sev("weigh", "Weigh", "w-1", 1, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("0")}),
		sev("weigh", "Weigh", "w-1", 2, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("1.5")}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	sameOutcomes(t, r, abi.Applied, abi.Applied, abi.Skipped, abi.Applied)
	if r.State["shipmentId"].Str != "sh-1" || r.State["parcels"].Str != "2" || r.State["location"].Str != "Oslo" || r.State["kg"].Str != "1.5" {
		t.Fatalf("state %v", r.State)
	}
	if l := r.State["sources"].List; len(l) != 1 || l[0].Str != "order#o-1" {
		t.Fatalf("source context %v", r.State["sources"])
	}
	if fx := r.Decisions[1].Effects; len(fx) != 1 || fx[0].Map["kind"].Str != "at Oslo" {
		t.Fatalf("effects %v", fx)
	}
	// removeRow from one source; a later event of another starts from initial(key).
	r, err = p.Evolve(&abi.EvolveRequest{Key: key, State: r.State, Events: []abi.SourcedEvent{
		sev("order", "Order", "o-1", 2, "OrderCancelled", abi.Item{"shipmentId": abi.S("sh-1")}),
		sev("weigh", "Weigh", "w-1", 3, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("3")}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	sameOutcomes(t, r, abi.Applied, abi.Applied)
	if !r.Decisions[0].Remove || r.Removed || r.State["kg"].Str != "3" || r.State["parcels"].Str != "0" {
		t.Fatalf("after remove: %+v", r)
	}
	k, err := p.Key(&abi.KeyRequest{Source: "scan", Events: []abi.Event{sev("scan", "Scan", "sh-9", 1, "Scanned", abi.Item{}).Event}})
	if err != nil || k.Keys[0].Key["pk"].Str != "Shipment#sh-9" {
		t.Fatalf("scan key %v %v", k, err)
	}
	if _, err := p.Evolve(&abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{sev("nope", "X", "x", 1, "X", abi.Item{})}}); err == nil {
		t.Fatal("unknown source accepted")
	}
	if _, err := guest.New(guest.MultiProjection[shipment]{Name: "x", Initial: shipments.Initial,
		Sources: []guest.Source[shipment]{shipments.Sources[0], shipments.Sources[0]}}); err == nil {
		t.Fatal("duplicate source names accepted")
	}
}
