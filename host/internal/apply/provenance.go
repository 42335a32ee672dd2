package apply

import (
	"context"

	"github.com/dynafold/dynafold/abi"
)

// Attributed is implemented by logic whose version can change between calls
// (a hot-swapped plugin, host/swap): it says which version computed each
// evolve, so the row records the plugin that really wrote it.
type Attributed interface {
	EvolveAttributed(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, string, error)
}

// evolve calls the logic and returns the "name@version" that answered.
func (e *Engine) evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, string, error) {
	if a, ok := e.p.Logic.(Attributed); ok {
		return a.EvolveAttributed(ctx, req)
	}
	resp, err := e.p.Logic.Evolve(ctx, req)
	return resp, e.plugin, err
}
