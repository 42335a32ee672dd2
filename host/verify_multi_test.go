package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// shipments is the shipment-summary example run natively over ddblocal:
// rows fed by three streams (checkpoint map, revision), tombstones
// (removal) and a latest-mode source.
type shipments struct {
	h     *host.Host
	env   *testenv.Env
	table string
}

func newShipments(t *testing.T) *shipments {
	t.Helper()
	env := testenv.Start(t)
	s := &shipments{env: env, table: env.Table(t, "shipments", false)}
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "ship", "streams": [
	    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
	    {"name": "Weigh", "composite": ["sessionId"]}]},
	  "projections": [{"name": "shipments", "plugin": "native:shipments", "table": %q,
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
	    "readModel": {"entityType": %q}, "removal": {}}]}`, env.Table(t, "events", true), s.table, shipmentsummary.EntityType))
	require.NoError(t, err)
	s.h, err = host.New(context.Background(), cfg, host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		host.WithNative("shipments", logic.Native(guest.MustNew(shipmentsummary.Projection), "shipments")))
	require.NoError(t, err)
	t.Cleanup(func() { s.h.Close(context.Background()) })
	return s
}

// feed appends events to a stream instance and folds them through the
// change feed.
func (s *shipments) feed(t *testing.T, stream, id string, after uint64, es ...host.NewEvent) {
	t.Helper()
	evs, err := s.h.Append(context.Background(), stream, id, after, es...)
	require.NoError(t, err)
	res, err := s.h.ProcessBatch(context.Background(), records(s.h, evs))
	require.NoError(t, err)
	require.Empty(t, res.Failed())
}

func parcels(sh string, n int) host.NewEvent {
	return host.NewEvent{Type: "ParcelsAdded", Data: abi.Item{"shipmentId": abi.S(sh), "parcels": abi.N(fmt.Sprint(n))}}
}

func weighed(sh string, kg int) host.NewEvent {
	return host.NewEvent{Type: "Weighed", Data: abi.Item{"shipmentId": abi.S(sh), "kg": abi.N(fmt.Sprint(kg))}}
}

func scanned(at string) host.NewEvent {
	return host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S(at)}}
}

// rows writes s1 (an order, two scans, a weighing with a tare reading),
// s2 (an order cancelled: a tombstone) and s3 (an order and a scan).
func (s *shipments) rows(t *testing.T) {
	t.Helper()
	s.feed(t, "Order", "o-1", 0, parcels("s1", 2), parcels("s1", 1))
	s.feed(t, "Scan", "s1", 0, scanned("Oslo"))
	s.feed(t, "Scan", "s1", 1, scanned("Bergen"))
	s.feed(t, "Weigh", "w-1", 0, weighed("s1", 4), weighed("s1", 0))
	s.feed(t, "Order", "o-2", 0, parcels("s2", 1), host.NewEvent{Type: "OrderCancelled", Data: abi.Item{"shipmentId": abi.S("s2")}})
	s.feed(t, "Order", "o-3", 0, parcels("s3", 5))
	s.feed(t, "Scan", "s3", 0, scanned("Hamar"))
}

func (s *shipments) get(t *testing.T, sh string) abi.Item {
	return s.env.Get(t, s.table, shipmentsummary.RowKey(sh))
}

func (s *shipments) put(t *testing.T, it abi.Item) { s.env.Put(t, s.table, it) }

func str(s string) *abi.Value { v := abi.S(s); return &v }

func TestV1_VerifyMultiSourceFindsNothingOnRowsTheFeedWrote(t *testing.T) {
	s := newShipments(t)
	s.rows(t)
	require.Equal(t, "ShipmentSummary#tombstone", s.get(t, "s2")["__edd_e__"].Str)

	rep := verifyAll(t, s.h, host.VerifyOptions{})

	assert.Empty(t, rep.Findings)
	assert.Equal(t, 3, rep.Total().Rows, "two rows and a tombstone")
	assert.Equal(t, 10, rep.Total().Events)
}

// Each kind of finding on rows fed by three streams: an attribute edited
// (the latest-mode source's), a map entry removed (its events then lie
// after the row's checkpoint), a row deleted, a checkpoint raised, a row
// added, a tombstone made a row again.
func TestV1_VerifyMultiSourceFindsEachKind(t *testing.T) {
	s := newShipments(t)
	s.rows(t)
	s1 := s.get(t, "s1")
	s1["location"] = abi.S("Oslo")
	delete(s1["checkpoints"].Map, "weigh#w-1")
	s.put(t, s1)
	deleteFrom(t, s.env, s.table, shipmentsummary.RowKey("s3"))
	s4 := abi.Item{"pk": abi.S("Shipment#s4"), "sk": abi.S("S"), "parcels": abi.N("1"), "revision": abi.N("1")}
	s.put(t, s4)
	s2 := s.get(t, "s2")
	delete(s2, "__edd_e__")
	s2["parcels"] = abi.N("1")
	s.put(t, s2)

	rep := verifyAll(t, s.h, host.VerifyOptions{})

	byKey := map[string]host.Finding{}
	for _, f := range rep.Findings {
		byKey[f.Key["pk"].Str] = f
	}
	require.Len(t, byKey, 4, "findings %+v", rep.Findings)
	d := byKey["Shipment#s1"]
	assert.Equal(t, host.FindingDiffers, d.Kind)
	assert.Contains(t, d.Diffs, host.AttrDiff{Path: "location", Stored: str("Oslo"), Fold: str("Bergen")})
	assert.Contains(t, d.Diffs, host.AttrDiff{Path: "checkpoints.weigh#w-1", Fold: num("1")})
	assert.Equal(t, []host.EventRef{{Instance: host.InstanceRef{Source: "weigh", StreamID: "w-1"}, Version: 1}}, d.Unapplied,
		"the tare reading is skipped, so only the first weighing is unapplied")
	assert.Equal(t, host.FindingMissing, byKey["Shipment#s3"].Kind)
	assert.Equal(t, "Hamar", byKey["Shipment#s3"].Fold["location"].Str)
	assert.Equal(t, host.FindingOrphan, byKey["Shipment#s4"].Kind)
	t2 := byKey["Shipment#s2"]
	assert.Equal(t, host.FindingDiffers, t2.Kind)
	assert.Contains(t, t2.Diffs, host.AttrDiff{Path: "__edd_e__", Fold: str("ShipmentSummary#tombstone")})

	// repaired, then a checkpoint raised above its instance's head
	rep = verifyAll(t, s.h, host.VerifyOptions{Repair: true})
	require.Equal(t, 1, rep.Unrepaired(), "all but the orphan repaired: %+v", rep.Findings)
	s1 = s.get(t, "s1")
	s1["checkpoints"].Map["scan#s1"] = abi.N("7")
	s.put(t, s1)
	rep = verifyAll(t, s.h, host.VerifyOptions{})
	var ahead []host.Finding
	for _, f := range rep.Findings {
		if f.Kind == host.FindingAhead {
			ahead = append(ahead, f)
		}
	}
	require.Len(t, ahead, 1)
	assert.Equal(t, []host.AheadCheckpoint{{Instance: host.InstanceRef{Source: "scan", StreamID: "s1"}, Checkpoint: 7, Head: 2}}, ahead[0].Ahead)
}

// The repair of rows fed by several streams keeps every source's part and
// checkpoint: after it, a verification finds only the orphan.
func TestV1_VerifyMultiSourceRepairLeavesOnlyOrphans(t *testing.T) {
	s := newShipments(t)
	s.rows(t)
	s1 := s.get(t, "s1")
	s1["kg"] = abi.N("40")
	s1["checkpoints"].Map["order#o-1"] = abi.N("9")
	s.put(t, s1)
	deleteFrom(t, s.env, s.table, shipmentsummary.RowKey("s3"))
	s.put(t, abi.Item{"pk": abi.S("Shipment#s4"), "sk": abi.S("S"), "parcels": abi.N("1")})

	rep := verifyAll(t, s.h, host.VerifyOptions{Repair: true})

	c := rep.Total()
	assert.Equal(t, 1, c.Ahead)
	assert.Equal(t, 1, c.Missing)
	assert.Equal(t, 1, c.Orphan)
	assert.Equal(t, 2, c.Repaired)
	s1 = s.get(t, "s1")
	assert.Equal(t, "4", s1["kg"].Str)
	assert.Equal(t, "3", s1["parcels"].Str)
	assert.Equal(t, "Bergen", s1["location"].Str)
	assert.Equal(t, map[string]string{"order#o-1": "2", "scan#s1": "2", "weigh#w-1": "1"}, entries(s1["checkpoints"]))
	assert.Equal(t, "Hamar", s.get(t, "s3")["location"].Str)
	again := verifyAll(t, s.h, host.VerifyOptions{})
	only(t, again, host.FindingOrphan)
}

func entries(v abi.Value) map[string]string {
	out := map[string]string{}
	for k, e := range v.Map {
		out[k] = e.Str
	}
	return out
}
