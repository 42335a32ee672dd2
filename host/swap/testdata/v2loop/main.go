//go:build wasip1

// Command v2loop is order-summary 2.0.0 whose self_test never returns.
package main

import (
	"github.com/dynafold/dynafold/host/swap/testdata/orderv2"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(orderv2.Projection) }

func main() {}

var spins uint64

//go:wasmexport self_test
func selfTest(ptr, n uint32) uint64 {
	for {
		spins++
	}
}
