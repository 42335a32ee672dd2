package guest_test

import (
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// FuzzGuestExports feeds arbitrary bytes to every export of a plugin: the
// guest reads requests with its own fast paths, and must answer with a
// response or a guest-level error, never panic.
func FuzzGuestExports(f *testing.F) {
	f.Add([]byte{})
	f.Add(abi.AppendEvolveRequest(nil, &abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1"), StreamID: "c-1",
		State:  abi.Item{"id": abi.S("c-1"), "n": abi.N("3"), "log": abi.L(abi.S("x"))},
		Events: []abi.SourcedEvent{inc(1, "2"), ev(2, "Skip", nil), ev(3, "Reject", nil), ev(4, "Remove", nil), inc(5, "1")}}))
	f.Add(abi.AppendKeyRequest(nil, &abi.KeyRequest{Source: "C", Events: []abi.Event{inc(1, "2").Event}}))
	p := guest.MustNew(testProjection)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, export := range []string{"describe", "key", "evolve", "initial", "terminal", "to_item", "effects"} {
			out, err := p.Call(export, string(b), nil)
			if err != nil && strings.Contains(err.Error(), "panic:") {
				t.Fatalf("%s panicked: %v", export, err)
			}
			if err == nil && export == "evolve" {
				if _, derr := abi.DecodeEvolveResponse(out); derr != nil {
					t.Fatalf("evolve answered a response that does not decode: %v", derr)
				}
			}
		}
	})
}
