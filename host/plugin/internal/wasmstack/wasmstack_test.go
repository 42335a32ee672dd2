package wasmstack

import (
	"strings"
	"testing"
)

// The traces are wazero's, from host/plugin/testdata/trap (Shape, Panic).
const shapeTrace = `wasm error: out of bounds memory access
wasm stack trace:
	.main.__folder_go.shape.struct___WarehouseID_string__ddb___warehouseId_____Qty_int__ddb___qty_______.fold(i32) i32
	.main.__folder_go.shape.struct___WarehouseID_string__ddb___warehouseId_____Qty_int__ddb___qty_______.fold(i32) i32
	.main.__folder_go.shape.struct___WarehouseID_string__ddb___warehouseId_____Qty_int__ddb___qty_______.fold(i32) i32
	.main.evolve.func1(i32) i32
	.github.com_dynafold_dynafold_host_plugin_testdata_rawguest.Evolve(i32) i32
	.wasm_pc_f_loop_export(i32)
	.evolve(i32,i32) i64`

const panicTrace = `wasm error: unreachable
wasm stack trace:
	.runtime.abort(i32) i32
	.runtime.fatalpanic(i32) i32
	.runtime.gopanic(i32) i32
	.runtime.sigpanic(i32) i32
	.main.evolve.func1(i32) i32
	.github.com_dynafold_dynafold_host_plugin_testdata_rawguest.Evolve(i32) i32
	.wasm_pc_f_loop_export(i32)
	.evolve(i32,i32) i64`

func TestW6_TrapTextIsOneShortReadableLine(t *testing.T) {
	tests := []struct {
		text, reason, want string
	}{
		{shapeTrace, "", "out of bounds memory access; wasm stack: main.(*folder[…]).fold ×3 < main.evolve.func1 < rawguest.Evolve < evolve"},
		{panicTrace, "panic: runtime error: invalid memory address or nil pointer dereference",
			"unreachable: panic: runtime error: invalid memory address or nil pointer dereference; wasm stack: main.evolve.func1 < rawguest.Evolve < evolve"},
		{"wasm error: unreachable\nwasm stack trace:\n\t.runtime.abort(i32) i32\n\t.runtime.fatal(i32) i32", "fatal error: deadlock",
			"unreachable: fatal error: deadlock; wasm stack: runtime.abort < runtime.fatal"},
		{"wasm error: unreachable", "", "unreachable"},
	}
	for _, tt := range tests {
		got := Short(tt.text, tt.reason)
		if got != tt.want {
			t.Errorf("Short:\n got %q\nwant %q", got, tt.want)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("Short is not one line: %q", got)
		}
	}
}

func TestW6_FramesAreDemangled(t *testing.T) {
	for in, want := range map[string]string{
		".main.__folder_go.shape.int_.fold(i32) i32":                   "main.(*folder[…]).fold",
		".main.fold_go.shape.struct___X_abi.Item___(i32) i32":          "main.fold[…]",
		".main.fold_go.shape.string_(i32) i32":                         "main.fold[…]",
		"main.(*fold[go.shape.struct { X string }]).run":               "main.(*fold[…]).run",
		".github.com_dynafold_dynafold_sdk-guest.Register(i32) i32":    "sdk-guest.Register",
		".github.com_acme_inventory_stock.__core_go.shape.int_.evolve": "stock.(*core[…]).evolve",
		".self_test(i32,i32) i64":                                      "self_test",
		"." + strings.Repeat("x", 200) + "(i32) i32":                   strings.Repeat("x", 79) + "…",
	} {
		if got := Frame(in); got != want {
			t.Errorf("Frame(%q) = %q, want %q", in, got, want)
		}
	}
	frames := Short("wasm error: unreachable\nwasm stack trace:\n"+strings.Repeat("\t.main.a(i32) i32\n\t.main.b(i32) i32\n", 10), "")
	if n := strings.Count(frames, " < "); n != MaxFrames {
		t.Errorf("%d frames kept, want %d and a count of the rest: %q", n+1, MaxFrames, frames)
	}
	if !strings.HasSuffix(frames, "… (14 more)") {
		t.Errorf("the frames left out are not counted: %q", frames)
	}
}

// A Rust guest's panic, as wazero reports it (the order-summary-rs
// panic path): the standard library's panic machinery is left out and the
// guest's frames are demangled without their hashes.
const rustPanicTrace = `wasm error: unreachable
wasm stack trace:
	.__rust_start_panic(i32,i32) i32
	.rust_panic(i32,i32)
	._ZN3std9panicking20rust_panic_with_hook17h6ac9107c42850161E(i32,i32,i32,i32,i32)
	._ZN3std9panicking19begin_panic_handler28_$u7b$$u7b$closure$u7d$$u7d$17h8ef066ac0c3d2b11E(i32)
	._ZN3std10sys_common9backtrace26__rust_end_short_backtrace17h42ab4cf7df7f372fE(i32)
	.rust_begin_unwind(i32)
	._ZN4core9panicking9panic_fmt17h5c5e3d6a8b7f9a01E(i32,i32)
	._ZN84_$LT$rust_misbehave..Misbehave$u20$as$u20$dynafold_guest..projection..Projection$GT$6evolve17h1234567890abcdefE(i32,i32,i32,i32) i32
	._ZN14dynafold_guest4fold4call17h949813c3b1f8945aE(i32,i32) i32
	.evolve(i32,i32) i64`

func TestW7_RustFramesAreDemangledAndItsPanicMachineryLeftOut(t *testing.T) {
	got := Short(rustPanicTrace, "panic: panicked at 'boom', src/lib.rs:69:38")
	want := "unreachable: panic: panicked at 'boom', src/lib.rs:69:38; wasm stack: " +
		"<rust_misbehave::Misbehave as dynafold_guest::projection::Projection>::evolve < dynafold_guest::fold::call < evolve"
	if got != want {
		t.Errorf("Short:\n got %s\nwant %s", got, want)
	}
	for sym, want := range map[string]string{
		"_ZN14dynafold_guest4fold4call17h949813c3b1f8945aE": "dynafold_guest::fold::call",
		"_ZN4core3fmt5write17h0123456789abcdefE":            "core::fmt::write",
		"_ZN3foo3barE":                                      "foo::bar",
		"_ZN3foo":                                           "_ZN3foo", // not a whole symbol: as it is
		"_ZN99xE":                                           "_ZN99xE",
	} {
		if got := Frame(sym); got != want {
			t.Errorf("Frame(%q) = %q, want %q", sym, got, want)
		}
	}
}
