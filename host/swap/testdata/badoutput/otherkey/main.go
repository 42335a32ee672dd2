//go:build wasip1

// Command otherkey is badoutput.OtherKey as a module, without a self test
// (a hot swap smoke-tests it with the configured fixture).
package main

import (
	"github.com/dynafold/dynafold/host/swap/testdata/badoutput"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(badoutput.OtherKey) }

func main() {}
