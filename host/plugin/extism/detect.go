package extism

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Transport is the calling convention a plugin module follows.
type Transport int

// The transports a dynafold host loads.
const (
	// TransportUnknown: neither convention (Detect returns an error with it).
	TransportUnknown Transport = iota
	// TransportRaw is the native ABI (abi/ABI.md): the module exports
	// dynafold_abi_version and dynafold_alloc and is called with (ptr, len).
	// Load it with package host/plugin.
	TransportRaw
	// TransportExtism is a module written with an Extism PDK: it imports the
	// Extism kernel ("extism:host/env") and is called through
	// github.com/extism/go-sdk. Load it with this package.
	TransportExtism
)

// String returns the transport's name: "raw", "extism" or "unknown".
func (t Transport) String() string {
	switch t {
	case TransportRaw:
		return "raw"
	case TransportExtism:
		return "extism"
	}
	return "unknown"
}

// ExtismHostModule is the import module of the Extism kernel's host functions.
const ExtismHostModule = "extism:host/env"

// ErrUnknownTransport is returned by Detect for a module that follows
// neither convention.
var ErrUnknownTransport = errors.New("unknown plugin transport")

// Detect tells which convention a module follows, from its import and export
// sections alone (it neither compiles nor instantiates it): a module that
// imports anything from "extism:host/env" is an Extism plugin; otherwise one
// that exports dynafold_abi_version and dynafold_alloc is a raw dynafold
// plugin. Any other module, or bytes that are not a Wasm module, is an error
// (matching ErrUnknownTransport, or ErrInvalidModule when it does not parse).
func Detect(wasm []byte) (Transport, error) {
	m, err := parseModule(wasm)
	if err != nil {
		return TransportUnknown, err
	}
	for _, im := range m.imports {
		if im.module == ExtismHostModule {
			return TransportExtism, nil
		}
	}
	if m.exportsFunc(exportVersion) && m.exportsFunc(exportAlloc) {
		return TransportRaw, nil
	}
	return TransportUnknown, fmt.Errorf("%w: the module neither imports %q (Extism) nor exports %s and %s (dynafold ABI)",
		ErrUnknownTransport, ExtismHostModule, exportVersion, exportAlloc)
}

// Export names shared with the raw ABI.
const (
	exportVersion = "dynafold_abi_version"
	exportAlloc   = "dynafold_alloc"
)

// Wasm value types, as encoded in the binary format.
const (
	valI32 byte = 0x7f
	valI64 byte = 0x7e
)

type funcType struct{ params, results []byte }

type importEntry struct {
	module, name string
	kind         byte // 0 function, 1 table, 2 memory, 3 global, 4 tag
}

type exportEntry struct {
	name  string
	kind  byte
	index uint32
}

// module is what Detect and Load read of a module: its imports, its exports
// and the type of every function.
type module struct {
	types     []funcType
	imports   []importEntry
	funcTypes []uint32 // type index of each function, imported ones first
	exports   []exportEntry
}

func (m *module) export(name string) *exportEntry {
	for i := range m.exports {
		if m.exports[i].name == name {
			return &m.exports[i]
		}
	}
	return nil
}

func (m *module) exportsFunc(name string) bool {
	e := m.export(name)
	return e != nil && e.kind == 0
}

// signature returns the type of the exported function name, or false.
func (m *module) signature(name string) (funcType, bool) {
	e := m.export(name)
	if e == nil || e.kind != 0 || int(e.index) >= len(m.funcTypes) {
		return funcType{}, false
	}
	t := m.funcTypes[e.index]
	if int(t) >= len(m.types) {
		return funcType{}, false
	}
	return m.types[t], true
}

// parseModule reads the type, import, function and export sections of a
// Wasm binary, skipping every other section.
func parseModule(b []byte) (*module, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" || binary.LittleEndian.Uint32(b[4:8]) != 1 {
		return nil, fmt.Errorf("%w: not a WebAssembly module (bad magic or version)", ErrInvalidModule)
	}
	m := &module{}
	p := parser{b: b, off: 8}
	for p.off < len(p.b) && p.err == nil {
		id := p.byte()
		size := int(p.u32())
		if p.err != nil || size > len(p.b)-p.off {
			return nil, fmt.Errorf("%w: truncated section %d", ErrInvalidModule, id)
		}
		sec := parser{b: p.b[:p.off+size], off: p.off}
		switch id {
		case 1:
			m.readTypes(&sec)
		case 2:
			m.readImports(&sec)
		case 3:
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				m.funcTypes = append(m.funcTypes, sec.u32())
			}
		case 7:
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				m.exports = append(m.exports, exportEntry{name: sec.name(), kind: sec.byte(), index: sec.u32()})
			}
		}
		if sec.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", ErrInvalidModule, id, sec.err)
		}
		p.off += size
	}
	if p.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidModule, p.err)
	}
	return m, nil
}

func (m *module) readTypes(p *parser) {
	for n := p.u32(); n > 0 && p.err == nil; n-- {
		if form := p.byte(); form != 0x60 {
			p.fail("type form %#x is not a function type", form)
			return
		}
		var t funcType
		t.params = p.valtypes()
		t.results = p.valtypes()
		m.types = append(m.types, t)
	}
}

func (m *module) readImports(p *parser) {
	for n := p.u32(); n > 0 && p.err == nil; n-- {
		im := importEntry{module: p.name(), name: p.name(), kind: p.byte()}
		switch im.kind {
		case 0: // function: type index
			m.funcTypes = append(m.funcTypes, p.u32())
		case 1: // table: reftype, limits
			p.byte()
			p.limits()
		case 2: // memory: limits
			p.limits()
		case 3: // global: valtype, mutability
			p.byte()
			p.byte()
		case 4: // tag: attribute, type index
			p.byte()
			p.u32()
		default:
			p.fail("unknown import kind %d", im.kind)
		}
		m.imports = append(m.imports, im)
	}
}

type parser struct {
	b   []byte
	off int
	err error
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format+" at byte %d", append(args, p.off)...)
	}
	p.off = len(p.b)
}

func (p *parser) byte() byte {
	if p.off >= len(p.b) {
		p.fail("unexpected end")
		return 0
	}
	c := p.b[p.off]
	p.off++
	return c
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (p *parser) u32() uint32 {
	var x uint32
	for shift := uint(0); shift < 35; shift += 7 {
		c := p.byte()
		if p.err != nil {
			return 0
		}
		x |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	p.fail("varint too long")
	return 0
}

func (p *parser) u64() {
	for i := 0; i < 10; i++ {
		if c := p.byte(); c < 0x80 || p.err != nil {
			return
		}
	}
	p.fail("varint too long")
}

func (p *parser) name() string {
	n := int(p.u32())
	if p.err != nil || n > len(p.b)-p.off {
		p.fail("name overruns its section")
		return ""
	}
	s := string(p.b[p.off : p.off+n])
	p.off += n
	return s
}

func (p *parser) valtypes() []byte {
	n := int(p.u32())
	if p.err != nil || n > len(p.b)-p.off {
		p.fail("value types overrun their section")
		return nil
	}
	v := append([]byte(nil), p.b[p.off:p.off+n]...)
	p.off += n
	return v
}

// limits reads table or memory limits: a flags byte (bit 0: has maximum,
// bit 2: 64-bit), the minimum and the optional maximum.
func (p *parser) limits() {
	flags := p.byte()
	p.u64()
	if flags&1 != 0 {
		p.u64()
	}
}
