package plugin

import (
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/host/plugin/internal/calls"
)

// Errors returned by Load, matched with errors.Is.
var (
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("invalid plugin configuration")
	// ErrABIVersion reports a module built for an ABI major version this
	// host does not implement; the error is an *ABIVersionError.
	ErrABIVersion = errors.New("unsupported plugin ABI version")
	// ErrInvalidModule reports a module that does not follow the calling
	// convention: a missing export, a wrong signature, a foreign import.
	ErrInvalidModule = errors.New("invalid plugin module")
	// ErrDescription reports a describe result that does not decode or
	// lacks a required capability.
	ErrDescription = calls.ErrDescription
	// ErrClosed is returned by calls on a closed plugin.
	ErrClosed = errors.New("plugin closed")
)

// Causes of a failed call, matched with errors.Is on the *logic.CallError a
// call returns.
var (
	// ErrTimeout: the call ran past Config.CallTimeout.
	ErrTimeout = errors.New("timeout")
	// ErrMemoryLimit: the instance needed more memory than
	// Config.MemoryLimitPages.
	ErrMemoryLimit = errors.New("memory limit reached")
	// ErrTrap: the guest trapped, or exited (a Go guest's unrecovered panic).
	ErrTrap = errors.New("trap")
	// ErrBadOutput: the guest's output is out of bounds or does not decode.
	ErrBadOutput = errors.New("malformed output")
	// ErrGuest: the guest reported an error (status 1) instead of a result.
	ErrGuest = errors.New("guest error")
	// ErrCanceled: the caller's context ended during the call or while
	// waiting for a free instance.
	ErrCanceled = errors.New("canceled")
	// ErrLoopBudget: the call ran more loop iterations than
	// Config.MaxLoopIterations.
	ErrLoopBudget = errors.New("loop budget exhausted")
)

// ABIVersionError is a load error for a module whose ABI major version the
// host does not implement. It matches ErrABIVersion.
type ABIVersionError struct {
	Plugin               string // the plugin's name as far as known
	Major, Minor         uint32 // the module's ABI version
	HostMajor, HostMinor uint32 // the host's ABI version
}

// Error implements error.
func (e *ABIVersionError) Error() string {
	return fmt.Sprintf("plugin %s: ABI version %d.%d is not supported by this host (ABI %d.x); rebuild the plugin with a %d.x SDK",
		e.Plugin, e.Major, e.Minor, e.HostMajor, e.HostMajor)
}

// Is reports whether target is ErrABIVersion.
func (e *ABIVersionError) Is(target error) bool { return target == ErrABIVersion }

// LoadError is a failure to load a plugin: it names the plugin and wraps one
// of the sentinel errors above (or an I/O or compilation error).
type LoadError struct {
	Plugin string // the plugin's name as far as known (Config.Name, file name or hash)
	Cause  error  // what failed
}

// Error implements error.
func (e *LoadError) Error() string { return fmt.Sprintf("plugin %s: load: %v", e.Plugin, e.Cause) }

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Cause }

// cause is the Cause of a logic.CallError: its text says what happened
// ("timeout after 5s"), it matches one of the sentinels and unwraps to the
// underlying runtime error, if any.
type cause struct {
	kind error
	text string
	err  error
}

func (c *cause) Error() string        { return c.text }
func (c *cause) Is(target error) bool { return target == c.kind }
func (c *cause) Unwrap() error        { return c.err }

func newCause(kind error, err error, format string, args ...any) *cause {
	return &cause{kind: kind, text: fmt.Sprintf(format, args...), err: err}
}

// NewCause returns the Cause of a failed call for a transport: text says
// what happened, it matches kind (one of the sentinels above) with
// errors.Is and unwraps to err, the underlying runtime error, if any.
func NewCause(kind, err error, format string, args ...any) error {
	return newCause(kind, err, format, args...)
}
