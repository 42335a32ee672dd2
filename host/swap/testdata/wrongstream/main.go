//go:build wasip1

// Command wrongstream is order-summary reading the "Invoice" stream instead
// of "Order": a candidate whose streams do not match the configuration.
package main

import (
	"github.com/dynafold/dynafold/host/swap/testdata/orderv2"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(orderv2.WithStream("Invoice")) }

func main() {}
