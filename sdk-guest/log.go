package guest

import (
	"fmt"
	"log/slog"
)

// Level is the level of a guest log message: LevelDebug, LevelInfo,
// LevelWarn or LevelError, the host's slog levels of the same names.
type Level int32

// The levels of Log, as the raw ABI numbers them (ABI.md §7).
const (
	LevelDebug Level = 0
	LevelInfo  Level = 1
	LevelWarn  Level = 2
	LevelError Level = 3
)

// slogLevel maps l to slog's level (native builds).
func (l Level) slogLevel() slog.Level {
	switch {
	case l <= LevelDebug:
		return slog.LevelDebug
	case l == LevelInfo:
		return slog.LevelInfo
	case l == LevelWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Log sends msg to the host's log at level (ABI.md §7). (The names
// Error and Errorf are the SDK's domain errors, so there are no per-level
// functions: write guest.Log(guest.LevelWarn, "...").)
//
// In a Wasm module it calls the host import dynafold.log, which the module
// imports only if it calls Log or Logf: Go's
// linker drops the import of a module that never logs. The host discards the
// message unless the operator enabled guest logging for the plugin, keeps
// its first 1024 bytes, and drops messages over the plugin's rate limit; Log
// never fails and never changes what the plugin computes.
//
// Run natively (host/logic.Native, tests), it logs to slog.Default(), with
// no rate limit.
func Log(level Level, msg string) { hostLog(level, msg) }

// Logf formats its arguments as fmt.Sprintf does and logs the result (see
// Log). Formatting links package fmt into the module: Log with a string built
// by hand keeps a module smaller.
func Logf(level Level, format string, args ...any) { hostLog(level, fmt.Sprintf(format, args...)) }
