// Package shipmentsummary is the shipment-summary example as a dynafold
// plugin: one row per shipment that three streams contribute to.
//
//   - order (stream "Order", keyed by data.shipmentId): ParcelsAdded adds
//     data.parcels; OrderCancelled removes the row (a tombstone). The
//     example shows removal; a real multi-source row should end with a
//     status instead, since a scan after the cancellation starts the row
//     again (docs/MULTISOURCE.md, "Ending a row fed by several sources").
//   - scan (stream "Scan", mode latest, keyed by the stream id): each
//     Scanned event carries the whole location, so only the newest matters.
//   - weigh (stream "Weigh", keyed by data.shipmentId): Weighed adds data.kg;
//     a tare reading (kg 0) changes nothing and is skipped.
//
// A Scanned event that leaves a row produces a notice effect
// {shipmentId, kind: "at <location>"}. Weights are whole kilograms here.
package shipmentsummary

import (
	"strings"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// The read model's layout and the streams.
const (
	EntityType  = "ShipmentSummary"
	OrderStream = "Order"
	ScanStream  = "Scan"
	WeighStream = "Weigh"
)

// Shipment is the row's state.
type Shipment struct {
	ShipmentID string `ddb:"shipmentId"`
	Parcels    int64  `ddb:"parcels"`
	Location   string `ddb:"location"`
	Kg         int64  `ddb:"kg"`
}

// Notice is the effect of a Scanned event.
type Notice struct {
	ShipmentID string `ddb:"shipmentId"`
	Kind       string `ddb:"kind"`
}

// RowKey is the key of a shipment's row.
func RowKey(shipmentID string) guest.Key {
	return abi.Item{"pk": abi.S("Shipment#" + shipmentID), "sk": abi.S("S")}
}

// byShipmentID keys an event by its data.shipmentId (none: no row).
func byShipmentID(_ string, e guest.Event) (guest.Key, bool) {
	var d struct {
		ShipmentID string `ddb:"shipmentId"`
	}
	if err := e.Decode(&d); err != nil || d.ShipmentID == "" {
		return nil, false
	}
	return RowKey(d.ShipmentID), true
}

func evolveOrder(s Shipment, e guest.Event, _ guest.SourceContext) (Shipment, error) {
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
	return s, nil
}

func evolveScan(s Shipment, e guest.Event, _ guest.SourceContext) (Shipment, error) {
	var d struct {
		Location string `ddb:"location"`
	}
	if err := e.Decode(&d); err != nil {
		return s, err
	}
	s.Location = d.Location
	return s, nil
}

func evolveWeigh(s Shipment, e guest.Event, _ guest.SourceContext) (Shipment, error) {
	var d struct {
		Kg int64 `ddb:"kg"`
	}
	if err := e.Decode(&d); err != nil {
		return s, err
	}
	if d.Kg == 0 {
		return s, guest.Skip // a tare reading: the row is not written for it
	}
	s.Kg += d.Kg
	return s, nil
}

// Projection is the shipment-summary projection.
var Projection = guest.MultiProjection[Shipment]{
	Name: "shipment-summary", Version: "1.0.0",
	Initial: func(key guest.Key) Shipment {
		return Shipment{ShipmentID: strings.TrimPrefix(key["pk"].Str, "Shipment#")}
	},
	Sources: []guest.Source[Shipment]{
		{Name: "order", Stream: OrderStream, EventTypes: []string{"ParcelsAdded", "OrderCancelled"}, Key: byShipmentID, Evolve: evolveOrder},
		{Name: "scan", Stream: ScanStream, EventTypes: []string{"Scanned"}, Mode: abi.ModeLatest,
			Key: func(streamID string, _ guest.Event) (guest.Key, bool) { return RowKey(streamID), true }, Evolve: evolveScan},
		{Name: "weigh", Stream: WeighStream, EventTypes: []string{"Weighed"}, Key: byShipmentID, Evolve: evolveWeigh},
	},
	Effects: func(e guest.Event, next *Shipment, _ guest.EffectContext) []any {
		if e.Type == "Scanned" && next != nil {
			return []any{Notice{ShipmentID: next.ShipmentID, Kind: "at " + next.Location}}
		}
		return nil
	},
}
