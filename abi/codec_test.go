package abi

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func everyKind() Item {
	return Item{
		"s":         S("héllo"),
		"empty":     S(""),
		"n":         N("12345678901234567890123456789012345678"),
		"nfrac":     N("-0.000000000000000000000000000000000001"),
		"nexp":      N("1.5E+125"),
		"b":         B([]byte{0, 1, 2, 255}),
		"bempty":    B([]byte{}),
		"t":         Bool(true),
		"f":         Bool(false),
		"null":      Null(),
		"m":         M(Item{"inner": M(Item{"deep": L(N("1"), S("x"), M(nil))}), "l": L()}),
		"emptyM":    M(nil),
		"emptyL":    L(),
		"l":         L(S("a"), N("2"), L(L(Null())), M(Item{"k": BS([]byte("z"))})),
		"ss":        SS("a", "b", ""),
		"ns":        NS("1", "99999999999999999999999999999999999999", "-3.25"),
		"bs":        BS([]byte("x"), []byte{}, []byte{9}),
		"u\x00\xff": S("odd name"),
	}
}

func TestW1_CodecRoundTripEveryType(t *testing.T) {
	it := everyKind()
	for name, v := range it {
		got, err := DecodeValue(AppendValue(nil, v))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !got.Equal(v) || got.Kind != v.Kind {
			t.Fatalf("%s: got %#v, want %#v", name, got, v)
		}
		if v.Kind == KindN && got.Str != v.Str {
			t.Fatalf("%s: number text changed: %q", name, got.Str)
		}
	}
	got, err := DecodeOptItem(AppendOptItem(nil, it))
	if err != nil || !ItemsEqual(got, it) {
		t.Fatalf("item round trip: %v\n%#v", err, got)
	}
	// nil and empty items stay distinct.
	if got, err := DecodeOptItem(AppendOptItem(nil, nil)); err != nil || got != nil {
		t.Fatalf("nil item: %v %v", got, err)
	}
	if got, err := DecodeOptItem(AppendOptItem(nil, Item{})); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty item: %v %v", got, err)
	}
	// Encoding is deterministic.
	a, b := AppendOptItem(nil, it), AppendOptItem(nil, CloneItem(it))
	if string(a) != string(b) {
		t.Fatal("encoding of equal items differs")
	}
	// A zero Value (absent) round-trips too.
	if got, err := DecodeValue(AppendValue(nil, Value{})); err != nil || !got.IsZero() {
		t.Fatalf("zero value: %v %v", got, err)
	}
}

func sampleEvent(v uint64) Event {
	return Event{Stream: "Order", StreamID: "o-1", Version: v, Type: "ItemAdded",
		Data:      Item{"_tag": S("ItemAdded"), "sku": S("A"), "price": N("12.5")},
		Metadata:  Item{"trace": S("t")},
		Timestamp: "2026-01-01T00:00:00.000Z"}
}

