// Command logger is a test guest that logs through the host import
// dynafold.log on every call.
package main

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmimport dynafold log
func hostLog(level int32, ptr, n uint32)

func log(level int32, msg string) {
	if msg == "" {
		hostLog(level, 0, 0)
		return
	}
	hostLog(level, uint32(uintptr(unsafe.Pointer(unsafe.StringData(msg)))), uint32(len(msg)))
}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("logger") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 {
	log(0, "key called")
	return rawguest.Key(ptr, size)
}

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	return rawguest.Evolve(ptr, size, func(e *abi.Event) (int64, bool) {
		switch e.Type {
		case "Levels": // every level, and two out of range
			for _, l := range []int32{-1, 0, 1, 2, 3, 7} {
				log(l, "level "+strconv.Itoa(int(l)))
			}
		case "Long": // 2000 bytes, then a 2-byte rune across the 1024-byte cut
			log(1, strings.Repeat("x", 1023)+"é"+strings.Repeat("y", 975))
		case "BadUTF8":
			log(1, "bad \xff\xfe utf-8")
		case "BadPtr": // outside linear memory; the call goes on
			hostLog(3, 0xffff_fff0, 100)
			hostLog(3, 16, 0xffff_ffff)
		case "Flood":
			for i := 0; i < 1000; i++ {
				log(1, "flood "+strconv.Itoa(i))
			}
		default:
			log(1, "folding "+e.Type+" v"+strconv.FormatUint(e.Version, 10))
		}
		return 0, false
	})
}
