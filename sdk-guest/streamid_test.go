package guest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type tenantOrder struct {
	Tenant string   `ddb:"tenant"`
	Order  string   `ddb:"order"`
	Seen   []string `ddb:"seen"`
}

// tenantOrders keys and folds by the fields of a two-field stream id
// (tenantId#orderId), declared as Composite, in key, evolve, effects and
// toItem.
var tenantOrders = guest.MultiProjection[tenantOrder]{
	Name: "tenant-orders", Version: "1",
	Initial: func(key guest.Key) tenantOrder { return tenantOrder{} },
	Sources: []guest.Source[tenantOrder]{{
		Name: "order", Stream: "Order", Composite: []string{"tenantId", "orderId"},
		Key: func(_ string, e guest.Event) (guest.Key, bool) {
			f, err := e.StreamKey()
			if err != nil {
				panic(err)
			}
			return guest.StringKey("pk", "Tenant#"+f["tenantId"], "sk", "Order#"+f["orderId"]), true
		},
		Evolve: func(s tenantOrder, e guest.Event, ctx guest.SourceContext) (tenantOrder, error) {
			f, err := ctx.StreamKey()
			if err != nil {
				return s, err
			}
			g, err := e.StreamKey()
			if err != nil || g["orderId"] != f["orderId"] {
				return s, guest.Errorf("Mismatch", "event %v context %v: %v", g, f, err)
			}
			s.Tenant, s.Order = f["tenantId"], f["orderId"]
			s.Seen = append(s.Seen, e.Type)
			return s, nil
		},
	}},
	Effects: func(e guest.Event, next *tenantOrder, ctx guest.EffectContext) []any {
		f, err := ctx.StreamKey()
		if err != nil {
			return []any{map[string]string{"error": err.Error()}}
		}
		return []any{map[string]string{"tenant": f["tenantId"]}}
	},
}

// TestES1_StreamIDFieldsReachKeyEvolveAndEffects: with the composite
// fields declared, key, evolve (event and context) and effects see the
// stream id as fields.
func TestES1_StreamIDFieldsReachKeyEvolveAndEffects(t *testing.T) {
	p := guest.MustNew(tenantOrders)
	ev := abi.Event{Stream: "Order", StreamID: "acme#o-7", Version: 1, Type: "Placed", Data: abi.Item{"_tag": abi.S("Placed")}}
	k, err := p.Key(&abi.KeyRequest{Source: "order", Events: []abi.Event{ev}})
	if err != nil || k.Keys[0].Error != nil || k.Keys[0].Key["pk"].Str != "Tenant#acme" || k.Keys[0].Key["sk"].Str != "Order#o-7" {
		t.Fatalf("key %+v %v", k, err)
	}
	r, err := p.Evolve(&abi.EvolveRequest{Key: k.Keys[0].Key, Events: []abi.SourcedEvent{{Source: "order", Event: ev}}})
	if err != nil {
		t.Fatal(err)
	}
	sameOutcomes(t, r, abi.Applied)
	if r.State["tenant"].Str != "acme" || r.State["order"].Str != "o-7" {
		t.Fatalf("state %v", r.State)
	}
	if fx := r.Decisions[0].Effects; len(fx) != 1 || fx[0].Map["tenant"].Str != "acme" {
		t.Fatalf("effects %v", fx)
	}
	// A redelivered id that does not split (a '#' inside a value) fails the event, naming the id.
	bad := ev
	bad.StreamID = "acme#o#7"
	r, err = p.Evolve(&abi.EvolveRequest{Key: k.Keys[0].Key, Events: []abi.SourcedEvent{{Source: "order", Event: bad}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Decisions[0]; d.Outcome != abi.Failed || !strings.Contains(d.Error.Message, `"acme#o#7"`) {
		t.Fatalf("decision %+v, want Failed naming the id", d)
	}
}

// TestES1_ParseStreamIDRules: one field takes the id whole; several split
// exactly; empty values, wrong counts and undeclared fields are errors.
func TestES1_ParseStreamIDRules(t *testing.T) {
	f, err := guest.ParseStreamID("a#b", "only")
	if err != nil || f["only"] != "a#b" {
		t.Errorf("single field: %v %v", f, err)
	}
	f, err = guest.ParseStreamID("t#o", "tenantId", "orderId")
	if err != nil || f["tenantId"] != "t" || f["orderId"] != "o" {
		t.Errorf("two fields: %v %v", f, err)
	}
	for _, id := range []string{"t#o#x", "t", "#o", "t#"} {
		var se *guest.StreamIDError
		if _, err := guest.ParseStreamID(id, "tenantId", "orderId"); !errors.As(err, &se) || se.StreamID != id {
			t.Errorf("%q: %v, want *StreamIDError", id, err)
		}
	}
	if _, err := guest.NewEvent(abi.Event{StreamID: "x"}).StreamKey(); err == nil || !strings.Contains(err.Error(), "Composite") {
		t.Errorf("undeclared: %v, want a hint to declare Composite", err)
	}
	if f, err := guest.NewEvent(abi.Event{StreamID: "x#y"}).WithComposite("a", "b").StreamKey(); err != nil || f["b"] != "y" {
		t.Errorf("WithComposite: %v %v", f, err)
	}
}
