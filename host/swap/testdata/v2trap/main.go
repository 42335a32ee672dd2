//go:build wasip1

// Command v2trap is order-summary 2.0.0 whose self_test traps.
package main

import (
	"github.com/dynafold/dynafold/host/swap/testdata/orderv2"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(orderv2.Projection) }

func main() {}

var nothing *[]string

//go:wasmexport self_test
func selfTest(ptr, n uint32) uint64 { return orderv2.SelfTestResult(*nothing) }
