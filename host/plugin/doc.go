// Package plugin runs a projection's domain logic compiled to WebAssembly,
// on wazero, through dynafold's fixed ABI (package abi). A *Plugin implements
// logic.Logic, so the engine calls a Wasm plugin exactly as it calls logic
// written in Go.
//
// # Calling convention
//
// A plugin module exports "memory", dynafold_abi_version() -> i32 returning
// major<<16|minor, dynafold_alloc(size i32) -> i32, and one (ptr i32, len i32)
// -> i64 function per capability (describe, key, evolve required; initial,
// terminal, to_item, effects, self_test optional). The host calls
// dynafold_alloc(n), writes the encoded request there and calls the
// capability; the result is outPtr<<32 | outLen, a buffer whose first byte is
// a status: 0 then the encoded response, or 1 then a UTF-8 error message. A Go
// wasip1 c-shared module is a reactor: the host runs its _initialize export
// once per instance and never runs _start.
//
// # Sandbox
//
// Each instance gets wasi_snapshot_preview1 and the optional dynafold.log
// (below), and nothing else: a module that imports anything else is refused
// at load. The WASI configuration is:
//
//   - no filesystem, no preopened directories, no sockets, no environment
//     variables, no arguments, empty stdin;
//   - stdout and stderr are captured per call (the tail is kept to explain a
//     failure, e.g. a Go panic message) and sent to Config.Logger at debug level;
//   - the wall clock is frozen at the Unix epoch: time.Now in a guest always
//     reads 1970-01-01T00:00:00Z, whatever the instance has done before;
//   - the monotonic clock is virtual (never the host's clock): reading it
//     does not move it, sleeping (poll_oneoff with a timeout) moves it by
//     exactly the time asked for and returns at once, so time.Sleep of an
//     hour costs nothing and a call measures the same elapsed times on any
//     instance, machine or load; a guest that waits for the clock to move
//     without sleeping runs into CallTimeout;
//   - random_get is a deterministic generator that is reset to the same seed
//     before every call, so a call sees the same "random" bytes whichever
//     instance serves it and whatever that instance served before.
//
// With these defaults the same request gives the same bytes back.
// What the sandbox cannot fix is a guest that depends on its own history: a
// global counter, math/rand's global generator (seeded once per instance,
// deterministically, then advancing with every use), a Go map iterated in
// runtime-randomised order into its output. The guest SDK encodes maps in
// sorted order for that reason.
//
// # Guest logging
//
// A module may import dynafold.log(level, ptr, len) (ABI.md §7; guest.Log in
// the Go SDK). With Config.GuestLog.Enabled, its messages become records of
// Config.Logger at the guest's level, with the attributes plugin and
// function, valid UTF-8 and at most 1 KiB; the plugin's instances share a
// token bucket (GuestLog.Rate, GuestLog.Burst) and what it drops is counted
// and reported in one warning per interval. Without it the import is a no-op,
// so logging never decides whether a plugin loads. The host function finds
// the calling instance in its runtime's registry, where only instances of
// plugins with logging enabled are: a call that does not log costs nothing,
// and a message outside the guest's memory is ignored, never a trap.
//
// # Limits
//
// Config sets explicit limits in the manner of Extism's manifest: the memory
// of each instance (MemoryLimitPages, wazero's RuntimeConfig
// WithMemoryLimitPages), the time of each call (CallTimeout, together with
// the caller's context), optionally the loop iterations of each call
// (MaxLoopIterations) and the number of instances (PoolSize). A trap, a
// timeout, a limit or output that does not decode fails that call only, with
// a *logic.CallError naming the plugin, the function and the cause; the
// instance is discarded (its module closed, its memory released: it may be
// corrupt) and replaced lazily, and every other call carries on.
//
// Timeouts: at load the module is rewritten (see instrument.go) so that every
// loop head counts down and, every few thousand iterations, calls the
// module's own sched_yield import and traps if an interrupt flag is set; a
// timer or the caller's context sets the flag. This keeps the cost of an
// interruptible guest to a decrement and a branch per loop iteration, where
// wazero's WithCloseOnContextDone leaves compiled code at every iteration
// and makes Go guests 10-20 times slower. Modules the rewriter cannot handle
// (SIMD, no sched_yield import) fall back to WithCloseOnContextDone.
//
// Loop budget: the same branch, taken once per 4,096 iterations, also counts
// down a budget the host sets before each call when
// Config.MaxLoopIterations is set, and traps when it runs out (ErrLoopBudget).
// It is a fuel-like cap that fails the same call the same way on any machine
// under any load, where a timeout depends on both. It costs nothing per
// iteration; the Fold benchmark measures no difference with and without it
// (docs/BENCHMARKS.md). It is not an instruction count: straight-line code
// and recursion are not counted, and CallTimeout remains the bound for them.
// wazero's own ways to count were not taken: a function listener
// (experimental.FunctionListener) runs Go code on every function call and
// return, and fuel metering is not part of wazero.
//
// # Instances and compilation
//
// Instances are created lazily up to Config.PoolSize; one instance serves one
// call at a time, and a caller waits (respecting its context) when all are
// busy. Creating one runs the module's start function and _initialize under
// the same watchdog and CallTimeout as a call (the rewrite turns a start
// section into an export the host calls), so a module that never finishes
// starting is refused with ErrTimeout. Plugins loaded without a cache
// directory and with the same memory limit share one wazero.Runtime; with
// Config.CacheDir set, compiled code is kept in that directory, so a later
// process skips compilation. Precompile fills the cache ahead of time.
//
// The cache is verified, not trusted (package internal/wasmcache): each
// module's compiled code is listed in a manifest with a keyed digest of
// each file, authenticated with the cache key (Config.CacheKeyFile), and
// the instrumented module is bound to the SHA-256 of its input the same
// way. What does not verify is refused with a warning and compiled again;
// a directory or key others could change is not used. wazero only ever
// reads verified files, linked into a private directory for the load.
//
// A cache directory shipped in a Lambda zip or a container image is
// read-only: Config.CacheReadOnly says so, and a directory the host cannot
// write (a probe at the first load in a process) is treated the same. It
// serves the modules Precompile (or a load into the directory while it was
// writable) put there; any other module compiles in memory, with one
// warning naming `host plugin precompile`, and nothing is written.
package plugin
