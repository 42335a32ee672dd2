// Command misbehave is a test guest for the engine-level sandbox tests (SPEC
// W4): a projection keyed by stream id whose evolve folds each event, and
// misbehaves on some event types:
//
//	Hog    allocates without bound (the memory limit stops it)
//	Loop   loops forever (the call timeout stops it)
//	Boom   reads far outside linear memory (a trap), after the events before
//	       it in the same call were folded
//	Clock  reads the wall clock, sleeps n seconds (the event's data), then
//	       waits until a second has passed since it started (the sandbox's
//	       frozen wall clock and virtual monotonic clock make this instant
//	       and deterministic: the sleep moves the clock by exactly n s)
//
// Any other type is counted. The row holds count, log (the versions folded),
// now (the wall clock at the last Clock event) and waited (how long the
// guest believes its busy wait took).
package main

import (
	"strconv"
	"time"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin/testdata/rawguest"
)

func main() {}

//go:wasmexport dynafold_abi_version
func abiVersion() int32 { return rawguest.Version }

//go:wasmexport describe
func describe(ptr, size int32) int64 { return rawguest.Describe("misbehave") }

//go:wasmexport dynafold_alloc
func alloc(size int32) int32 { return rawguest.Alloc(size) }

//go:wasmexport key
func key(ptr, size int32) int64 {
	req, err := abi.DecodeKeyRequest(rawguest.Input(ptr, size))
	if err != nil {
		return rawguest.Fail(err.Error())
	}
	resp := abi.KeyResponse{Keys: make([]abi.KeyResult, len(req.Events))}
	for i, e := range req.Events {
		resp.Keys[i].Key = abi.Item{"pk": abi.S("W4#" + e.StreamID), "sk": abi.S("row")}
	}
	return rawguest.OK(abi.AppendKeyResponse(nil, &resp))
}

var (
	hoard [][]byte
	spins uint64
	sink  byte
)

//go:wasmexport evolve
func evolve(ptr, size int32) int64 {
	req, err := abi.DecodeEvolveRequest(rawguest.Input(ptr, size))
	if err != nil {
		return rawguest.Fail(err.Error())
	}
	st := req.State
	count, _ := strconv.Atoi(st["count"].Str)
	log, now, waited := st["log"].Str, st["now"].Str, st["waited"].Str
	resp := abi.EvolveResponse{}
	for _, se := range req.Events {
		e := se.Event
		switch e.Type {
		case "Hog":
			for { // blocks left unwritten: the limit is reached in milliseconds
				hoard = append(hoard, make([]byte, 1<<20))
			}
		case "Loop":
			for {
				spins++
			}
		case "Boom":
			sink = unsafe.Slice(&sink, 1<<31)[1<<31-1]
		case "Clock":
			start := time.Now()
			secs, _ := strconv.Atoi(e.Data["n"].Str)
			time.Sleep(time.Duration(secs) * time.Second)
			for time.Since(start) < time.Second {
				spins++
			}
			now = time.Now().UTC().Format(time.RFC3339Nano)
			waited = time.Since(start).String()
		}
		count++
		if log != "" {
			log += ","
		}
		log += strconv.FormatUint(e.Version, 10)
		resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied})
	}
	resp.State = abi.Item{"count": abi.N(strconv.Itoa(count)), "log": abi.S(log)}
	if now != "" {
		resp.State["now"], resp.State["waited"] = abi.S(now), abi.S(waited)
	}
	resp.Item = resp.State
	return rawguest.OK(abi.AppendEvolveResponse(nil, &resp))
}
