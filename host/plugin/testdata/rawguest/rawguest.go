// Package rawguest is the calling-convention plumbing of the test guests:
// buffers, status bytes and a tiny projection built on the abi codec.
package rawguest

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

var (
	input  []byte // the buffer handed out by Alloc, owned by the next call
	output []byte // the last result, valid until the next call
	busy   bool   // set while evolve runs
)

// Alloc implements dynafold_alloc.
func Alloc(size int32) int32 {
	input = make([]byte, size)
	if size == 0 {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&input[0])))
}

// Input returns the request the host wrote.
func Input(ptr, size int32) []byte {
	if size == 0 {
		return nil
	}
	return input[:size]
}

// Pack returns b as the i64 result: pointer << 32 | length.
func Pack(b []byte) int64 {
	output = b
	if len(b) == 0 {
		return 0
	}
	return int64(uintptr(unsafe.Pointer(&b[0])))<<32 | int64(len(b))
}

// OK returns status 0 and body.
func OK(body []byte) int64 { return Pack(append([]byte{0}, body...)) }

// Fail returns status 1 and a message.
func Fail(msg string) int64 { return Pack(append([]byte{1}, msg...)) }

// Version is what dynafold_abi_version returns.
var Version = int32(abi.VersionMajor<<16 | abi.VersionMinor)

// Describe implements describe for a plugin named name.
func Describe(name string) int64 {
	d := abi.Description{
		Name: name, Version: "0.0.1",
		ABIMajor: uint32(Version) >> 16, ABIMinor: uint32(Version) & 0xffff,
		Sources:      []abi.SourceDesc{{Name: "Order", Stream: "Order", EventTypes: []string{"Placed"}, Mode: abi.ModeFold}},
		Capabilities: []string{abi.CapDescribe, abi.CapKey, abi.CapEvolve},
	}
	return OK(abi.AppendDescription(nil, &d))
}

// Key implements key: the row is {pk: streamId}.
func Key(ptr, size int32) int64 {
	req, err := abi.DecodeKeyRequest(Input(ptr, size))
	if err != nil {
		return Fail(err.Error())
	}
	resp := abi.KeyResponse{Keys: make([]abi.KeyResult, len(req.Events))}
	for i, e := range req.Events {
		resp.Keys[i].Key = abi.Item{"pk": abi.S(e.StreamID)}
	}
	return OK(abi.AppendKeyResponse(nil, &resp))
}

// Evolve implements evolve, calling hook first for each event: a hook that
// returns true has handled the call (and set the result itself).
func Evolve(ptr, size int32, hook func(e *abi.Event) (int64, bool)) int64 {
	if busy {
		return Fail("re-entered: the host called an instance that was busy")
	}
	busy = true
	defer func() { busy = false }()
	req, err := abi.DecodeEvolveRequest(Input(ptr, size))
	if err != nil {
		return Fail(err.Error())
	}
	count := 0
	if n, ok := req.State["count"]; ok {
		count, _ = strconv.Atoi(n.Str)
	}
	resp := abi.EvolveResponse{}
	for i := range req.Events {
		if hook != nil {
			if r, handled := hook(&req.Events[i].Event); handled {
				return r
			}
		}
		count++
		resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied})
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	resp.State = abi.Item{
		"count":  abi.N(strconv.Itoa(count)),
		"now":    abi.S(time.Now().UTC().Format(time.RFC3339Nano)),
		"random": abi.S(hex.EncodeToString(rnd[:])),
	}
	resp.Item = resp.State
	return OK(abi.AppendEvolveResponse(nil, &resp))
}
