// Command garbage is a test guest whose evolve returns malformed output on
// demand.
package main

import (
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("garbage") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	return rawguest.Evolve(ptr, size, func(e *abi.Event) (int64, bool) {
		switch e.Type {
		case "Garbage":
			return rawguest.Pack([]byte{7, 0xde, 0xad, 0xbe, 0xef}), true
		case "OutOfBounds":
			return int64(0x7fff0000)<<32 | 4096, true
		case "Undecodable":
			return rawguest.OK([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), true
		case "GuestError":
			return rawguest.Fail("cannot fold " + e.Type), true
		}
		return 0, false
	})
}
