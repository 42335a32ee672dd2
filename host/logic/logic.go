// Package logic is the boundary between the projection engine and a
// projection's domain logic: the Logic interface the engine calls, whether the
// logic runs as a Wasm plugin (package host/plugin) or natively in Go.
package logic

import (
	"context"
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
