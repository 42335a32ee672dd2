//go:build wasip1

// Command ordervip is order-summary 1.1.0, the candidate of the shadow and
// what-if tests: it folds every order as 1.0.0 does, except that an order
// placed by the customer "vip" gets the status "placed-vip" — one row
// differs.
package main

import (
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() {
	p := ordersummary.Projection
	p.Version = "1.1.0"
	base := p.Evolve
	p.Evolve = func(s ordersummary.OrderSummary, e guest.Event) (ordersummary.OrderSummary, error) {
		s, err := base(s, e)
		if err == nil && e.Type == "OrderPlaced" && s.Customer == "vip" {
			s.Status = "placed-vip"
		}
		return s, err
	}
	guest.Register(p)
}

func main() {}
