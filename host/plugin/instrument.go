package plugin

import (
	"errors"
	"fmt"
	"strings"
)

// interruptGlobal is the export instrument adds: a mutable i32 global that,
// once non-zero, makes the guest trap at its next loop head.
const interruptGlobal = "dynafold_interrupt"

// budgetGlobal is the other export instrument adds: a mutable i32 global
// that, while non-zero, counts down once per yieldEvery loop iterations and
// makes the guest trap when it reaches zero (Config.MaxLoopIterations).
const budgetGlobal = "dynafold_loop_budget"

// errNotInstrumentable reports a module instrument cannot rewrite; Load then
// falls back to wazero's close-on-context-done.
var errNotInstrumentable = errors.New("module cannot be instrumented")

// skipInstrument makes Load use the fallback; tests set it.
var skipInstrument = false

func instrumentFor(wasm []byte) ([]byte, error) {
	if skipInstrument {
		return nil, fmt.Errorf("%w: disabled", errNotInstrumentable)
	}
	return instrument(wasm)
}

// yieldEvery is how many loop iterations pass between two calls to the host.
const yieldEvery = 4096

// instrument returns a copy of a Wasm binary with three mutable i32
// globals, the exported interrupt flag (interruptGlobal, initially 0), a
// countdown and the exported loop budget (budgetGlobal, initially 0), and,
// at the head of every loop, code that decrements the countdown and, every
// yieldEvery iterations, resets it, calls the module's own import of
// wasi_snapshot_preview1.sched_yield, decrements the budget if it is
// non-zero and traps (unreachable) if that made it zero, and, if the flag is
// set, sets it to interrupted and traps. Setting the flag from another goroutine makes a running call trap
// within yieldEvery loop iterations: that is how the host enforces
// CallTimeout and the caller's context.
//
// The call to the host matters as much as the flag: compiled Wasm code is
// not preemptible, so a guest that never leaves it would stall the Go
// garbage collector's stop-the-world, and with it the timer that sets the
// flag. wazero's own mechanism (RuntimeConfig.WithCloseOnContextDone) leaves
// compiled code at every loop iteration, which makes loop-heavy guests such
// as Go's runtime 10-20 times slower (wazero issue #2466); here it costs a
// decrement and a branch per iteration.
//
// A start section is removed and its function exported as startExport,
// for the host to call under the watchdog once the module is instantiated
// (newInstance), before _initialize, as the start section would have run.
//
// Function indices do not change (no import is added), so the name section
// is kept and trap stack traces still name functions; DWARF sections are
// dropped, as their code offsets no longer hold. A module that does not import
// sched_yield, or uses instructions this rewriter does not know (SIMD,
// exceptions, threads), is refused with errNotInstrumentable.
func instrument(wasm []byte) ([]byte, error) {
	r := &wreader{b: wasm}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: not a Wasm binary", errNotInstrumentable)
	}
	r.pos = 8
	startFn, hasStart, err := findStart(wasm)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(wasm)+len(wasm)/16)
	out = append(out, wasm[:8]...)
	var importedGlobals, definedGlobals, yieldFn uint32
	sawGlobals, sawExports, sawYield := false, false, false
	for r.pos < len(wasm) {
		id := r.byte()
		size := r.u32()
		start := r.pos
		if r.err != nil || start+int(size) > len(wasm) {
			return nil, fmt.Errorf("%w: truncated section", errNotInstrumentable)
		}
		body := wasm[start : start+int(size)]
		r.pos = start + int(size)
		switch id {
		case 0: // custom
			name, ok := customName(body)
			if !ok || strings.HasPrefix(name, ".debug") {
				continue
			}
			out = appendSection(out, id, body)
		case 2: // import
			var err error
			importedGlobals, yieldFn, sawYield, err = scanImports(body)
			if err != nil {
				return nil, err
			}
			out = appendSection(out, id, body)
		case 6: // global: append the flag (i32.const 0), the countdown and the budget (0)
			br := &wreader{b: body}
			definedGlobals = br.u32()
			if br.err != nil {
				return nil, fmt.Errorf("%w: global section", errNotInstrumentable)
			}
			sec := appendU32(nil, definedGlobals+3)
			sec = append(sec, body[br.pos:]...)
			sec = append(sec, 0x7f, 0x01, 0x41, 0x00, 0x0b)
			sec = append(sec, 0x7f, 0x01, 0x41)
			sec = appendS32(sec, yieldEvery)
			sec = append(sec, 0x0b)
			sec = append(sec, 0x7f, 0x01, 0x41, 0x00, 0x0b)
			out = appendSection(out, id, sec)
			sawGlobals = true
		case 7: // export: append ours
			if !sawGlobals {
				return nil, fmt.Errorf("%w: no global section", errNotInstrumentable)
			}
			br := &wreader{b: body}
			n := br.u32()
			if br.err != nil || strings.Contains(string(body), interruptGlobal) || strings.Contains(string(body), budgetGlobal) ||
				strings.Contains(string(body), startExport) {
				return nil, fmt.Errorf("%w: export section", errNotInstrumentable)
			}
			added := uint32(2)
			if hasStart {
				added++
			}
			sec := appendU32(nil, n+added)
			sec = append(sec, body[br.pos:]...)
			if hasStart {
				sec = appendU32(sec, uint32(len(startExport)))
				sec = append(sec, startExport...)
				sec = append(sec, 0x00)
				sec = appendU32(sec, startFn)
			}
			sec = appendU32(sec, uint32(len(interruptGlobal)))
			sec = append(sec, interruptGlobal...)
			sec = append(sec, 0x03)
			sec = appendU32(sec, importedGlobals+definedGlobals)
			sec = appendU32(sec, uint32(len(budgetGlobal)))
			sec = append(sec, budgetGlobal...)
			sec = append(sec, 0x03)
			sec = appendU32(sec, importedGlobals+definedGlobals+2)
			out = appendSection(out, id, sec)
			sawExports = true
		case 8: // start: exported instead (startExport), the host calls it
		case 10: // code
			if !sawYield {
				return nil, fmt.Errorf("%w: no import of wasi_snapshot_preview1.sched_yield", errNotInstrumentable)
			}
			flag := importedGlobals + definedGlobals
			sec, err := instrumentCode(body, loopCheck(flag, flag+1, flag+2, yieldFn))
			if err != nil {
				return nil, err
			}
			out = appendSection(out, id, sec)
		default:
			out = appendSection(out, id, body)
		}
	}
	if !sawExports {
		return nil, fmt.Errorf("%w: no export section", errNotInstrumentable)
	}
	return out, nil
}

