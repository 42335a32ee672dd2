// Command spin is a test guest whose evolve of an event of type Spin runs a
// loop of n iterations, n being the event's data attribute "n".
package main

import (
	"strconv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("spin") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

var spins uint64

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	return rawguest.Evolve(ptr, size, func(e *abi.Event) (int64, bool) {
		if e.Type == "Spin" {
			n, _ := strconv.Atoi(e.Data["n"].Str)
			for i := 0; i < n; i++ {
				spins = spins*31 + uint64(i)
			}
		}
		return 0, false
	})
}
