// Command abi2 is a test guest built for an ABI 2.0 this host does not know.
package main

import "github.com/dynafold/dynafold/host/plugin/testdata/rawguest"

func main() {}

func init() { rawguest.Version = 2 << 16 }

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("abi2") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

//go:wasmexport evolve
func evolve(ptr, size int32) int64 { return rawguest.Evolve(ptr, size, nil) }