// startExport is the export instrument gives the module's start function,
// in place of the start section: wazero runs a start section inside
// instantiation, where nothing can interrupt it, while the host calls this
// export under the watchdog, as it calls _initialize.
const startExport = "dynafold_start"

// findStart returns the function index of the module's start section, if
// it has one.
func findStart(wasm []byte) (fn uint32, ok bool, err error) {
	r := &wreader{b: wasm, pos: 8}
	for r.pos < len(wasm) {
		id := r.byte()
		size := r.u32()
		if r.err != nil || r.pos+int(size) > len(wasm) {
			return 0, false, fmt.Errorf("%w: truncated section", errNotInstrumentable)
		}
		if id == 8 {
			br := &wreader{b: wasm[r.pos : r.pos+int(size)]}
			fn = br.u32()
			if br.err != nil {
				return 0, false, fmt.Errorf("%w: start section", errNotInstrumentable)
			}
			return fn, true, nil
		}
		r.pos += int(size)
	}
	return 0, false, nil
}

// loopCheck is the code instrument puts at the head of every loop. The loop
// budget costs nothing per iteration: it is read only in the branch taken
// once per yieldEvery iterations. A set interrupt flag traps, after setting
// the flag to interrupted.
func loopCheck(flag, countdown, budget, yieldFn uint32) []byte {
	c := []byte{0x23} // global.get countdown
	c = appendU32(c, countdown)
	c = append(c, 0x41, 0x01, 0x6b, 0x24) // i32.const 1, i32.sub, global.set countdown
	c = appendU32(c, countdown)
	c = append(c, 0x23) // global.get countdown
	c = appendU32(c, countdown)
	c = append(c, 0x45, 0x04, 0x40, 0x41) // i32.eqz, if, i32.const yieldEvery
	c = appendS32(c, yieldEvery)
	c = append(c, 0x24) // global.set countdown
	c = appendU32(c, countdown)
	c = append(c, 0x10) // call sched_yield
	c = appendU32(c, yieldFn)
	c = append(c, 0x1a, 0x23) // drop, global.get budget
	c = appendU32(c, budget)
	c = append(c, 0x04, 0x40, 0x23) // if, global.get budget
	c = appendU32(c, budget)
	c = append(c, 0x41, 0x01, 0x6b, 0x24) // i32.const 1, i32.sub, global.set budget
	c = appendU32(c, budget)
	c = append(c, 0x23) // global.get budget
	c = appendU32(c, budget)
	c = append(c, 0x45, 0x04, 0x40, 0x00, 0x0b, 0x0b) // i32.eqz, if, unreachable, end, end
	c = append(c, 0x23)                               // global.get flag
	c = appendU32(c, flag)
	c = append(c, 0x04, 0x40, 0x41, interrupted, 0x24) // if, i32.const interrupted, global.set flag
	c = appendU32(c, flag)
	return append(c, 0x00, 0x0b, 0x0b) // unreachable, end, end
}

