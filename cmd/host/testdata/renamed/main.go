//go:build wasip1

// Command renamed is order-summary 2.0.0, the candidate of the validate
// row-check tests: it folds every order as 1.0.0 does, but keeps the
// customer under the attribute "buyer" (1.0.0 writes "customer"), a field
// renamed in the state, as a user renames one.
package main

import (
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Summary is 1.0.0's state with the customer renamed.
type Summary struct {
	OrderID string        `ddb:"orderId"`
	Buyer   string        `ddb:"buyer"`
	Status  string        `ddb:"status"`
	Items   int64         `ddb:"items"`
	Total   guest.Decimal `ddb:"total"`
	Version int64         `ddb:"version"`
}

func init() {
	base := ordersummary.Projection
	guest.Register(guest.Projection[Summary]{
		Name:       base.Name,
		Version:    "2.0.0",
		Stream:     base.Stream,
		EventTypes: base.EventTypes,
		Key:        base.Key,
		Initial: func(streamID string, _ guest.Event) Summary {
			return Summary{OrderID: streamID, Status: "new"}
		},
		Evolve: func(s Summary, e guest.Event) (Summary, error) {
			old, err := base.Evolve(ordersummary.OrderSummary{OrderID: s.OrderID, Customer: s.Buyer, Status: s.Status, Items: s.Items, Total: s.Total, Version: s.Version}, e)
			return Summary{OrderID: old.OrderID, Buyer: old.Customer, Status: old.Status, Items: old.Items, Total: old.Total, Version: old.Version}, err
		},
		ToItem: func(s Summary, _ guest.ItemContext) any {
			return struct {
				Summary
				GSI1PK string `ddb:"gsi1pk"`
				GSI1SK string `ddb:"gsi1sk"`
			}{s, s.Status, s.OrderID}
		},
	})
}

func main() {}
