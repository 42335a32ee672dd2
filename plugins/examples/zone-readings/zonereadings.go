// Package zonereadings is the ZoneReadingProjection example as a
// dynafold plugin: the "Sensor" stream folded into one row per sensor and
// zone, a stream feeding several rows, with a terminal error
// (ZoneNotPlaced) and a hidden attribute recomputed by ToItem.
//
// maxCelsius starts at -Infinity in the reference, which DynamoDB cannot
// store: here it is a *float64, nil until the first reading, and a nil
// maxCelsius is stored as an absent attribute.
package zonereadings

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// The read model's layout.
const (
	EntityType = "ZoneReading"
	Checkpoint = "seq"
	Stream     = "Sensor"
)

// ZoneReading is the row's state.
type ZoneReading struct {
	SensorID   string         `ddb:"sensorId"`
	Zone       string         `ddb:"zone"`
	Readings   int64          `ddb:"readings"`   // -1: the zone was not placed yet
	MaxCelsius *guest.Decimal `ddb:"maxCelsius"` // nil: no reading yet (-Infinity); exact, as the sensor sent it
	Seq        int64          `ddb:"seq"`        // the checkpoint, written by the host
	AlertKey   string         `ddb:"alertKey"`   // hidden, recomputed by ToItem
}

// SensorPlaced is the data of a SensorPlaced event.
type SensorPlaced struct {
	Zone string `ddb:"zone"`
}

// SensorReading is the data of a SensorReading event.
type SensorReading struct {
	Zone    string        `ddb:"zone"`
	Celsius guest.Decimal `ddb:"celsius"`
}

// ZoneNotPlaced is the domain error of a reading of a zone never placed.
type ZoneNotPlaced struct {
	Version uint64
}

// Error implements error.
func (e ZoneNotPlaced) Error() string { return fmt.Sprintf("zone not placed (version %d)", e.Version) }

// Tag names the error's type.
func (ZoneNotPlaced) Tag() string { return "ZoneNotPlaced" }

// RowKey returns the key of a sensor's row for a zone.
func RowKey(sensorID, zone string) guest.Key {
	return abi.Item{"pk": abi.S(EntityType + "#" + sensorID), "sk": abi.S(zone)}
}

// hot is the temperature above which a zone alerts.
var hot = guest.DecimalFromInt(30)

// Projection is the zone readings projection.
var Projection = guest.Projection[ZoneReading]{
	Name:       "zone-readings",
	Version:    "1.0.0",
	Stream:     Stream,
	EventTypes: []string{"SensorPlaced", "SensorReading"},
	Key: func(streamID string, e guest.Event) (guest.Key, bool) {
		zone, ok := e.Str("zone")
		if !ok || zone == "" {
			return nil, false // no zone: the event addresses no row
		}
		return RowKey(streamID, zone), true
	},
	Initial: func(streamID string, e guest.Event) ZoneReading {
		zone, _ := e.Str("zone")
		return ZoneReading{SensorID: streamID, Zone: zone, Readings: -1}
	},
	Evolve: func(s ZoneReading, e guest.Event) (ZoneReading, error) {
		if e.Type == "SensorPlaced" {
			s.Readings = 0
			return s, nil
		}
		if s.Readings < 0 {
			return s, ZoneNotPlaced{Version: e.Version}
		}
		var d SensorReading
		if err := e.Decode(&d); err != nil {
			return s, err
		}
		s.Readings++
		if s.MaxCelsius == nil || d.Celsius.Cmp(*s.MaxCelsius) > 0 {
			c := d.Celsius
			s.MaxCelsius = &c
		}
		return s, nil
	},
	// A reading of a zone never placed is acknowledged and skipped, every time.
	Terminal: func(err error) bool { return guest.HasTag(err, "ZoneNotPlaced") },
	// Recompute the attribute other readers query by, on every write.
	ToItem: func(s ZoneReading, _ guest.ItemContext) any {
		s.AlertKey = "normal"
		if s.MaxCelsius != nil && s.MaxCelsius.Cmp(hot) > 0 {
			s.AlertKey = "hot"
		}
		return s
	},
}
