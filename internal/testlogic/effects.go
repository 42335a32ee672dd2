package testlogic

import (
	"context"
	"strconv"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
)

// Effects wraps a logic and gives its applied events outbox effects: Of
// returns an event's effects (nil: none). Count, when set instead of Of,
// gives every applied event that many effects, each
// {"stream", "streamId", "version", "i"}.
type Effects struct {
	logic.Logic
	mu    sync.Mutex
	of    func(ev abi.Event) []abi.Value
	count int
}

// WithEffects returns l whose applied events carry n effects each.
func WithEffects(l logic.Logic, n int) *Effects { return &Effects{Logic: l, count: n} }

// SetCount makes every applied event carry n effects from now on.
func (e *Effects) SetCount(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.count, e.of = n, nil
}

// SetOf makes f give each applied event's effects from now on.
func (e *Effects) SetOf(f func(ev abi.Event) []abi.Value) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.of = f
}

// EffectOf is the i-th effect Count gives ev.
func EffectOf(ev abi.Event, i int) abi.Value {
	return abi.M(abi.Item{"stream": abi.S(ev.Stream), "streamId": abi.S(ev.StreamID),
		"version": abi.N(strconv.FormatUint(ev.Version, 10)), "i": abi.N(strconv.Itoa(i))})
}

// Evolve implements logic.Logic.
func (e *Effects) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	resp, err := e.Logic.Evolve(ctx, req)
	if err != nil {
		return resp, err
	}
	e.mu.Lock()
	of, n := e.of, e.count
	e.mu.Unlock()
	for i := range resp.Decisions {
		if resp.Decisions[i].Outcome != abi.Applied {
			continue
		}
		ev := req.Events[i].Event
		if of != nil {
			resp.Decisions[i].Effects = of(ev)
			continue
		}
		for j := 0; j < n; j++ {
			resp.Decisions[i].Effects = append(resp.Decisions[i].Effects, EffectOf(ev, j))
		}
	}
	return resp, nil
}
