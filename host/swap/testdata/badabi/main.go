//go:build wasip1

// Command badabi declares ABI version 2.0, which the host does not implement;
// its other exports answer with guest errors.
package main

import "unsafe"

func main() {}

var buf = make([]byte, 64)

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return 2 << 16 }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 {
	if int(size) > len(buf) {
		buf = make([]byte, size)
	}
	return int32(uintptr(unsafe.Pointer(&buf[0])))
}

var msg = []byte("\x01this module speaks ABI 2")

func fail() int64 { return int64(uintptr(unsafe.Pointer(&msg[0])))<<32 | int64(len(msg)) }

//go:wasmexport describe
func describe(ptr, n int32) int64 { return fail() }

//go:wasmexport key
func key(ptr, n int32) int64 { return fail() }

//go:wasmexport evolve
func evolve(ptr, n int32) int64 { return fail() }
