//! The Rust guest SDK of dynafold: projection plugins as WebAssembly
//! modules, on the ABI of `abi/ABI.md` (version 1.2), with nothing but
//! `std`.
//!
//! A plugin is a type implementing [`Projection`] (key, initial state,
//! evolve; optionally terminal, to_item, effects), its state a struct
//! declared with [`fields!`], and one [`export!`] line:
//!
//! ```ignore
//! use dynafold_guest::{errorf, export, fields, Attrs, Context, Decimal, Description, Error, Event, Projection, Source, Step};
//!
//! fields! {
//!     pub struct Account {
//!         pub account_id: String = "accountId",
//!         pub balance: Decimal,
//!     }
//! }
//!
//! pub struct Accounts;
//!
//! impl Projection for Accounts {
//!     type State = Account;
//!     const DESCRIPTION: Description = Description::single("accounts", "1.0.0",
//!         &[Source::new("Account", &["MoneyDeposited"])]);
//!     fn key(&self, e: &Event, _: &Context, key: &mut Attrs) -> Result<bool, Error> {
//!         key.s("pk", &format!("Account#{}", e.stream_id())).s("sk", "Account");
//!         Ok(true)
//!     }
//!     fn initial(&self, _: Option<&Event>, ctx: &Context) -> Account {
//!         Account { account_id: ctx.stream_id().into(), ..Default::default() }
//!     }
//!     fn evolve(&self, s: &mut Account, e: &Event, _: &Context) -> Result<Step, Error> {
//!         let amount = e.decimal("amount").ok_or_else(|| errorf!("BadAmount", "v{}: no amount", e.version()))?;
//!         s.balance = s.balance.add(&amount);
//!         Ok(Step::Applied)
//!     }
//! }
//!
//! export!(Accounts);
//! ```
//!
//! Build the `cdylib` crate for `wasm32-wasi` (Debian's rustc 1.63 and
//! `libstd-rust-dev-wasm32`) or `wasm32-wasip1` (rustup's toolchains): the
//! module is a reactor the host loads like a Go plugin. Test it natively
//! with [`testing`] (`cargo test`), and ship the same cases as the module's
//! self test (`export!(Accounts, self_test = cases)`).
//!
//! Numbers are exact: [`Decimal`] for arithmetic, [`Number`] to pass a
//! number's text through, `f64` only where a float is meant (written in
//! the Go SDK's shortest form). Rows and messages read the same as the Go
//! SDK's: state attributes in declared order, the same error tags and the
//! same decoding messages. A panic in a Wasm module traps (Rust on
//! wasm32 aborts): the host fails that call, and so the row, and reports
//! the panic's message.

#![warn(missing_docs)]

mod bytes;
mod decimal;
mod event;
mod fields;
mod fold;
pub mod log;
mod projection;
pub mod testing;
pub mod text;
mod value;
#[doc(hidden)]
pub mod wasm;
pub mod wire;

pub use decimal::{Decimal, DecimalError, Rounding, DECIMAL_DIGITS};
pub use event::Event;
pub use fields::{decode_fields, decode_into, decode_map, encode_fields, encode_map, Attrs, Bytes, DecodeError, Effects, Field, Fields, Number};
pub use fold::{call, Export, ABI_MAJOR, ABI_MINOR};
pub use projection::{Context, Description, Error, Mode, Projection, Source, Step, StreamKey, Tagged};
pub use value::{decode_opt_item, encode_entries, encode_opt_item, find, Attributes, Item, Value, ValueRef};
