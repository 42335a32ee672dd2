// Package swap replaces a projection's plugin while the host runs: a *Swapper is a logic.Logic that delegates every call to the current
// version of a plugin, and Offer puts a new version in its place.
//
// # Candidates
//
// A new module (a Candidate, from a Source or from the caller) goes through
// a pipeline before it may serve a call, and a module that fails any step
// never replaces a working one; the failure is logged and counted:
//
//  1. pin: when Config.Pins lists SHA-256 digests, the module's digest must
//     be one of them (ErrPinMismatch);
//  2. load: the module is loaded with its transport (the raw ABI through
//     host/plugin, or an Extism PDK module through host/plugin/extism; see
//     host/plugin/extism/transport), which compiles it and validates the
//     calling convention, the ABI version and describe (ErrLoad, wrapping
//     the loader's errors);
//  3. compatibility: describe's name, sources (name, stream, mode, in
//     order) and capabilities must match what the configuration expects
//     (ErrIncompatible);
//  4. smoke test: the module's self_test export when it has one, else
//     Config.Fixture (events and the rows they must give), else nothing
//     (ErrSmokeTest).
//
// # Swapping
//
// The current version is held behind an atomic pointer with a reference
// count: a call takes a reference on the version it starts on and keeps it
// to the end, so calls in flight finish on the old version while new calls
// start on the new one; the old version's plugin is closed when its last
// call returns. No lock is taken on the call path.
//
// # Provenance
//
// Describe reflects the current version. Because the engine (host/internal/apply)
// reads Describe once when it is built, a Swapper also names the version
// that served each evolve: EvolveAttributed returns it, and with
// Config.WrittenBy set, Evolve stamps the item it returns with
// "name@version" in that attribute, so every written row records the version
// that computed it, swap or no swap.
//
// # Sources
//
// DirSource watches a local directory with fsnotify; S3Source polls a
// versioned object of an S3-compatible store with If-None-Match, so an
// unchanged module is never downloaded again. Watch runs a source into a
// Swapper; CheckOnce checks it once (between two Lambda invocations).
package swap
