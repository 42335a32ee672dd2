// Command balloon is a test guest whose evolve allocates without bound on
// demand, quickly: it never writes the 1 MiB blocks it allocates, so the
// time goes to growing linear memory, not to filling it (hog fills them).
package main

import (
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("balloon") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

var hoard [][]byte

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	return rawguest.Evolve(ptr, size, func(e *abi.Event) (int64, bool) {
		for e.Type == "Balloon" {
			hoard = append(hoard, make([]byte, 1<<20))
		}
		return 0, false
	})
}
