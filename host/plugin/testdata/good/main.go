// Command good is a well-behaved raw test guest.
package main

import "github.com/dynafold/dynafold/host/plugin/testdata/rawguest"

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("good") }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

//go:wasmexport evolve
func evolve(ptr, size int32) int64 { return rawguest.Evolve(ptr, size, nil) }
