// Package cases holds the order summary's test cases the self-test modules
// ship: one whose rows are right, one whose expected total is wrong.
package cases

import (
	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
)

func events() []guesttest.Ev {
	return []guesttest.Ev{
		guesttest.Event("Order", "o-1", 1, "OrderPlaced", map[string]any{"customer": "Ada"}),
		guesttest.Event("Order", "o-1", 2, "ItemAdded", map[string]any{"price": guest.MustDecimal("0.1")}),
		guesttest.Event("Order", "o-1", 3, "ItemAdded", map[string]any{"price": guest.MustDecimal("2.25")}),
	}
}

func row(total string) abi.Item {
	s := ordersummary.OrderSummary{OrderID: "o-1", Customer: "Ada", Status: "placed", Items: 2, Total: guest.MustDecimal(total)}
	return guesttest.Row(ordersummary.RowKey("o-1"), ordersummary.Item{OrderSummary: s, GSI1PK: "placed", GSI1SK: "o-1"})
}

// Pass sums two prices exactly.
var Pass = guesttest.Case{Name: "sums prices exactly", Events: events(), Want: []abi.Item{row("2.35")}}

// Fail expects the float64 sum.
var Fail = guesttest.Case{Name: "expects a float sum", Events: events(), Want: []abi.Item{row("2.3500000000000001")}}
