package guest_test

import (
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type counter struct {
	ID     string   `ddb:"id"`
	N      int64    `ddb:"n"`
	Log    []string `ddb:"log"`
	Hidden string   `ddb:"-"`
}

type delta struct {
	By int64 `ddb:"by"`
}

var errBad = errors.New("bad")

// testProjection folds "Inc" (by), "Skip", "Reject" (terminal), "Fail"
// (not terminal), "Remove", "Panic" and "Typed" (a Tagged error, terminal).
var testProjection = guest.Projection[counter]{
	Name: "counter", Version: "0.1.0", Stream: "C", EventTypes: []string{"Inc"},
	Key: func(streamID string, e guest.Event) (guest.Key, bool) {
		if e.Type == "Ignore" {
			return nil, false
		}
		if e.Type == "Panic" {
			panic("key boom")
		}
		return guest.StringKey("pk", "C#"+streamID, "sk", "C"), true
	},
	Initial: func(streamID string, _ guest.Event) counter { return counter{ID: streamID} },
	Evolve: func(s counter, e guest.Event) (counter, error) {
		switch e.Type {
		case "Inc":
			var d delta
			if err := e.Decode(&d); err != nil {
				return s, err
			}
			s.N += d.By
			s.Log = append(s.Log, e.Type)
			return s, nil
		case "Skip":
			return s, guest.Skip
		case "Reject":
			return s, guest.Errorf("Rejectable", "v%d", e.Version)
		case "Typed":
			return s, typedErr{}
		case "Fail":
			return s, errBad
		case "Remove":
			return s, guest.RemoveRow
		case "Panic":
			panic("evolve boom")
		}
		return s, nil
	},
	Terminal: func(err error) bool { return guest.HasTag(err, "Rejectable") || errors.As(err, &typedErr{}) },
	ToItem: func(s counter, ctx guest.ItemContext) any {
		return map[string]any{"id": s.ID, "n": s.N, "stream": ctx.StreamID, "pk": ctx.Key()["pk"]}
	},
	Effects: func(e guest.Event, next *counter, ctx guest.EffectContext) []any {
		if next == nil {
			return []any{map[string]any{"removed": ctx.StreamID}}
		}
		return []any{struct {
			N int64  `ddb:"n"`
			V uint64 `ddb:"v"`
		}{next.N, e.Version}}
	},
}

type typedErr struct{}

func (typedErr) Error() string { return "typed" }
func (typedErr) Tag() string   { return "Typed" }

func ev(v uint64, typ string, data abi.Item) abi.SourcedEvent {
	if data == nil {
		data = abi.Item{}
	}
	data["_tag"] = abi.S(typ)
	return abi.SourcedEvent{Source: "C", Event: abi.Event{Stream: "C", StreamID: "c-1", Version: v, Type: typ, Data: data}}
}

func inc(v uint64, by string) abi.SourcedEvent { return ev(v, "Inc", abi.Item{"by": abi.N(by)}) }

func evolve(t *testing.T, state abi.Item, events ...abi.SourcedEvent) *abi.EvolveResponse {
	t.Helper()
	p := guest.MustNew(testProjection)
	resp, err := p.Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1", State: state, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func outcomes(r *abi.EvolveResponse) []abi.Outcome {
	var o []abi.Outcome
	for _, d := range r.Decisions {
		o = append(o, d.Outcome)
	}
	return o
}

func sameOutcomes(t *testing.T, r *abi.EvolveResponse, want ...abi.Outcome) {
	t.Helper()
	got := outcomes(r)
	if len(got) != len(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
}

func TestW2_EvolveRunDecisions(t *testing.T) {
	r := evolve(t, nil, inc(1, "2"), ev(2, "Skip", nil), ev(3, "Reject", nil), inc(4, "3"), ev(5, "Typed", nil), ev(6, "Fail", nil), inc(7, "100"))
	sameOutcomes(t, r, abi.Applied, abi.Skipped, abi.Rejected, abi.Applied, abi.Rejected, abi.Failed)
	if r.State["n"].Str != "5" || r.State["id"].Str != "c-1" {
		t.Fatalf("state %v", r.State)
	}
	if _, ok := r.State["hidden"]; ok {
		t.Fatal("ddb:\"-\" field stored")
	}
	if l := r.State["log"]; l.Kind != abi.KindL || len(l.List) != 2 {
		t.Fatalf("log %v", l)
	}
	if e := r.Decisions[2].Error; e == nil || e.Tag != "Rejectable" || e.Message != "v3" {
		t.Fatalf("rejected error %v", e)
	}
	if e := r.Decisions[4].Error; e == nil || e.Tag != "Typed" {
		t.Fatalf("typed error %v", e)
	}
	if e := r.Decisions[5].Error; e == nil || e.Tag != "Error" || e.Message != "bad" {
		t.Fatalf("failed error %v", e)
	}
	if fx := r.Decisions[3].Effects; len(fx) != 1 || fx[0].Map["n"].Str != "5" || fx[0].Map["v"].Str != "4" {
		t.Fatalf("effects %v", fx)
	}
	if len(r.Decisions[1].Effects)+len(r.Decisions[2].Effects) != 0 {
		t.Fatal("skipped or rejected events produced effects")
	}
	if r.Item["stream"].Str != "c-1" || r.Item["pk"].Str != "C#c-1" || r.Item["n"].Str != "5" {
		t.Fatalf("item %v", r.Item)
	}
}

func TestP3_RejectedAloneNeverCreates(t *testing.T) {
	r := evolve(t, nil, ev(1, "Reject", nil), ev(2, "Skip", nil), ev(3, "Reject", nil))
	sameOutcomes(t, r, abi.Rejected, abi.Skipped, abi.Rejected)
	if r.State != nil || r.Item != nil || r.Removed {
		t.Fatalf("row created: %v %v", r.State, r.Item)
	}
	// Once it exists, state evolves from what was read.
	r = evolve(t, abi.Item{"id": abi.S("c-1"), "n": abi.N("40"), "version": abi.N("9")}, ev(10, "Reject", nil), inc(11, "2"))
	sameOutcomes(t, r, abi.Rejected, abi.Applied)
	if r.State["n"].Str != "42" {
		t.Fatalf("state %v", r.State)
	}
}

func TestT1_RemoveRowThenRestartFromInitial(t *testing.T) {
	r := evolve(t, abi.Item{"id": abi.S("c-1"), "n": abi.N("7")}, ev(8, "Remove", nil))
	sameOutcomes(t, r, abi.Applied)
	if !r.Decisions[0].Remove || !r.Removed || r.State != nil || r.Item != nil {
		t.Fatalf("remove: %+v", r)
	}
	if fx := r.Decisions[0].Effects; len(fx) != 1 || fx[0].Map["removed"].Str != "c-1" {
		t.Fatalf("remove effects %v", fx)
	}
	r = evolve(t, abi.Item{"id": abi.S("c-1"), "n": abi.N("7")}, ev(8, "Remove", nil), inc(9, "1"))
	sameOutcomes(t, r, abi.Applied, abi.Applied)
	if r.Removed || r.State["n"].Str != "1" {
		t.Fatalf("restart from initial: %+v", r.State)
	}
}

func TestW2_PanicFailsTheEventNotTheCall(t *testing.T) {
	r := evolve(t, nil, inc(1, "1"), ev(2, "Panic", nil), inc(3, "1"))
	sameOutcomes(t, r, abi.Applied, abi.Failed)
	if e := r.Decisions[1].Error; e == nil || e.Tag != "Panic" || e.Message != "evolve boom" {
		t.Fatalf("panic error %v", e)
	}
	if r.State["n"].Str != "1" {
		t.Fatalf("state %v", r.State)
	}
	p := guest.MustNew(testProjection)
	k, err := p.Key(&abi.KeyRequest{Source: "C", Events: []abi.Event{inc(1, "1").Event, ev(2, "Ignore", nil).Event, ev(3, "Panic", nil).Event}})
	if err != nil {
		t.Fatal(err)
	}
	if k.Keys[0].Key["pk"].Str != "C#c-1" || k.Keys[1].Key != nil || k.Keys[1].Error != nil || k.Keys[2].Error == nil || k.Keys[2].Error.Tag != "Panic" {
		t.Fatalf("keys %+v", k.Keys)
	}
}

func TestW2_GuestLevelErrors(t *testing.T) {
	p := guest.MustNew(testProjection)
	if _, err := p.Evolve(&abi.EvolveRequest{Events: []abi.SourcedEvent{{Source: "Nope", Event: inc(1, "1").Event}}}); err == nil {
		t.Fatal("unknown source accepted")
	}
	if _, err := p.Evolve(&abi.EvolveRequest{State: abi.Item{"n": abi.S("not a number")}, Events: []abi.SourcedEvent{inc(1, "1")}}); err == nil {
		t.Fatal("state that does not map accepted")
	}
	var ce *guest.CallError
	if _, err := p.Call("evolve", "\xff\xff", nil); !errors.As(err, &ce) {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := guest.New(guest.Projection[counter]{Name: "x"}); err == nil {
		t.Fatal("incomplete projection built")
	}
	r := evolve(t, nil, ev(1, "Inc", abi.Item{"by": abi.S("x")}))
	sameOutcomes(t, r, abi.Failed)
}

func TestW2_OptionalExports(t *testing.T) {
	p := guest.MustNew(testProjection)
	e := inc(1, "1").Event
	ini, err := p.Initial(&abi.InitialRequest{Source: "C", StreamID: "c-9", Event: &e})
	if err != nil || ini.State["id"].Str != "c-9" || ini.State["n"].Str != "0" {
		t.Fatalf("initial %v %v", ini, err)
	}
	term, err := p.Terminal(&abi.TerminalRequest{Source: "C", Error: abi.Error{Tag: "Rejectable"}})
	if err != nil || !term.Accept {
		t.Fatalf("terminal %v %v", term, err)
	}
	term, err = p.Terminal(&abi.TerminalRequest{Source: "C", Error: abi.Error{Tag: "Other"}})
	if err != nil || term.Accept {
		t.Fatalf("terminal %v %v", term, err)
	}
	it, err := p.ToItem(&abi.ToItemRequest{State: abi.Item{"id": abi.S("a"), "n": abi.N("3")}, StreamID: "a", Key: abi.Item{"pk": abi.S("C#a")}})
	if err != nil || it.Item["n"].Str != "3" || it.Item["pk"].Str != "C#a" {
		t.Fatalf("to_item %v %v", it, err)
	}
	fx, err := p.Effects(&abi.EffectsRequest{Source: "C", StreamID: "a", Event: e, Next: abi.Item{"n": abi.N("4")}})
	if err != nil || len(fx.Effects) != 1 || fx.Effects[0].Map["n"].Str != "4" {
		t.Fatalf("effects %v %v", fx, err)
	}
	d := p.Describe()
	if d.Name != "counter" || d.ABIMajor != abi.VersionMajor || len(d.Sources) != 1 || d.Sources[0].Stream != "C" || !d.Has(abi.CapEvolve) {
		t.Fatalf("describe %+v", d)
	}
}

func TestW2_EventAccessors(t *testing.T) {
	e := guest.NewEvent(abi.Event{Data: abi.Item{"_tag": abi.S("X"), "s": abi.S("str"), "n": abi.N("12.5"), "i": abi.N("-7"),
		"b": abi.Bool(true), "l": abi.L(abi.S("x")), "z": abi.Null()}})
	if s, ok := e.Str("s"); !ok || s != "str" {
		t.Fatalf("Str %q %v", s, ok)
	}
	if f, ok := e.Float("n"); !ok || f != 12.5 {
		t.Fatalf("Float %v %v", f, ok)
	}
	if n, ok := e.Num("n"); !ok || n != "12.5" {
		t.Fatalf("Num %v %v", n, ok)
	}
	if i, ok := e.Int("i"); !ok || i != -7 {
		t.Fatalf("Int %v %v", i, ok)
	}
	if b, ok := e.Bool("b"); !ok || !b {
		t.Fatalf("Bool %v %v", b, ok)
	}
	if _, ok := e.Str("n"); ok {
		t.Fatal("Str of an N")
	}
	if _, ok := e.Str("missing"); ok {
		t.Fatal("Str of a missing attribute")
	}
	if _, ok := e.Int("n"); ok {
		t.Fatal("Int of 12.5")
	}
	if _, ok := (&guest.Event{}).Str("s"); ok {
		t.Fatal("Str of an event without data")
	}
}
