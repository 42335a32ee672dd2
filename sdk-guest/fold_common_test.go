package guest_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// commonStep is testProjection without effects, so that the run loop takes
// its inline common step (an existing row, one source, no effects), which
// keeps the state in local slots between events.
func commonStep() *guest.Plugin {
	p := testProjection
	p.Effects = nil
	return guest.MustNew(p)
}

func evolveCommon(t *testing.T, state abi.Item, events ...abi.SourcedEvent) *abi.EvolveResponse {
	t.Helper()
	resp, err := commonStep().Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1", State: state, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestW2_CommonStepKeepsStateAcrossOutcomes(t *testing.T) {
	r := evolveCommon(t, nil, inc(1, "2"), inc(2, "3"), ev(3, "Skip", nil), inc(4, "5"), ev(5, "Reject", nil),
		inc(6, "1"), ev(7, "Remove", nil), inc(8, "4"), inc(9, "1"), ev(10, "Fail", nil), inc(11, "100"))
	sameOutcomes(t, r, abi.Applied, abi.Applied, abi.Skipped, abi.Applied, abi.Rejected,
		abi.Applied, abi.Applied, abi.Applied, abi.Applied, abi.Failed)
	if !r.Decisions[6].Remove || r.Removed {
		t.Fatalf("remove then restart: %+v", r.Decisions[6])
	}
	// Restarted from the initial state after the removal: 4 + 1.
	if r.State["n"].Str != "5" || len(r.State["log"].List) != 2 || r.Item["n"].Str != "5" {
		t.Fatalf("state %v item %v", r.State, r.Item)
	}
	// From a stored row, every event on the common step.
	r = evolveCommon(t, abi.Item{"id": abi.S("c-1"), "n": abi.N("40")}, inc(10, "1"), inc(11, "1"), ev(12, "Skip", nil), inc(13, "1"))
	sameOutcomes(t, r, abi.Applied, abi.Applied, abi.Skipped, abi.Applied)
	if r.State["n"].Str != "43" || len(r.State["log"].List) != 3 {
		t.Fatalf("state %v", r.State)
	}
}

func TestW2_CommonStepPanicKeepsState(t *testing.T) {
	r := evolveCommon(t, nil, inc(1, "1"), inc(2, "2"), inc(3, "4"), ev(4, "Panic", nil), inc(5, "8"))
	sameOutcomes(t, r, abi.Applied, abi.Applied, abi.Applied, abi.Failed)
	if e := r.Decisions[3].Error; e == nil || e.Tag != "Panic" {
		t.Fatalf("panic error %v", e)
	}
	if r.State["n"].Str != "7" || len(r.State["log"].List) != 3 {
		t.Fatalf("state %v", r.State)
	}
	// A failure on the common step leaves the state as it was before it.
	r = evolveCommon(t, nil, inc(1, "1"), inc(2, "2"), ev(3, "Fail", nil))
	sameOutcomes(t, r, abi.Applied, abi.Applied, abi.Failed)
	if r.State["n"].Str != "3" {
		t.Fatalf("state %v", r.State)
	}
}

// TestW2_RunReadsEverySourceNameAndLongFields folds the same run through
// projections whose stream names take the run loop's one-word check (up to
// 7 bytes) and its way out (8 bytes and more), with the source named, left
// empty, and with stream ids too long for the inline reader: the states are
// the same, and a source the projection does not have is a guest-level
// error naming it.
func TestW2_RunReadsEverySourceNameAndLongFields(t *testing.T) {
	long := strings.Repeat("x", 200)
	var want string
	for _, stream := range []string{"C", "Counter", "Counters", "CounterEventsOfALongName"} {
		for _, source := range []string{stream, ""} {
			for _, id := range []string{"c-1", long} {
				p := testProjection
				p.Stream, p.Effects = stream, nil
				var run []abi.SourcedEvent
				for v, by := range []string{"1", "2", "4"} {
					e := inc(uint64(v+1), by)
					e.Source, e.Event.Stream, e.Event.StreamID = source, stream, id
					run = append(run, e)
				}
				resp, err := guest.MustNew(p).Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#"+id, "sk", "C"), StreamID: id,
					State: abi.Item{"id": abi.S(id), "n": abi.N("10")}, Events: run})
				if err != nil {
					t.Fatalf("stream %q source %q: %v", stream, source, err)
				}
				sameOutcomes(t, resp, abi.Applied, abi.Applied, abi.Applied)
				got := resp.State["n"].Str + "/" + strconv.Itoa(len(resp.State["log"].List))
				if want == "" {
					want = got
				}
				if got != want || got != "17/3" {
					t.Errorf("stream %q source %q id %d bytes: state %s, want 17/3", stream, source, len(id), got)
				}
			}
		}
	}
	// One run whose events take the common loop, leave it and come back.
	p := testProjection
	p.Effects = nil
	var run []abi.SourcedEvent
	for v, id := range []string{"c-1", "c-1", long, "c-1", long, long, "c-1"} {
		e := inc(uint64(v+1), "1")
		e.Event.StreamID = id
		run = append(run, e)
	}
	run = append(run, ev(8, "Skip", nil), inc(9, "1"), ev(10, "Remove", nil), inc(11, "5"), inc(12, "1"))
	resp, err := guest.MustNew(p).Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1",
		State: abi.Item{"id": abi.S("c-1"), "n": abi.N("10")}, Events: run})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Decisions) != 12 || resp.Decisions[7].Outcome != abi.Skipped || !resp.Decisions[9].Remove {
		t.Fatalf("decisions %+v", resp.Decisions)
	}
	if resp.State["n"].Str != "6" { // 10 + 8, removed, then 5 + 1 from the initial state
		t.Errorf("mixed run: state %v, want n=6", resp.State)
	}
	e := inc(1, "1")
	e.Source = "Other"
	_, err = guest.MustNew(p).Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1", Events: []abi.SourcedEvent{e}})
	if err == nil || !strings.Contains(err.Error(), `"Other"`) {
		t.Errorf("an unknown source: err %v", err)
	}
}
