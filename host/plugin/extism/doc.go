// Package extism runs dynafold plugins written with an Extism PDK
// through github.com/extism/go-sdk, on the same wazero runtime as package
// host/plugin. A *Plugin implements logic.Logic, so the engine calls an
// Extism plugin exactly as it calls a raw one or logic written in Go.
//
// # Transports
//
// Detect tells the two conventions apart from a module's import and export
// sections, without compiling it: a module that imports from the Extism
// kernel ("extism:host/env") is an Extism plugin (Load it here); one that
// exports dynafold_abi_version and dynafold_alloc is a raw dynafold plugin
// (load it with host/plugin).
//
// # Calling convention
//
// An Extism plugin exports the ABI's function set (abi/ABI.md) as Extism
// functions, () -> i32: describe, key and evolve (required), initial,
// terminal, to_item, effects and self_test (optional), and
// dynafold_abi_version, whose return code is major<<16|minor. Each function
// reads the encoded request as its Extism input and sets as its output the
// same bytes a raw plugin returns: a status byte (0, or 1 and a message),
// then the encoded response. An Extism error (error_set) without a trap is a
// guest error like status 1; a trap, with or without an error message, fails
// the call and replaces the instance.
//
// # Sandbox and limits
//
// The host gives the plugin the Extism kernel and, only when the module
// imports it, WASI with the same deterministic settings as host/plugin (wall
// clock frozen at the epoch, a virtual monotonic clock (moved only by
// sleeping), a random source reset to
// one seed before every call, no filesystem, environment or arguments).
// The manifest allows no HTTP hosts, no paths and no config, and sets
// max_var_bytes to 0, so an instance keeps no state between calls. Config
// sets the same limits as host/plugin's: MemoryLimitPages caps every memory
// of an instance (the guest's and the kernel's, which holds the request and
// the response), CallTimeout bounds each call (wazero's close-on-context-
// done, with the caller's context), PoolSize the number of instances. A
// trap, a timeout, the memory limit or output that does not decode fails that
// call only, with a *logic.CallError naming the plugin, the function and the
// cause (matched with errors.Is against ErrTrap, ErrTimeout, ...); a module
// of another ABI major version is refused with an *ABIVersionError naming
// both versions.
//
// # Guest logging
//
// An Extism PDK's log functions (extism:host/env log_debug, log_info,
// log_warn, log_error) take the place of the raw ABI's dynafold.log: with
// Config.GuestLog.Enabled their messages go to Config.Logger with the
// attributes plugin and function, under the same per-plugin rate limit and
// size bound as host/plugin's (internal/guestlog); without it they are
// discarded. The go-sdk (1.7) has a logger per instance (Plugin.SetLogger),
// which this package sets, but only one process-wide level
// (extism.SetLogLevel), whose default drops everything: the first plugin
// loaded with guest logging sets it to debug (guest trace messages are
// never forwarded), and plugins without guest logging discard what their
// instances then receive. The SDK's own per-call debug message ("Calling
// function") is left out. The SDK reads a log message from the kernel's
// memory itself and traps on a bad offset, with or without guest logging.
//
// # Cost
//
// The raw ABI stays the fast path. An Extism call costs tens of
// microseconds even for an empty function (docs/BENCHMARKS.md, "Extism
// transport"): the SDK looks each export up anew for every call and for
// every kernel function the guest calls (wazero allocates a call engine and
// its stack per lookup), the guest reads its input 8 bytes per host call and
// writes its output 8 bytes per kernel call, and close-on-context-done adds
// a check to every loop iteration of the guest. This package reuses
// instances and request buffers; the guest is built with -O3.
//
// # Wiring
//
// The package does not import host/plugin, so host/plugin (or any loader)
// can import it: Config has exactly the fields of plugin.Config, in the same
// order (extism.Config(cfg) converts), and the error sentinels say the same
// as host/plugin's. Package transport (host/plugin/extism/transport) imports
// both and loads a module with whichever transport Detect finds.
package extism
