package host_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	zonereadings "github.com/dynafold/dynafold/plugins/examples/zone-readings"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// zoneHost runs the zone-readings projection through its Wasm plugin or
// natively, on a fresh ddblocal.
func zoneHost(t *testing.T, kind string) (*host.Host, *testenv.Env, string) {
	env := testenv.Start(t)
	table := env.Table(t, "zones", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "iot", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Sensor", EventTypes: []string{"SensorPlaced", "SensorReading"}, Composite: []string{"sensorId"}}}},
		Projections: []host.ProjectionConfig{{Name: "zones", Table: table, Checkpoint: host.CheckpointConfig{Field: zonereadings.Checkpoint}}},
	}
	var opts []host.Option
	if kind == "native" {
		p, err := guest.New(zonereadings.Projection)
		require.NoError(t, err)
		cfg.Projections[0].Plugin = "native:zones"
		opts = append(opts, host.WithNative("zones", logic.Native(p, "zone-readings")))
	} else {
		cfg.Projections[0].Plugin = wasmbuild.BuildPath(t, "../plugins/examples/zone-readings/wasm")
	}
	h, err := host.New(context.Background(), cfg, append(opts, host.WithClient(env.Client))...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, env, table
}

func sensorRecords(t *testing.T, h *host.Host, sensor string, evs ...host.NewEvent) []host.Record {
	out, err := h.Append(context.Background(), "Sensor", sensor, 0, evs...)
	require.NoError(t, err)
	var recs []host.Record
	for i, ev := range out {
		recs = append(recs, host.Record{EventName: "INSERT", EventID: fmt.Sprint(i),
			DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(100 + i)}})
	}
	return recs
}

func placed(zone string) host.NewEvent {
	return host.NewEvent{Type: "SensorPlaced", Data: abi.Item{"zone": abi.S(zone)}}
}

func reading(zone, celsius string) host.NewEvent {
	return host.NewEvent{Type: "SensorReading", Data: abi.Item{"zone": abi.S(zone), "celsius": abi.N(celsius)}}
}

// TestP9_ZoneReadingsNativeAndWasmAgree runs the reference's zone-readings
// example through the Wasm plugin and through the same Go logic natively:
// rows keyed by event fields, a terminal rejection, gap reads that keep only
// the row's events, and toItem's hidden alertKey — with identical rows.
func TestP9_ZoneReadingsNativeAndWasmAgree(t *testing.T) {
	rows := map[string]map[string]abi.Item{}
	for _, kind := range []string{"native", "wasm"} {
		h, env, table := zoneHost(t, kind)
		recs := sensorRecords(t, h, "s-1",
			reading("z1", "20"),   // v1: z1 not placed yet: rejected
			placed("z1"),          // v2
			placed("z2"),          // v3
			reading("z1", "31.5"), // v4
			reading("z2", "12"),   // v5
			reading("z1", "25"),   // v6
		)
		// Deliver the last event only, then the rest shuffled and redelivered.
		res, err := h.ProcessBatch(context.Background(), recs[5:])
		require.NoError(t, err)
		zr := res.Projections["zones"].Rows
		require.Len(t, zr, 1)
		require.NoError(t, zr[0].Err)
		assert.Len(t, zr[0].Instances[0].Rejected, 1, "%s: v1 is rejected by terminal", kind)
		assert.Equal(t, []uint64{2, 4, 6}, versionsOf(zr[0].Applied()), "%s: the gap read keeps only the row's events", kind)

		res, err = h.ProcessBatch(context.Background(), []host.Record{recs[4], recs[0], recs[2], recs[3], recs[1]})
		require.NoError(t, err)
		for _, o := range res.Projections["zones"].Rows {
			require.NoError(t, o.Err)
		}
		rows[kind] = map[string]abi.Item{}
		for _, zone := range []string{"z1", "z2"} {
			it, err := dynamo.New(env.Client).GetItem(context.Background(), table, zonereadings.RowKey("s-1", zone))
			require.NoError(t, err)
			require.NotNil(t, it, "%s %s", kind, zone)
			delete(it, "createdAt")
			rows[kind][zone] = it
		}
		z1, z2 := rows[kind]["z1"], rows[kind]["z2"]
		assert.Equal(t, "2", z1["readings"].Str, kind)
		assert.Equal(t, "31.5", z1["maxCelsius"].Str, kind)
		assert.Equal(t, "hot", z1["alertKey"].Str, "%s: toItem recomputes the hidden attribute", kind)
		assert.Equal(t, "6", z1["seq"].Str, kind)
		assert.Equal(t, "normal", z2["alertKey"].Str, kind)
		assert.Equal(t, "5", z2["seq"].Str, "%s: z2's checkpoint covers the versions considered for it", kind)
	}
	for _, zone := range []string{"z1", "z2"} {
		assert.True(t, abi.ItemsEqual(rows["native"][zone], rows["wasm"][zone]), "zone %s: native %v, wasm %v", zone, rows["native"][zone], rows["wasm"][zone])
	}
}

func versionsOf(evs []abi.Event) []uint64 {
	out := []uint64{}
	for _, ev := range evs {
		out = append(out, ev.Version)
	}
	return out
}
