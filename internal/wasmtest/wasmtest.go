// Package wasmtest assembles small Wasm modules byte by byte, for tests
// that need what no compiler emits: a start section that never returns, an
// export that calls the host and then traps before any loop. It knows the
// few sections and instructions those modules use, nothing more.
package wasmtest

import "fmt"

// Value types.
const (
	I32 byte = 0x7f
	I64 byte = 0x7e
)

// Instructions with no immediates.
const (
	Unreachable byte = 0x00
	Drop        byte = 0x1a
	End         byte = 0x0b
	I32Eqz      byte = 0x45
	I64Or       byte = 0x84
	I64Shl      byte = 0x86
)

// Module is a Wasm module under construction. Imports must be added before
// the functions defined in the module, as their indices come first.
type Module struct {
	types   [][2][]byte
	imports []imp
	funcs   []fn
	memory  uint32 // pages; 0: none
	memName string // its export name; "": not exported
	globals int    // mutable i32 globals, initially 0
	exports []export
	start   int // function index + 1; 0: none
	data    []segment
}

type imp struct {
	module, name string
	typ          uint32
}

type fn struct {
	typ    uint32
	locals []byte
	body   []byte
}

type export struct {
	name string
	fn   uint32
}

type segment struct {
	offset uint32
	data   []byte
}

func (m *Module) typeOf(params, results []byte) uint32 {
	for i, t := range m.types {
		if string(t[0]) == string(params) && string(t[1]) == string(results) {
			return uint32(i)
		}
	}
	m.types = append(m.types, [2][]byte{params, results})
	return uint32(len(m.types) - 1)
}

// Import adds an imported function and returns its index.
func (m *Module) Import(module, name string, params, results []byte) uint32 {
	if len(m.funcs) > 0 {
		panic("wasmtest: imports must come before defined functions")
	}
	m.imports = append(m.imports, imp{module, name, m.typeOf(params, results)})
	return uint32(len(m.imports) - 1)
}

// Func adds a function with the given locals (one value type each) and
// body (its instructions; the final end is added) and returns its index.
func (m *Module) Func(params, results, locals []byte, body ...[]byte) uint32 {
	var b []byte
	for _, part := range body {
		b = append(b, part...)
	}
	m.funcs = append(m.funcs, fn{m.typeOf(params, results), locals, b})
	return uint32(len(m.imports) + len(m.funcs) - 1)
}

// Memory gives the module a memory of pages 64 KiB pages, exported as name
// unless name is "".
func (m *Module) Memory(pages uint32, name string) { m.memory, m.memName = pages, name }

// Global adds a mutable i32 global, initially 0, and returns its index.
func (m *Module) Global() uint32 {
	m.globals++
	return uint32(m.globals - 1)
}

// Export exports function fn as name.
func (m *Module) Export(name string, fn uint32) { m.exports = append(m.exports, export{name, fn}) }

// Start makes function fn the module's start function.
func (m *Module) Start(fn uint32) { m.start = int(fn) + 1 }

// Data writes b into memory at offset when the module is instantiated.
func (m *Module) Data(offset uint32, b []byte) { m.data = append(m.data, segment{offset, b}) }

// Bytes returns the module's binary.
func (m *Module) Bytes() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	sec := func(id byte, body []byte) {
		out = append(out, id)
		out = U32(out, uint32(len(body)))
		out = append(out, body...)
	}
	var b []byte
	b = U32(b, uint32(len(m.types)))
	for _, t := range m.types {
		b = append(b, 0x60)
		b = U32(b, uint32(len(t[0])))
		b = append(b, t[0]...)
		b = U32(b, uint32(len(t[1])))
		b = append(b, t[1]...)
	}
	sec(1, b)
	if len(m.imports) > 0 {
		b = U32(nil, uint32(len(m.imports)))
		for _, im := range m.imports {
			b = name(b, im.module)
			b = name(b, im.name)
			b = append(b, 0x00)
			b = U32(b, im.typ)
		}
		sec(2, b)
	}
	b = U32(nil, uint32(len(m.funcs)))
	for _, f := range m.funcs {
		b = U32(b, f.typ)
	}
	sec(3, b)
	if m.memory > 0 {
		b = U32(nil, 1)
		b = append(b, 0x00)
		sec(5, U32(b, m.memory))
	}
	if m.globals > 0 {
		b = U32(nil, uint32(m.globals))
		for range m.globals {
			b = append(b, I32, 0x01)
			b = append(b, I32Const(0)...)
			b = append(b, End)
		}
		sec(6, b)
	}
	n := len(m.exports)
	if m.memName != "" {
		n++
	}
	b = U32(nil, uint32(n))
	for _, e := range m.exports {
		b = name(b, e.name)
		b = append(b, 0x00)
		b = U32(b, e.fn)
	}
	if m.memName != "" {
		b = name(b, m.memName)
		b = append(b, 0x02, 0x00)
	}
	sec(7, b)
	if m.start > 0 {
		sec(8, U32(nil, uint32(m.start-1)))
	}
	b = U32(nil, uint32(len(m.funcs)))
	for _, f := range m.funcs {
		var body []byte
		body = U32(body, uint32(len(f.locals)))
		for _, l := range f.locals {
			body = append(body, 0x01, l)
		}
		body = append(body, f.body...)
		body = append(body, End)
		b = U32(b, uint32(len(body)))
		b = append(b, body...)
	}
	sec(10, b)
	if len(m.data) > 0 {
		b = U32(nil, uint32(len(m.data)))
		for _, d := range m.data {
			b = append(b, 0x00)
			b = append(b, I32Const(int32(d.offset))...)
			b = append(b, End)
			b = U32(b, uint32(len(d.data)))
			b = append(b, d.data...)
		}
		sec(11, b)
	}
	return out
}

func name(b []byte, s string) []byte {
	b = U32(b, uint32(len(s)))
	return append(b, s...)
}

// U32 appends x as an unsigned LEB128.
func U32(b []byte, x uint32) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func s64(b []byte, x int64) []byte {
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// I32Const is i32.const v.
func I32Const(v int32) []byte { return s64([]byte{0x41}, int64(v)) }

// I64Const is i64.const v.
func I64Const(v int64) []byte { return s64([]byte{0x42}, v) }

// Call is call fn.
func Call(fn uint32) []byte { return U32([]byte{0x10}, fn) }

// LocalGet is local.get i.
func LocalGet(i uint32) []byte { return U32([]byte{0x20}, i) }

// LocalSet is local.set i.
func LocalSet(i uint32) []byte { return U32([]byte{0x21}, i) }

// I32Store8 is i32.store8 at offset 0.
func I32Store8() []byte { return []byte{0x3a, 0x00, 0x00} }

// Forever is a loop that never ends: loop, br 0, end.
func Forever() []byte { return []byte{0x03, 0x40, 0x0c, 0x00, End} }

// Ops concatenates instructions.
func Ops(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// String is a readable summary of the module, for test failures.
func (m *Module) String() string {
	return fmt.Sprintf("wasmtest module: %d types, %d imports, %d functions, %d exports, start %d",
		len(m.types), len(m.imports), len(m.funcs), len(m.exports), m.start-1)
}
