package lambda

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/dynafold/dynafold/host/swap"
)

// swapGate keeps hot swaps between invocations. Every invocation
// holds it shared while it processes its batch; a check of the plugins'
// sources holds it exclusively. An invocation checks when it starts, before
// it reads its payload: the batch before it has been answered, its own has
// not begun, so a module swapped in then serves the whole of this
// invocation and none of the previous one.
//
// The check runs only when it can take the gate at once (TryLock): in a
// Lambda environment that runs invocations one at a time it always can;
// where the runtime runs several at once (AWS_LAMBDA_MAX_CONCURRENCY), an
// invocation that starts while another is in flight skips the check rather
// than wait for the others to drain, and the next one to start with none in
// flight checks. A module that appears during an invocation is therefore
// never used by it: nothing swaps until no invocation is in flight.
//
// The check runs under the invocation's context less the deadline margin,
// and its time counts in the invocation's: loading a new module (compiling
// it, the smoke test) delays this invocation's batch, and a load cut short
// by the deadline refuses that module, which the source does not offer
// again until it changes (or a cold start loads it).
//
// Checking after answering, before the handler returns, would delay the
// response by the check, and checking in the background after returning is
// not possible: Lambda freezes the environment once the response is sent,
// and a background check could still be running when the next invocation
// starts.
type swapGate struct{ mu sync.RWMutex }

// swapOutcome counts what one invocation's check did.
type swapOutcome struct {
	checked  bool // the host hot-swaps and its sources were checked
	swaps    int  // versions swapped in
	failures int  // sources that failed, modules refused
}

// checkSwaps checks the host's hot-swap sources (host.Host.CheckSwaps) when no
// invocation is in flight. A failure is logged and counted, never returned:
// the version serving before keeps serving and the invocation goes on.
func (x *handler) checkSwaps(ctx context.Context, log *slog.Logger) swapOutcome {
	var o swapOutcome
	if !x.gate.mu.TryLock() {
		return o // another invocation is in flight: the next idle one checks
	}
	defer x.gate.mu.Unlock()
	for _, c := range x.host.CheckSwaps(ctx) {
		o.checked = true
		switch {
		case c.Err != nil:
			o.failures++
			var ce *swap.CandidateError
			if errors.As(c.Err, &ce) {
				// The Swapper has logged the refusal with its step.
				continue
			}
			log.Warn("plugin source check failed; the current version keeps serving",
				"projection", c.Projection, "serving", c.Serving.Plugin, "err", c.Err.Error())
		case c.Swapped:
			o.swaps++ // the Swapper has logged the swap
		}
	}
	return o
}

// begin checks the hot-swap sources and enters the invocation: no swap
// happens until the returned function is called.
func (x *handler) begin(ctx context.Context, log *slog.Logger) (swapOutcome, func()) {
	o := x.checkSwaps(ctx, log)
	x.gate.mu.RLock()
	return o, x.gate.mu.RUnlock
}
