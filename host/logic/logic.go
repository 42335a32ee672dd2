// Package logic is the boundary between the projection engine and a
// projection's domain logic: the Logic interface the engine calls, whether the
// logic runs as a Wasm plugin (package host/plugin) or natively in Go.
package logic

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// Logic is a projection's domain logic. Implementations are safe for
// concurrent use: a Wasm implementation keeps a pool of instances and never
// calls one instance concurrently.
type Logic interface {
	// Describe returns what the logic reads and exports.
	Describe() abi.Description
	// Key names the row each event folds into (or none).
	Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error)
	// Evolve folds one row's run of events in one call.
	Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error)
	// Close releases the logic's resources.
	Close(ctx context.Context) error
}

// CallError is a failure of a call into the logic itself (a trap, a timeout,
// a memory limit, output that does not decode), as opposed to a typed error
// returned by the domain code, which travels in abi.Decision.Error.
type CallError struct {
	Plugin   string // the plugin's name and version
	Function string // the export called: "key", "evolve", ...
	Cause    error  // what went wrong
}

// Error implements error.
func (e *CallError) Error() string {
	return fmt.Sprintf("plugin %s: %s: %v", e.Plugin, e.Function, e.Cause)
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Cause }

// ErrOutput is matched by *OutputError.
var ErrOutput = errors.New("plugin output that cannot be written")

// OutputError is an item or an effect a plugin returned that DynamoDB would
// refuse (a number it cannot store, an empty or duplicated set, an empty
// attribute name, too deep, over 400 KB) or whose key attributes are not
// its row's. It is found where the output is made, before anything is
// written: the row fails, nothing is written, and its records are
// delivered again until the plugin is fixed. host plugin validate (through
// a Go plugin's self test), host plugin test and the hot-swap smoke test
// run the same check, so such a module is refused before it serves.
type OutputError struct {
	Projection string // the projection (for an offline fold, the plugin's name)
	Plugin     string // name@version
	// The event whose fold made the output: for an item, the last event
	// applied to the row; for an effect, the event that produced it.
	Stream, StreamID string
	Version          uint64
	Type             string
	Output           string // what was refused: "to_item", "effect 2" (of the event), "outbox item of effect 2"
	Path             string // the attribute path, e.g. "qty" or "lines[2].price" ("" for the value itself)
	Problem          string // what is wrong
}

// Error names the plugin, the projection, the event, the attribute and the
// problem, and says what to do.
func (e *OutputError) Error() string {
	attr := "its value"
	if e.Path != "" {
		attr = fmt.Sprintf("attribute %q", e.Path)
	}
	return fmt.Sprintf("plugin %s, projection %q, event %s %s v%d (%s): %s returned %s that %s; nothing was written: fix the plugin and deploy the fix (the records are delivered again until then)",
		e.Plugin, e.Projection, e.Stream, e.StreamID, e.Version, e.Type, e.Output, attr, e.Problem)
}

// Is matches ErrOutput.
func (e *OutputError) Is(target error) bool { return target == ErrOutput }
