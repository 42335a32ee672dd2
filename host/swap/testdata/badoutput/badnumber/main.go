//go:build wasip1

// Command badnumber is badoutput.BadNumber as a module, with its own case
// as its self test: the case expects what it returns, so it passes unless
// the output itself is checked.
package main

import (
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/swap/testdata/badoutput"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
	"github.com/dynafold/dynafold/sdk-guest/selftest"
)

var cases = []guesttest.Case{{
	Name:   "a placed order",
	Events: []guesttest.Ev{guesttest.Event("Order", "o-t", 1, "OrderPlaced", map[string]any{"customer": "c-1"})},
	Want: []abi.Item{guesttest.Row(ordersummary.RowKey("o-t"), abi.Item{"orderId": abi.S("o-t"), "customer": abi.S("c-1"),
		"status": abi.S("placed"), "items": abi.N("0"), "qty": abi.N("not-a-number")})},
}}

func init() {
	guest.Register(badoutput.BadNumber)
	selftest.Register(guesttest.SelfTests(badoutput.BadNumber, cases...)...)
}

func main() {}
