package extism_test

import (
	"errors"
	"testing"

	"github.com/dynafold/dynafold/host/plugin/extism"
)

// TestW3_DetectsTransport tells the Go raw plugin from the AssemblyScript
// Extism plugin by their imports and exports, and refuses what is neither.
func TestW3_DetectsTransport(t *testing.T) {
	cases := []struct {
		name string
		wasm []byte
		want extism.Transport
	}{
		{"go raw order-summary", orderSummaryRaw(t), extism.TransportRaw},
		{"assemblyscript extism order-summary", orderSummaryAS(t), extism.TransportExtism},
		{"assemblyscript extism test guest", testGuest(t, "misbehave"), extism.TransportExtism},
	}
	for _, tc := range cases {
		got, err := extism.Detect(tc.wasm)
		if err != nil || got != tc.want {
			t.Errorf("%s: Detect = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	// An empty module (magic, version) follows neither convention.
	_, err := extism.Detect([]byte("\x00asm\x01\x00\x00\x00"))
	if !errors.Is(err, extism.ErrUnknownTransport) {
		t.Errorf("empty module: err = %v, want ErrUnknownTransport", err)
	}
	for _, bad := range [][]byte{nil, []byte("not wasm at all"), []byte("\x00asm\x01\x00\x00\x00\x02\x05\x01")} {
		if tr, err := extism.Detect(bad); !errors.Is(err, extism.ErrInvalidModule) || tr != extism.TransportUnknown {
			t.Errorf("Detect(%q) = %v, %v; want ErrInvalidModule", bad, tr, err)
		}
	}
	// Load refuses the raw module, pointing at the convention.
	if _, err := extism.Load(t.Context(), orderSummaryRaw(t), extism.Config{CacheDir: cacheDir}); !errors.Is(err, extism.ErrInvalidModule) {
		t.Errorf("Load(raw module) = %v, want ErrInvalidModule", err)
	}
}
