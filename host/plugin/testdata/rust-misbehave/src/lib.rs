//! A Rust plugin on the SDK that misbehaves on demand, for the host's
//! containment tests: evolve of an event of type `Boom` reads outside
//! linear memory, `Panic` panics (a Rust panic aborts: a trap), `Loop`
//! never returns, `Hog` allocates without bound; a request holding an event
//! of type `Garbage`, `OutOfBounds`, `Undecodable` or `GuestError` gets a
//! malformed result (an unknown status byte, a pointer outside memory, a
//! body that does not decode, status 1). Any other event counts: the state
//! is `{count: N}`.

use dynafold_guest::{fields, Attrs, Context, Description, Error, Event, Projection, Source, Step};

fields! {
    /// The state: how many events were folded.
    pub struct Count {
        pub count: i64,
    }
}

/// The misbehaving projection.
pub struct Misbehave;

static mut SPINS: u64 = 0;
static mut HOARD: Vec<Vec<u8>> = Vec::new();

impl Projection for Misbehave {
    type State = Count;

    const DESCRIPTION: Description = Description::single("rust-misbehave", "0.0.1", &[Source::new("Order", &["Placed"])]);

    fn key(&self, e: &Event<'_>, _ctx: &Context<'_>, key: &mut Attrs<'_>) -> Result<bool, Error> {
        key.s("pk", e.stream_id());
        Ok(true)
    }

    fn initial(&self, _e: Option<&Event<'_>>, _ctx: &Context<'_>) -> Count {
        Count::default()
    }

    fn evolve(&self, s: &mut Count, e: &Event<'_>, _ctx: &Context<'_>) -> Result<Step, Error> {
        match e.event_type() {
            "Boom" => unsafe {
                // a load far outside linear memory: the Wasm trap
                s.count += core::ptr::read_volatile(0xffff_fff0usize as *const u8) as i64;
            },
            "Panic" => panic!("rust-misbehave: a panic in evolve"),
            "Loop" => loop {
                unsafe { core::ptr::write_volatile(core::ptr::addr_of_mut!(SPINS), SPINS + 1) };
            },
            "Hog" => loop {
                let mut chunk = vec![0u8; 1 << 20];
                for (i, b) in chunk.iter_mut().enumerate() {
                    *b = i as u8;
                }
                unsafe { (*core::ptr::addr_of_mut!(HOARD)).push(chunk) };
            },
            _ => s.count += 1,
        }
        Ok(Step::Applied)
    }
}

#[cfg(target_arch = "wasm32")]
mod exports {
    use super::*;
    use dynafold_guest::wasm;
    use dynafold_guest::Export;

    const P: Misbehave = Misbehave;

    static GARBAGE: [u8; 5] = [7, 0xde, 0xad, 0xbe, 0xef];
    static UNDECODABLE: [u8; 13] = [0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    static GUEST_ERROR: &[u8] = b"\x01cannot fold GuestError";

    fn pack(b: &[u8]) -> i64 {
        ((b.as_ptr() as usize as u64) << 32 | b.len() as u64) as i64
    }

    fn holds(input: &[u8], typ: &[u8]) -> bool {
        let mut needle = vec![typ.len() as u8];
        needle.extend_from_slice(typ);
        input.windows(needle.len()).any(|w| w == needle.as_slice())
    }

    #[export_name = "dynafold_abi_version"]
    pub extern "C" fn abi_version() -> i32 {
        wasm::abi_version()
    }

    #[export_name = "dynafold_alloc"]
    pub extern "C" fn alloc(size: i32) -> i32 {
        wasm::alloc(size as u32) as i32
    }

    #[export_name = "describe"]
    pub extern "C" fn describe(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::Describe, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "key"]
    pub extern "C" fn key(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::Key, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "initial"]
    pub extern "C" fn initial(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::Initial, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "terminal"]
    pub extern "C" fn terminal(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::Terminal, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "to_item"]
    pub extern "C" fn to_item(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::ToItem, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "effects"]
    pub extern "C" fn effects(ptr: i32, len: i32) -> i64 {
        wasm::run(&P, Export::Effects, ptr as u32, len as u32, false) as i64
    }

    #[export_name = "evolve"]
    pub extern "C" fn evolve(ptr: i32, len: i32) -> i64 {
        let input = unsafe { core::slice::from_raw_parts(ptr as usize as *const u8, len as usize) };
        if holds(input, b"Garbage") {
            return pack(&GARBAGE);
        }
        if holds(input, b"OutOfBounds") {
            return (0x7fff_0000i64 << 32) | 4096;
        }
        if holds(input, b"Undecodable") {
            return pack(&UNDECODABLE);
        }
        if holds(input, b"GuestError") {
            return pack(GUEST_ERROR);
        }
        wasm::run(&P, Export::Evolve, ptr as u32, len as u32, false) as i64
    }
}
