//! The raw calling convention (ABI.md §2), used by the exports that
//! [`export!`](crate::export!) defines: the host calls `dynafold_alloc(n)`,
//! writes the request there, then an export with `(ptr, n)`; the export
//! returns `outPtr << 32 | outLen`, the response behind a status byte,
//! valid until the next call into the instance.

use std::cell::UnsafeCell;

use crate::fold::{call, Export, ABI_MAJOR, ABI_MINOR};
use crate::projection::Projection;
use crate::testing::{run_cases, Case};
use crate::wire::put_strs;

struct Buffers {
    input: Vec<u8>,
    output: Vec<u8>,
}

/// The module's buffers. An instance is called by one host thread at a
/// time (ABI.md §2), so there is never more than one user.
struct Global(UnsafeCell<Buffers>);

unsafe impl Sync for Global {}

static BUFFERS: Global = Global(UnsafeCell::new(Buffers { input: Vec::new(), output: Vec::new() }));

#[allow(clippy::mut_from_ref)]
fn buffers() -> &'static mut Buffers {
    // SAFETY: a Wasm instance runs one call at a time, and no reference
    // outlives the export that took it.
    unsafe { &mut *BUFFERS.0.get() }
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "wasi_snapshot_preview1")]
extern "C" {
    fn sched_yield() -> i32;
}

/// `major << 16 | minor`. The host calls it once, first: it also yields
/// once, so that the module imports `wasi_snapshot_preview1.sched_yield`,
/// the import the host's loop instrumentation calls (without it, the host
/// enforces timeouts by a slower mechanism and cannot apply a loop
/// budget).
#[doc(hidden)]
pub fn abi_version() -> i32 {
    #[cfg(target_arch = "wasm32")]
    unsafe {
        sched_yield();
    }
    (ABI_MAJOR << 16 | ABI_MINOR) as i32
}

/// The address of a buffer of at least `size` bytes (reused by the next
/// call).
#[doc(hidden)]
pub fn alloc(size: u32) -> u32 {
    if size == 0 {
        return 0;
    }
    let b = buffers();
    if size as usize > b.input.capacity() {
        b.input = Vec::with_capacity(size as usize + size as usize / 4);
    }
    b.input.clear();
    b.input.resize(size as usize, 0);
    b.input.as_ptr() as usize as u32
}

fn result(out: &[u8]) -> u64 {
    (out.as_ptr() as usize as u64) << 32 | out.len() as u64
}

fn fail(b: &mut Buffers, msg: &str) -> u64 {
    b.output.clear();
    b.output.push(1);
    b.output.extend_from_slice(msg.as_bytes());
    result(&b.output)
}

/// Installs, once per instance, a panic hook that writes the panic as one
/// line starting "panic:" to stderr: the line the host names when the
/// abort that follows traps (Rust on wasm32 cannot unwind). The default
/// hook's last line is a note about RUST_BACKTRACE.
fn panic_hook() {
    static HOOKED: std::sync::Once = std::sync::Once::new();
    HOOKED.call_once(|| {
        std::panic::set_hook(Box::new(|info| eprintln!("panic: {}", info)));
    });
}

/// Runs export `e` of `p` on the request at `ptr`.
#[doc(hidden)]
pub fn run<P: Projection>(p: &P, e: Export, ptr: u32, len: u32, self_test: bool) -> u64 {
    panic_hook();
    let b = buffers();
    let input: &[u8] = if len == 0 {
        &[]
    } else if !b.input.is_empty() && b.input.as_ptr() as usize as u32 == ptr && len as usize <= b.input.len() {
        &b.input[..len as usize]
    } else {
        return fail(b, "input buffer was not obtained from dynafold_alloc");
    };
    let mut out = std::mem::take(&mut b.output);
    out.clear();
    out.push(0);
    let r = call(p, e, input, &mut out, self_test);
    b.output = out;
    match r {
        Ok(()) => result(&b.output),
        Err(msg) => fail(b, &msg),
    }
}

/// The self_test export: status 0, then one message per failing case.
#[doc(hidden)]
pub fn self_test<P: Projection>(p: &P, cases: fn() -> Vec<Case>) -> u64 {
    panic_hook();
    let b = buffers();
    let failures = run_cases(p, &cases());
    b.output.clear();
    b.output.push(0);
    let refs: Vec<&str> = failures.iter().map(|s| s.as_str()).collect();
    put_strs(&mut b.output, &refs);
    result(&b.output)
}

/// Makes a [`Projection`](crate::Projection) the plugin a Wasm module
/// exports: `dynafold_abi_version`, `dynafold_alloc`, `describe`, `key`,
/// `evolve`, `initial`, `terminal`, `to_item` and `effects`. With
/// `self_test = f` (`f: fn() -> Vec<testing::Case>`), the module also
/// exports `self_test`, which folds those cases inside the module when the
/// host validates it or before a hot swap:
///
/// ```ignore
/// dynafold_guest::export!(Accounts);
/// dynafold_guest::export!(Accounts, self_test = cases::all);
/// ```
///
/// Use it once, in a `cdylib` crate built for `wasm32-wasi` (or
/// `wasm32-wasip1`); on other targets it expands to nothing.
#[macro_export]
macro_rules! export {
    ($p:expr) => {
        $crate::__export_common!($p, false);
    };
    ($p:expr, self_test = $cases:expr) => {
        $crate::__export_common!($p, true);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[export_name = "self_test"]
            pub extern "C" fn __dynafold_self_test(_ptr: i32, _len: i32) -> i64 {
                $crate::wasm::self_test(&$p, $cases) as i64
            }
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_common {
    ($p:expr, $st:expr) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[export_name = "dynafold_abi_version"]
            pub extern "C" fn __dynafold_abi_version() -> i32 {
                $crate::wasm::abi_version()
            }
            #[export_name = "dynafold_alloc"]
            pub extern "C" fn __dynafold_alloc(size: i32) -> i32 {
                $crate::wasm::alloc(size as u32) as i32
            }
            #[export_name = "describe"]
            pub extern "C" fn __dynafold_describe(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Describe, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "key"]
            pub extern "C" fn __dynafold_key(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Key, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "evolve"]
            pub extern "C" fn __dynafold_evolve(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Evolve, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "initial"]
            pub extern "C" fn __dynafold_initial(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Initial, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "terminal"]
            pub extern "C" fn __dynafold_terminal(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Terminal, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "to_item"]
            pub extern "C" fn __dynafold_to_item(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::ToItem, ptr as u32, len as u32, $st) as i64
            }
            #[export_name = "effects"]
            pub extern "C" fn __dynafold_effects(ptr: i32, len: i32) -> i64 {
                $crate::wasm::run(&$p, $crate::Export::Effects, ptr as u32, len as u32, $st) as i64
            }
        };
    };
}
