package abi

import "testing"

func seeds(f *testing.F, enc ...[]byte) {
	f.Add([]byte{})
	f.Add([]byte{0})
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
	})
}

func FuzzDecodeMessages(f *testing.F) {
	ev := sampleEvent(1)
	seeds(f,
		AppendEvolveRequest(nil, &EvolveRequest{Key: Item{"pk": S("a")}, State: everyKind(), Events: []SourcedEvent{{Source: "s", Event: ev}}}),
		AppendEvolveResponse(nil, &EvolveResponse{State: everyKind(), Decisions: []Decision{{Outcome: Rejected, Error: &Error{Tag: "x"}}}}),
		AppendKeyRequest(nil, &KeyRequest{Source: "s", Events: []Event{ev}}),
		AppendDescription(nil, &Description{Name: "n", Sources: []SourceDesc{{Name: "s"}}}),
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeDescription(b)
		_, _ = DecodeKeyRequest(b)
		_, _ = DecodeKeyResponse(b)
		_, _ = DecodeEvolveRequest(b)
		_, _ = DecodeEvolveResponse(b)
		_, _ = DecodeInitialRequest(b)
		_, _ = DecodeInitialResponse(b)
		_, _ = DecodeTerminalRequest(b)
		_, _ = DecodeTerminalResponse(b)
		_, _ = DecodeToItemRequest(b)
		_, _ = DecodeToItemResponse(b)
		_, _ = DecodeEffectsRequest(b)
		_, _ = DecodeEffectsResponse(b)
		_, _ = DecodeSelfTestResponse(b)
		r := NewReader(string(b))
		_, _ = r.RawOptItem()
		_ = r.RawValue()
	})
}
