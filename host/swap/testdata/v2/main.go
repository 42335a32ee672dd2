//go:build wasip1

// Command v2 is order-summary 2.0.0 with a passing self_test export.
package main

import (
	"github.com/dynafold/dynafold/host/swap/testdata/orderv2"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(orderv2.Projection) }

func main() {}

//go:wasmexport self_test
func selfTest(ptr, n uint32) uint64 { return orderv2.SelfTestResult(orderv2.SelfTest()) }
