package host

import (
	"context"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
)

// CallObserver is told about every call into a projection's logic: the
// projection, the function ("key" or "evolve"), how long it took and its
// error. It is called from the batch's goroutines, concurrently, and must
// not block.
type CallObserver func(projection, function string, took time.Duration, err error)

// WithCallObserver makes the host time every call into the projections'
// logic (plugins and native logic alike) and report it to f: for a plugin
// call time histogram (host/telemetry).
func WithCallObserver(f CallObserver) Option { return func(o *options) { o.calls = f } }

// observed wraps l so each call is reported to o.calls; l itself when no
// observer is set.
func (o *options) observed(projection string, l logic.Logic) logic.Logic {
	if o.calls == nil {
		return l
	}
	t := &timedLogic{Logic: l, projection: projection, f: o.calls}
	if a, ok := l.(attributed); ok {
		return &timedAttributed{timedLogic: t, a: a}
	}
	return t
}

// attributed is apply.Attributed: logic whose version can change between
// calls says which version answered each evolve. The wrapper keeps it.
type attributed interface {
	EvolveAttributed(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, string, error)
}

type timedLogic struct {
	logic.Logic
	projection string
	f          CallObserver
}

func (t *timedLogic) Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	start := time.Now()
	resp, err := t.Logic.Key(ctx, req)
	t.f(t.projection, abi.CapKey, time.Since(start), err)
	return resp, err
}

func (t *timedLogic) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	start := time.Now()
	resp, err := t.Logic.Evolve(ctx, req)
	t.f(t.projection, abi.CapEvolve, time.Since(start), err)
	return resp, err
}

type timedAttributed struct {
	*timedLogic
	a attributed
}

func (t *timedAttributed) EvolveAttributed(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, string, error) {
	start := time.Now()
	resp, by, err := t.a.EvolveAttributed(ctx, req)
	t.f(t.projection, abi.CapEvolve, time.Since(start), err)
	return resp, by, err
}
