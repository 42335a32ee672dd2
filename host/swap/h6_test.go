package swap_test

import (
	"testing"

	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
)

// An event of a fixture that names no timestamp gets the one guesttest
// stamps, so a case folds alike natively and in `host plugin test` (a
// fixture's 1970 against guesttest's 2026 failed a first native test).
func TestH6_FixturesAndGuesttestStampOneTimestamp(t *testing.T) {
	evs, err := swap.ParseEvents([]byte(`[{"stream": "Order", "streamId": "o-1", "version": 1, "type": "OrderPlaced"}]`))
	if err != nil {
		t.Fatal(err)
	}
	native := guesttest.Event("Order", "o-1", 1, "OrderPlaced", nil)
	if evs[0].Timestamp != native.Timestamp {
		t.Errorf("fixture event stamped %q, guesttest %q", evs[0].Timestamp, native.Timestamp)
	}
	if native.Timestamp != "2026-01-01T00:00:00Z" {
		t.Errorf("guesttest stamps %q, the documented default is 2026-01-01T00:00:00Z", native.Timestamp)
	}
}
