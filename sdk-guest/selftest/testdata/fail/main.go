//go:build wasip1

// Command fail is the order summary with a self test that failes.
package main

import (
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
	"github.com/dynafold/dynafold/sdk-guest/selftest"
	"github.com/dynafold/dynafold/sdk-guest/selftest/testdata/cases"
)

func init() {
	guest.Register(ordersummary.Projection)
	selftest.Register(guesttest.SelfTests(ordersummary.Projection, cases.Fail)...)
}

func main() {}
