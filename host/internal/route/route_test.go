package route

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestB6_EachEventGoesToEveryProjectionOfItsStream(t *testing.T) {
	tbl := New(map[string][]string{
		"summaries": {"Order"},
		"audit":     {"Order", "Sensor"},
		"zones":     {"Sensor"},
	}, []string{"Order", "Payment"})
	evs := []Event{
		{Pos: 0, Event: abi.Event{Stream: "Order", StreamID: "o-1", Version: 1}},
		{Pos: 1, Event: abi.Event{Stream: "Sensor", StreamID: "s-1", Version: 1}},
		{Pos: 2, Event: abi.Event{Stream: "Payment", StreamID: "p-1", Version: 1}},
		{Pos: 3, Event: abi.Event{Stream: "Other", StreamID: "x", Version: 1}},
	}
	r := tbl.Route(evs)
	want := map[string][]int{"summaries": {0}, "audit": {0, 1}, "zones": {1}}
	for p, pos := range want {
		got := r.ByProjection[p]
		if len(got) != len(pos) {
			t.Fatalf("%s: got %d events, want %d", p, len(got), len(pos))
		}
		for i := range pos {
			if got[i].Pos != pos[i] {
				t.Errorf("%s[%d]: position %d, want %d", p, i, got[i].Pos, pos[i])
			}
		}
	}
	if len(r.Unrouted) != 2 || r.Unrouted[0].Pos != 0 || r.Unrouted[1].Pos != 2 {
		t.Fatalf("unrouted = %+v, want the Order and Payment events at positions 0 and 2", r.Unrouted)
	}
}
