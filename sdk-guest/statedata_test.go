package guest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// A row whose stored state does not match the plugin's state type (an
// attribute of another kind, a number its field cannot hold: a row written
// by another version of the plugin, or edited by hand) fails the evolve
// with an error that says so, without a byte offset; state that does not
// decode at all is still a malformed encoding.
func TestW2_StateOfTheWrongTypeReadsAsBadStoredState(t *testing.T) {
	p := guest.MustNew(testProjection)
	const tail = " (the row's stored state does not match the plugin's type:" +
		" a row written by another version of the plugin or edited by hand; rebuild the row)"
	for want, state := range map[string]abi.Item{
		`guest: state as read: attribute "n": number "1e400" does not fit int64` + tail: {"id": abi.S("c-1"), "n": abi.N("1e400")},
		`guest: state as read: attribute "n": cannot decode S into int64` + tail:        {"n": abi.S("two")},
		`guest: state as read: attribute "id": cannot decode N into string` + tail:      {"id": abi.N("5")},
	} {
		_, err := p.Evolve(&abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1", State: state, Events: []abi.SourcedEvent{inc(1, "1")}})
		var se *guest.StateDataError
		if err == nil || err.Error() != "evolve: "+want || !errors.As(err, &se) {
			t.Errorf("%v: error %v, want %q", state, err, want)
		}
		if errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%v: %v is a malformed encoding", state, err)
		}
	}

	// Truncated state: the ABI's wording, with the offset.
	req := abi.AppendEvolveRequest(nil, &abi.EvolveRequest{Key: guest.StringKey("pk", "C#c-1", "sk", "C"), StreamID: "c-1", State: abi.Item{"id": abi.S("c-1")}})
	whole := abi.AppendOptItem(nil, abi.Item{"id": abi.S("c-1")})
	at := strings.Index(string(req), string(whole))
	if at < 0 {
		t.Fatal("state not found in the request")
	}
	req[at+1] = 0xff // the state's attribute count: far beyond its bytes
	_, err := p.Call("evolve", string(req), nil)
	if !errors.Is(err, abi.ErrMalformed) || strings.Contains(err.Error(), "does not match the plugin's type") {
		t.Errorf("malformed state: %v reads as state of the wrong type", err)
	}
}
