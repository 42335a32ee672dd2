//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// The raw Wasm calling convention (ABI.md): the host calls dynafold_alloc(n),
// writes the request there, then calls an export with (ptr, n); the export
// returns outPtr<<32 | outLen, the response prefixed with a status byte,
// valid until the next call into the instance.

var (
	registered  *Plugin
	registerErr error
	input       []byte // the buffer handed out by the last dynafold_alloc
	output      []byte // reused for every response
)

// Register makes d the plugin this module exports. Call it from an init
// function of the module's package main; an invalid definition makes every
// export fail with status 1, naming the problem.
func Register(d Definition) {
	registered, registerErr = New(d)
}

// Main registers d, for use in an init function: func init() { guest.Main(p) }.
func Main(d Definition) { Register(d) }

//go:wasmexport dynafold_abi_version
func abiVersion() uint32 { return abi.VersionMajor<<16 | abi.VersionMinor }

//go:wasmexport dynafold_alloc
func alloc(size uint32) uint32 {
	if size == 0 {
		return 0
	}
	if int(size) > cap(input) {
		input = make([]byte, size+size/4)
	}
	input = input[:size]
	return uint32(uintptr(unsafe.Pointer(&input[0])))
}

func run(export string, ptr, n uint32) uint64 {
	var in string
	if n > 0 && input != nil && uint32(uintptr(unsafe.Pointer(&input[0]))) == ptr && int(n) <= len(input) {
		// Decoded strings alias the buffer: they are valid during this call
		// only, and the SDK keeps none of them (see Event).
		in = unsafe.String(&input[0], n)
	} else if n > 0 {
		return fail("input buffer was not obtained from dynafold_alloc")
	}
	if registered == nil {
		msg := "no projection registered (call guest.Register in an init function)"
		if registerErr != nil {
			msg = registerErr.Error()
		}
		return fail(msg)
	}
	out, err := registered.Call(export, in, append(output[:0], 0))
	if err != nil {
		return fail(err.Error())
	}
	output = out
	return result(out)
}

func fail(msg string) uint64 {
	output = append(append(output[:0], 1), msg...)
	return result(output)
}

func result(out []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(len(out))
}

//go:wasmexport describe
func describe(ptr, n uint32) uint64 { return run(abi.CapDescribe, ptr, n) }

//go:wasmexport key
func key(ptr, n uint32) uint64 { return run(abi.CapKey, ptr, n) }

//go:wasmexport evolve
func evolve(ptr, n uint32) uint64 { return run(abi.CapEvolve, ptr, n) }

//go:wasmexport initial
func initial(ptr, n uint32) uint64 { return run(abi.CapInitial, ptr, n) }

//go:wasmexport terminal
func terminal(ptr, n uint32) uint64 { return run(abi.CapTerminal, ptr, n) }

//go:wasmexport to_item
func toItem(ptr, n uint32) uint64 { return run(abi.CapToItem, ptr, n) }

//go:wasmexport effects
func effects(ptr, n uint32) uint64 { return run(abi.CapEffects, ptr, n) }