// interrupted is the value the guest leaves in the interrupt flag when it
// traps because the flag was set: the host tells that trap from the
// guest's own (an unreachable of its code, a fault) by it.
const interrupted = 2

// instrumentCode rewrites the code section: each function body gets check
// after every loop instruction.
func instrumentCode(sec []byte, check []byte) ([]byte, error) {
	r := &wreader{b: sec}
	n := r.u32()
	out := appendU32(make([]byte, 0, len(sec)+len(sec)/8), n)
	var fn []byte
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		if r.err != nil || r.pos+int(size) > len(sec) {
			return nil, fmt.Errorf("%w: truncated code section", errNotInstrumentable)
		}
		body := sec[r.pos : r.pos+int(size)]
		r.pos += int(size)
		var err error
		if fn, err = instrumentBody(fn[:0], body, check); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	return out, nil
}

func instrumentBody(out, body, check []byte) ([]byte, error) {
	r := &wreader{b: body}
	for decls := r.u32(); decls > 0 && r.err == nil; decls-- {
		r.u32()
		r.byte()
	}
	last := 0
	for r.pos < len(body) && r.err == nil {
		op := r.byte()
		if op == 0x03 { // loop
			r.blockType()
			out = append(out, body[last:r.pos]...)
			out = append(out, check...)
			last = r.pos
			continue
		}
		if err := r.skipImmediates(op); err != nil {
			return nil, err
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", errNotInstrumentable, r.err)
	}
	return append(out, body[last:]...), nil
}

// Immediate shapes of the opcodes instrument knows.
const (
	immBad      = iota // unknown: the module is not instrumented
	immNone            // no immediates
	immU32             // one LEB128 index
	immU32x2           // two LEB128 indices (call_indirect, memarg)
	immBlock           // a block type
	immBrTable         // a vector of labels and a default
	immSelectT         // a vector of value types
	immByte            // one byte (memory.size, memory.grow, ref.null)
	immLEB             // a signed constant
	immSkip4           // f32.const
	immSkip8           // f64.const
	immPrefixFC        // 0xfc prefix: saturating truncation, bulk memory, tables
)

// immediates maps each opcode to the shape of its immediates (MVP, sign
// extension, saturating truncation, bulk memory and reference types; not
// SIMD, exceptions or threads).
var immediates = func() (t [256]uint8) {
	set := func(shape uint8, ops ...int) {
		for _, op := range ops {
			t[op] = shape
		}
	}
	set(immNone, 0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1)
	for op := 0x45; op <= 0xc4; op++ {
		t[op] = immNone
	}
	set(immBlock, 0x02, 0x03, 0x04)
	set(immU32, 0x0c, 0x0d, 0x10, 0x12, 0xd2, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26)
	set(immBrTable, 0x0e)
	set(immU32x2, 0x11, 0x13)
	for op := 0x28; op <= 0x3e; op++ {
		t[op] = immU32x2
	}
	set(immSelectT, 0x1c)
	set(immByte, 0x3f, 0x40, 0xd0)
	set(immLEB, 0x41, 0x42)
	set(immSkip4, 0x43)
	set(immSkip8, 0x44)
	set(immPrefixFC, 0xfc)
	return t
}()

// skipImmediates skips the immediates of opcode op.
func (r *wreader) skipImmediates(op byte) error {
	switch immediates[op] {
	case immNone:
	case immU32:
		r.u32()
	case immU32x2:
		r.u32()
		r.u32()
	case immBlock:
		r.blockType()
	case immBrTable:
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case immSelectT:
		n := r.u32()
		r.skip(int(n))
	case immByte:
		r.byte()
	case immLEB:
		r.leb()
	case immSkip4:
		r.skip(4)
	case immSkip8:
		r.skip(8)
	case immPrefixFC:
		switch sub := r.u32(); {
		case sub <= 7: // saturating truncations
		case sub == 8: // memory.init
			r.u32()
			r.byte()
		case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
			r.u32()
		case sub == 10: // memory.copy
			r.byte()
			r.byte()
		case sub == 11: // memory.fill
			r.byte()
		case sub == 12 || sub == 14: // table.init, table.copy
			r.u32()
			r.u32()
		default:
			return fmt.Errorf("%w: opcode 0xfc %d", errNotInstrumentable, sub)
		}
	default:
		return fmt.Errorf("%w: opcode %#x", errNotInstrumentable, op)
	}
	return nil
}

// scanImports counts the imported globals and finds the function index of
// wasi_snapshot_preview1.sched_yield.
func scanImports(sec []byte) (globals, yieldFn uint32, found bool, err error) {
	r := &wreader{b: sec}
	var funcs uint32
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		module := r.name()
		name := r.name()
		switch kind := r.byte(); kind {
		case 0x00: // func
			r.u32()
			if module == "wasi_snapshot_preview1" && name == "sched_yield" && !found {
				yieldFn, found = funcs, true
			}
			funcs++
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.byte()
			r.byte()
			globals++
		default:
			return 0, 0, false, fmt.Errorf("%w: import kind %#x", errNotInstrumentable, kind)
		}
	}
	if r.err != nil {
		return 0, 0, false, fmt.Errorf("%w: import section: %v", errNotInstrumentable, r.err)
	}
	return globals, yieldFn, found, nil
}