func TestW1_CodecRoundTripMessages(t *testing.T) {
	d := &Description{Name: "order-summary", Version: "1.2.3", ABIMajor: 1, ABIMinor: 0,
		Sources:      []SourceDesc{{Name: "order", Stream: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded"}, Mode: ModeFold}},
		Capabilities: []Capability{CapDescribe, CapKey, CapEvolve}}
	gd, err := DecodeDescription(AppendDescription(nil, d))
	check(t, err, gd, d)

	kq := &KeyRequest{Source: "order", Events: []Event{sampleEvent(1), {Stream: "Order", StreamID: "o-2", Version: 1 << 40}}}
	gkq, err := DecodeKeyRequest(AppendKeyRequest(nil, kq))
	checkDeep(t, err, gkq, kq)

	kp := &KeyResponse{Keys: []KeyResult{{Key: Item{"pk": S("a"), "sk": S("b")}}, {}, {Error: &Error{Tag: "Panic", Message: "boom"}}}}
	gkp, err := DecodeKeyResponse(AppendKeyResponse(nil, kp))
	checkDeep(t, err, gkp, kp)

	eq := &EvolveRequest{Key: Item{"pk": S("a")}, StreamID: "o-1", State: Item{"total": N("3")},
		Events: []SourcedEvent{{Source: "order", Event: sampleEvent(1)}, {Source: "order", Event: sampleEvent(2)}}}
	geq, err := DecodeEvolveRequest(AppendEvolveRequest(nil, eq))
	checkDeep(t, err, geq, eq)

	ep := &EvolveResponse{State: Item{"a": N("1")}, Removed: true, Item: Item{"a": N("1"), "g": S("x")},
		Decisions: []Decision{{Outcome: Applied, Effects: []Value{M(Item{"k": S("v")})}}, {Outcome: Applied, Remove: true},
			{Outcome: Skipped}, {Outcome: Rejected, Error: &Error{Tag: "ZoneNotPlaced"}}, {Outcome: Failed, Error: &Error{Tag: "Boom", Message: "m"}}}}
	gep, err := DecodeEvolveResponse(AppendEvolveResponse(nil, ep))
	checkDeep(t, err, gep, ep)

	ev := sampleEvent(3)
	iq := &InitialRequest{Source: "s", StreamID: "o", Key: Item{"pk": S("k")}, Event: &ev}
	giq, err := DecodeInitialRequest(AppendInitialRequest(nil, iq))
	checkDeep(t, err, giq, iq)
	ip := &InitialResponse{State: Item{"x": Null()}}
	gip, err := DecodeInitialResponse(AppendInitialResponse(nil, ip))
	checkDeep(t, err, gip, ip)
	tq := &TerminalRequest{Source: "s", Error: Error{Tag: "T", Message: "m"}}
	gtq, err := DecodeTerminalRequest(AppendTerminalRequest(nil, tq))
	checkDeep(t, err, gtq, tq)
	tp := &TerminalResponse{Accept: true}
	gtp, err := DecodeTerminalResponse(AppendTerminalResponse(nil, tp))
	checkDeep(t, err, gtp, tp)
	oq := &ToItemRequest{State: Item{"a": S("b")}, StreamID: "o", Key: Item{"pk": S("p")}}
	goq, err := DecodeToItemRequest(AppendToItemRequest(nil, oq))
	checkDeep(t, err, goq, oq)
	op := &ToItemResponse{Item: Item{"a": S("b")}}
	gop, err := DecodeToItemResponse(AppendToItemResponse(nil, op))
	checkDeep(t, err, gop, op)
	fq := &EffectsRequest{Source: "s", StreamID: "o", Key: Item{"pk": S("p")}, Event: sampleEvent(4), Next: nil}
	gfq, err := DecodeEffectsRequest(AppendEffectsRequest(nil, fq))
	checkDeep(t, err, gfq, fq)
	fp := &EffectsResponse{Effects: []Value{S("x"), M(Item{"n": N("1")})}}
	gfp, err := DecodeEffectsResponse(AppendEffectsResponse(nil, fp))
	checkDeep(t, err, gfp, fp)
	sp := &SelfTestResponse{Failures: []string{"a", "b"}}
	gsp, err := DecodeSelfTestResponse(AppendSelfTestResponse(nil, sp))
	checkDeep(t, err, gsp, sp)
}

func check(t *testing.T, err error, got, want any) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// checkDeep compares after normalising: DeepEqual is exact here because the
// decoders produce the same nil/empty shapes the fixtures use.
func checkDeep(t *testing.T, err error, got, want any) { t.Helper(); check(t, err, got, want) }

func TestW1_CodecRejectsGarbage(t *testing.T) {
	cases := map[string][]byte{
		"huge string length":  {byte(KindS), 0xff, 0xff, 0xff, 0xff, 0x0f},
		"huge list count":     {byte(KindL), 0xff, 0xff, 0xff, 0xff, 0x0f},
		"varint overflow":     {byte(KindS), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"unknown kind":        {99},
		"bad bool":            {byte(KindBOOL), 2},
		"truncated":           {byte(KindS), 5, 'a'},
		"trailing":            {byte(KindNULL), 0},
		"duplicate attribute": {byte(KindM), 2, 1, 'a', byte(KindNULL), 1, 'a', byte(KindNULL)},
	}
	for name, b := range cases {
		if _, err := DecodeValue(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	deep := []byte{}
	for i := 0; i < MaxDepth+5; i++ {
		deep = append(deep, byte(KindL), 1)
	}
	deep = append(deep, byte(KindNULL))
	if _, err := DecodeValue(deep); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Fatalf("deep nesting: %v", err)
	}
	if _, err := DecodeEvolveResponse([]byte{9, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Fatal("unknown outcome decoded")
	}
}

func TestW1_ABIDocExamples(t *testing.T) {
	for want, it := range map[string]Item{
		"00":                 nil,
		"01":                 {},
		"0202706b010161":     {"pk": S("a")},
		"02016e020431322e35": {"n": N("12.5")},
	} {
		if got := fmt.Sprintf("%x", AppendOptItem(nil, it)); got != want {
			t.Errorf("%v: got %s, want %s", it, got, want)
		}
	}
}

// TestW1_EvolveRequestOmitStateIsAMinorAddition: the 1.1 flags byte follows
// the events, is written only when set, and a 1.0 request (no byte) reads
// as OmitState false; a decoder that stops after the events (1.0) reads the
// same fields from a 1.1 request.
func TestW1_EvolveRequestOmitStateIsAMinorAddition(t *testing.T) {
	q := &EvolveRequest{Key: Item{"pk": S("a")}, StreamID: "o-1",
		Events: []SourcedEvent{{Source: "order", Event: sampleEvent(1)}}}
	v10 := AppendEvolveRequest(nil, q)
	q.OmitState = true
	v11 := AppendEvolveRequest(nil, q)
	if len(v11) != len(v10)+1 || string(v11[:len(v10)]) != string(v10) || v11[len(v10)] != EvolveFlagOmitState {
		t.Fatalf("1.1 request is not the 1.0 request plus one flags byte:\n1.0 %x\n1.1 %x", v10, v11)
	}
	got, err := DecodeEvolveRequest(v11)
	checkDeep(t, err, got, q)
	got, err = DecodeEvolveRequest(v10)
	if err != nil || got.OmitState {
		t.Fatalf("1.0 request: OmitState %v, err %v", got.OmitState, err)
	}
}
