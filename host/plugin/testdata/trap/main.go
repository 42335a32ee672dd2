// Command trap is a test guest whose evolve traps on demand.
package main

import (
	"unsafe"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("trap") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 { return rawguest.Key(ptr, size) }

var sink byte

type node struct{ next *node }

// stock is a state type as a plugin's: a generic fold over it has frames
// named by its shape (go.shape.struct { WarehouseID string "ddb:..." }).
type stock struct {
	WarehouseID string `ddb:"warehouseId"`
	Qty         int    `ddb:"qty"`
}

type folder[S any] struct{ state S }

// fold traps (a load outside linear memory) inside a generic method.
//
//go:noinline
func (f *folder[S]) fold(n int) S {
	if n > 0 {
		return f.fold(n - 1)
	}
	sink = unsafe.Slice(&sink, 1<<31)[1<<31-1]
	return f.state
}

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	return rawguest.Evolve(ptr, size, func(e *abi.Event) (int64, bool) {
		switch e.Type {
		case "Boom": // a load far outside linear memory: the Wasm trap
			sink = unsafe.Slice(&sink, 1<<31)[1<<31-1]
		case "Shape": // the trap inside a generic method, three calls deep
			(&folder[stock]{}).fold(2)
		case "Panic": // a nil dereference: a Go panic, the module exits
			var n *node
			sink = byte(uintptr(unsafe.Pointer(n.next)))
		}
		return 0, false
	})
}
