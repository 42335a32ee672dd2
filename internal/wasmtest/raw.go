package wasmtest

import "github.com/dynafold/dynafold/abi"

// RawPlugin is a module of the raw calling convention (abi/ABI.md) that
// loads (its describe answers name@0.0.1, ABI 1.0, one source) and
// misbehaves as asked. key and evolve answer a guest error unless told
// otherwise.
type RawPlugin struct {
	Name string // describe's name (default "raw")
	// Yield imports wasi_snapshot_preview1.sched_yield, which lets the
	// host instrument the module's loops; without it the host enforces
	// timeouts with wazero's close-on-context-done.
	Yield bool
	// StartLoop gives the module a start function that never returns.
	StartLoop bool
	// StartSetsDescribe gives the module a start function that changes
	// the version describe answers to 0.0.2.
	StartSetsDescribe bool
	// InitializeLoop exports an _initialize that never returns.
	InitializeLoop bool
	// EvolveLogTrap makes evolve log one message through dynafold.log and
	// then trap (unreachable) without running any loop in between.
	EvolveLogTrap bool
}

const i64Add = 0x7c

// Memory layout of a RawPlugin.
const (
	rawGuestError = 512  // the guest-error output
	rawDescribe   = 1024 // describe's output
	rawMessage    = 2048 // the message EvolveLogTrap logs
	rawInput      = 4096 // where dynafold_alloc puts every request
)

// Bytes returns the module's binary.
func (r RawPlugin) Bytes() []byte {
	name := r.Name
	if name == "" {
		name = "raw"
	}
	var m Module
	var log uint32
	if r.Yield {
		m.Import("wasi_snapshot_preview1", "sched_yield", nil, []byte{I32})
		m.Global() // the host's loop instrumentation needs a global section
	}
	if r.EvolveLogTrap {
		log = m.Import("dynafold", "log", []byte{I32, I32, I32}, nil)
	}
	m.Memory(2, "memory")
	desc := append([]byte{0}, abi.AppendDescription(nil, &abi.Description{
		Name: name, Version: "0.0.1", ABIMajor: abi.VersionMajor, ABIMinor: 0,
		Sources:      []abi.SourceDesc{{Name: "Order", Stream: "Order", Mode: "fold"}},
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve},
	})...)
	m.Data(rawDescribe, desc)
	guestErr := []byte("\x01not implemented")
	m.Data(rawGuestError, guestErr)
	msg := []byte("about to trap")
	m.Data(rawMessage, msg)

	// result packs an output buffer as the convention returns it.
	result := func(ptr, n int) []byte { return I64Const(int64(ptr)<<32 | int64(n)) }
	i32x2 := []byte{I32, I32}
	m.Export("dynafold_abi_version", m.Func(nil, []byte{I32}, nil, I32Const(int32(abi.VersionMajor<<16))))
	m.Export("dynafold_alloc", m.Func([]byte{I32}, []byte{I32}, nil, I32Const(rawInput)))
	m.Export("describe", m.Func(i32x2, []byte{I64}, nil, result(rawDescribe, len(desc))))
	m.Export("key", m.Func(i32x2, []byte{I64}, nil, result(rawGuestError, len(guestErr))))
	evolve := result(rawGuestError, len(guestErr))
	if r.EvolveLogTrap {
		evolve = Ops(I32Const(1), I32Const(rawMessage), I32Const(int32(len(msg))), Call(log), []byte{Unreachable})
	}
	m.Export("evolve", m.Func(i32x2, []byte{I64}, nil, evolve))
	if r.InitializeLoop {
		m.Export("_initialize", m.Func(nil, nil, nil, Forever()))
	}
	if r.StartLoop {
		m.Start(m.Func(nil, nil, nil, Forever()))
	}
	if r.StartSetsDescribe {
		// The version's last byte: the status byte, name's length and
		// bytes, version's length, "0.0." (names are shorter than 128).
		last := rawDescribe + 1 + 1 + len(name) + 1 + 4
		m.Start(m.Func(nil, nil, nil, I32Const(int32(last)), I32Const('2'), I32Store8()))
	}
	return m.Bytes()
}

// ExtismPlugin is a module of the ABI's Extism form (it imports from
// extism:host/env) that loads (describe answers name@0.0.1, ABI 1.0, one
// source) unless told to misbehave. key and evolve return 1 (an error
// without a message).
type ExtismPlugin struct {
	Name string // describe's name (default "extism")
	// StartLoop gives the module a start function that never returns.
	StartLoop bool
	// EvolveLogTrap makes evolve log one message at info level through
	// the Extism log function and then trap (unreachable) without running
	// any loop in between.
	EvolveLogTrap bool
}

// Bytes returns the module's binary.
func (e ExtismPlugin) Bytes() []byte {
	name := e.Name
	if name == "" {
		name = "extism"
	}
	var m Module
	const env = "extism:host/env"
	alloc := m.Import(env, "alloc", []byte{I64}, []byte{I64})
	store := m.Import(env, "store_u8", []byte{I64, I32}, nil)
	output := m.Import(env, "output_set", []byte{I64, I64}, nil)
	logInfo := m.Import(env, "log_info", []byte{I64}, nil)
	desc := append([]byte{0}, abi.AppendDescription(nil, &abi.Description{
		Name: name, Version: "0.0.1", ABIMajor: abi.VersionMajor, ABIMinor: 0,
		Sources:      []abi.SourceDesc{{Name: "Order", Stream: "Order", Mode: "fold"}},
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve},
	})...)
	// put stores b in a new block of the kernel's memory, left in local 0:
	// off = alloc(len); store_u8(off+i, b[i]) for each byte.
	put := func(b []byte) []byte {
		code := Ops(I64Const(int64(len(b))), Call(alloc), LocalSet(0))
		for i, c := range b {
			code = Ops(code, LocalGet(0), I64Const(int64(i)), []byte{i64Add}, I32Const(int32(c)), Call(store))
		}
		return code
	}
	describe := Ops(put(desc), LocalGet(0), I64Const(int64(len(desc))), Call(output), I32Const(0))
	m.Export("describe", m.Func(nil, []byte{I32}, []byte{I64}, describe))
	m.Export("dynafold_abi_version", m.Func(nil, []byte{I32}, nil, I32Const(int32(abi.VersionMajor<<16))))
	m.Export("key", m.Func(nil, []byte{I32}, nil, I32Const(1)))
	evolve := I32Const(1)
	if e.EvolveLogTrap {
		evolve = Ops(put([]byte("about to trap")), LocalGet(0), Call(logInfo), []byte{Unreachable})
	}
	m.Export("evolve", m.Func(nil, []byte{I32}, []byte{I64}, evolve))
	if e.StartLoop {
		m.Start(m.Func(nil, nil, nil, Forever()))
	}
	return m.Bytes()
}
