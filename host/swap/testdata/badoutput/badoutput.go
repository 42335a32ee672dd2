// Package badoutput is order-summary with a to_item whose output cannot be
// written, for the tests of the output check (the case 3): one
// returns qty = {"N": "not-a-number"}, which DynamoDB refuses; the other
// returns another row's pk. The wasm modules in badnumber/ and otherkey/
// register them. (It does not import guesttest: a module that does gets
// a self_test export, and otherkey is smoke-tested by a fixture.)
package badoutput

import (
	"strconv"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func item(s ordersummary.OrderSummary) abi.Item {
	return abi.Item{"orderId": abi.S(s.OrderID), "customer": abi.S(s.Customer), "status": abi.S(s.Status),
		"items": abi.N(strconv.FormatInt(s.Items, 10))}
}

// BadNumber is order-summary whose item carries qty = {"N": "not-a-number"}.
var BadNumber = func() guest.Projection[ordersummary.OrderSummary] {
	p := ordersummary.Projection
	p.Version = "1.0.1"
	p.ToItem = func(s ordersummary.OrderSummary, _ guest.ItemContext) any {
		it := item(s)
		it["qty"] = abi.N("not-a-number")
		return it
	}
	return p
}()

// OtherKey is order-summary whose item carries the pk of another row.
var OtherKey = func() guest.Projection[ordersummary.OrderSummary] {
	p := ordersummary.Projection
	p.Version = "1.0.2"
	p.ToItem = func(s ordersummary.OrderSummary, _ guest.ItemContext) any {
		it := item(s)
		it["pk"] = abi.S("OrderSummary#someone-else")
		return it
	}
	return p
}()
