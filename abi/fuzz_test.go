package abi

import "testing"

// One fuzz target per decoder: decoding arbitrary bytes must return an error
// or a message, never panic; what decodes must re-encode and decode again.

func seeds(f *testing.F, enc ...[]byte) {
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	for _, b := range enc {
		f.Add(b)
	}
}

func FuzzDecodeValue(f *testing.F) {
	seeds(f, AppendValue(nil, M(everyKind())))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeValue(b)
		if err == nil {
			if _, err := DecodeValue(AppendValue(nil, v)); err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
		}
		r := NewReader(string(b))
		_, _ = r.RawOptItem()
		_ = r.RawValue()
	})
}

func FuzzDecodeDescription(f *testing.F) {
	seeds(f, AppendDescription(nil, &Description{Name: "n", Sources: []SourceDesc{{Name: "s", EventTypes: []string{"A"}}}, Capabilities: []string{"key"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := DecodeDescription(b); err == nil {
			if _, err := DecodeDescription(AppendDescription(nil, d)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeKeyRequest(f *testing.F) {
	ev := sampleEvent(1)
	seeds(f, AppendKeyRequest(nil, &KeyRequest{Source: "s", Events: []Event{ev, ev}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := DecodeKeyRequest(b); err == nil {
			if _, err := DecodeKeyRequest(AppendKeyRequest(nil, q)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeKeyResponse(f *testing.F) {
	seeds(f, AppendKeyResponse(nil, &KeyResponse{Keys: []KeyResult{{Key: Item{"pk": S("a")}}, {Error: &Error{Tag: "x"}}, {}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := DecodeKeyResponse(b); err == nil {
			if _, err := DecodeKeyResponse(AppendKeyResponse(nil, p)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeEvolveRequest(f *testing.F) {
	seeds(f, AppendEvolveRequest(nil, &EvolveRequest{Key: Item{"pk": S("a")}, State: everyKind(),
		Events: []SourcedEvent{{Source: "s", Event: sampleEvent(1)}, {Source: "s", Event: sampleEvent(2)}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := DecodeEvolveRequest(b); err == nil {
			if _, err := DecodeEvolveRequest(AppendEvolveRequest(nil, q)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeEvolveResponse(f *testing.F) {
	seeds(f, AppendEvolveResponse(nil, &EvolveResponse{State: everyKind(), Item: Item{"a": N("1")}, Decisions: []Decision{
		{Outcome: Applied, Effects: []Value{M(Item{"k": S("v")})}}, {Outcome: Rejected, Error: &Error{Tag: "x"}}, {Outcome: Skipped}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := DecodeEvolveResponse(b); err == nil {
			if _, err := DecodeEvolveResponse(AppendEvolveResponse(nil, p)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeParts(f *testing.F) {
	ev := sampleEvent(1)
	seeds(f,
		AppendInitialRequest(nil, &InitialRequest{Source: "s", Key: Item{"pk": S("a")}, Event: &ev}),
		AppendTerminalRequest(nil, &TerminalRequest{Source: "s", Error: Error{Tag: "T"}}),
		AppendToItemRequest(nil, &ToItemRequest{State: everyKind()}),
		AppendEffectsRequest(nil, &EffectsRequest{Source: "s", Event: ev, Next: Item{}}),
		AppendEffectsResponse(nil, &EffectsResponse{Effects: []Value{S("x")}}),
		AppendSelfTestResponse(nil, &SelfTestResponse{Failures: []string{"f"}}),
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeInitialRequest(b)
		_, _ = DecodeInitialResponse(b)
		_, _ = DecodeTerminalRequest(b)
		_, _ = DecodeTerminalResponse(b)
		_, _ = DecodeToItemRequest(b)
		_, _ = DecodeToItemResponse(b)
		_, _ = DecodeEffectsRequest(b)
		_, _ = DecodeEffectsResponse(b)
		_, _ = DecodeSelfTestResponse(b)
	})
}
