//! Logging to the host's log (ABI.md §7, the optional import
//! `dynafold.log`).
//!
//! A module imports `dynafold.log` only if it calls these functions (the
//! linker drops an import nothing calls). The host discards the message
//! unless the operator enabled guest logging for the plugin, keeps its
//! first 1024 bytes and rate-limits; logging never fails and never changes
//! what the plugin computes. Natively (`cargo test`), messages go to
//! standard error.

/// The level of a message, the host's slog levels of the same names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Level {
    /// Debug.
    Debug = 0,
    /// Info.
    Info = 1,
    /// Warn.
    Warn = 2,
    /// Error.
    Error = 3,
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "dynafold")]
extern "C" {
    #[link_name = "log"]
    fn dynafold_log(level: i32, ptr: *const u8, len: usize);
}

/// Sends `msg` to the host's log at `level`.
pub fn log(level: Level, msg: &str) {
    #[cfg(target_arch = "wasm32")]
    unsafe {
        dynafold_log(level as i32, msg.as_ptr(), msg.len())
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("{:?}: {}", level, msg);
}

/// Logs at debug level.
pub fn debug(msg: &str) {
    log(Level::Debug, msg)
}

/// Logs at info level.
pub fn info(msg: &str) {
    log(Level::Info, msg)
}

/// Logs at warn level.
pub fn warn(msg: &str) {
    log(Level::Warn, msg)
}

/// Logs at error level.
pub fn error(msg: &str) {
    log(Level::Error, msg)
}
