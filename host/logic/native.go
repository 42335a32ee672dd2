package logic

import (
	"context"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// Native returns a Logic that runs h in process, without Wasm: for tests,
// benchmarks and Go programs that link a projection in. name identifies the
// logic in errors. A panic or error of h becomes a *CallError, like a trap of
// a Wasm plugin; h must be safe for concurrent use (the guest SDK's plugins
// are).
func Native(h abi.Handler, name string) Logic {
	return &native{h: h, name: name, desc: h.Describe()}
}

type native struct {
	h    abi.Handler
	name string
	desc abi.Description
}

func (n *native) Describe() abi.Description { return n.desc }

func (n *native) Key(ctx context.Context, req *abi.KeyRequest) (resp *abi.KeyResponse, err error) {
	if err := ctx.Err(); err != nil {
		return nil, n.fail(abi.CapKey, err)
	}
	defer n.recover(abi.CapKey, &err)
	resp, err = n.h.Key(req)
	if err != nil {
		return nil, n.fail(abi.CapKey, err)
	}
	if len(resp.Keys) != len(req.Events) {
		return nil, n.fail(abi.CapKey, fmt.Errorf("%d keys for %d events", len(resp.Keys), len(req.Events)))
	}
	return resp, nil
}

func (n *native) Evolve(ctx context.Context, req *abi.EvolveRequest) (resp *abi.EvolveResponse, err error) {
	if err := ctx.Err(); err != nil {
		return nil, n.fail(abi.CapEvolve, err)
	}
	defer n.recover(abi.CapEvolve, &err)
	resp, err = n.h.Evolve(req)
	if err != nil {
		return nil, n.fail(abi.CapEvolve, err)
	}
	if len(resp.Decisions) > len(req.Events) {
		return nil, n.fail(abi.CapEvolve, fmt.Errorf("%d decisions for %d events", len(resp.Decisions), len(req.Events)))
	}
	return resp, nil
}

func (n *native) Close(context.Context) error { return nil }

func (n *native) fail(function string, cause error) error {
	return &CallError{Plugin: n.plugin(), Function: function, Cause: cause}
}

func (n *native) plugin() string {
	if n.desc.Version != "" {
		return n.name + "@" + n.desc.Version
	}
	return n.name
}

func (n *native) recover(function string, err *error) {
	if r := recover(); r != nil {
		*err = n.fail(function, fmt.Errorf("panic: %v", r))
	}
}