func (r *wreader) name() string {
	n := int(r.u32())
	start := r.pos
	r.skip(n)
	if r.err != nil {
		return ""
	}
	return string(r.b[start : start+n])
}

func customName(body []byte) (string, bool) {
	r := &wreader{b: body}
	n := int(r.u32())
	if r.err != nil || r.pos+n > len(body) {
		return "", false
	}
	return string(body[r.pos : r.pos+n]), true
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

func appendS32(out []byte, x int32) []byte {
	for {
		b := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && b&0x40 == 0) || (x == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func appendU32(out []byte, x uint32) []byte {
	for x >= 0x80 {
		out = append(out, byte(x)|0x80)
		x >>= 7
	}
	return append(out, byte(x))
}

// wreader reads a Wasm binary; its first error sticks.
type wreader struct {
	b   []byte
	pos int
	err error
}

func (r *wreader) byte() byte {
	if r.pos >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *wreader) skip(n int) {
	if n < 0 || r.pos+n > len(r.b) {
		r.err = errors.New("unexpected end")
		r.pos = len(r.b)
		return
	}
	r.pos += n
}

func (r *wreader) u32() uint32 {
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 {
		r.pos++
		return uint32(r.b[r.pos-1])
	}
	var x uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		x |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

// leb skips a signed or unsigned LEB128 of up to 10 bytes.
func (r *wreader) leb() {
	for i := 0; i < 10; i++ {
		if r.byte() < 0x80 {
			return
		}
	}
	r.err = errors.New("bad LEB128")
}

// blockType skips a block type: 0x40, a value type, or an s33 type index.
func (r *wreader) blockType() {
	if r.pos >= len(r.b) {
		r.err = errors.New("unexpected end")
		return
	}
	switch r.b[r.pos] {
	case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		r.pos++
	default:
		r.leb()
	}
}

func (r *wreader) limits() {
	flag := r.byte()
	r.u32()
	if flag&1 != 0 {
		r.u32()
	}
}
