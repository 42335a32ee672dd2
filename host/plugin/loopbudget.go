package plugin

import "fmt"

// MaxLoopIterationsLimit is the largest Config.MaxLoopIterations: the
// budget is kept in an i32 global, in units of 4,096 iterations.
const MaxLoopIterationsLimit = (1<<31 - 2) * yieldEvery

// checkLoopBudget validates Config.MaxLoopIterations (0 means no budget).
func (c Config) checkLoopBudget() error {
	if c.MaxLoopIterations < 0 || c.MaxLoopIterations > MaxLoopIterationsLimit {
		return fmt.Errorf("%w: MaxLoopIterations %d is outside [0, %d]", ErrConfig, c.MaxLoopIterations, int64(MaxLoopIterationsLimit))
	}
	return nil
}

// loopBudgetTicks converts a loop budget to the value of the module's budget
// global: one tick per yieldEvery iterations, one more than n/yieldEvery
// because the countdown carries over from the instance's previous call, so
// that a call always runs at least n iterations and traps within
// n+yieldEvery. 0 (no budget) stays 0.
func loopBudgetTicks(n int64) uint64 {
	if n <= 0 {
		return 0
	}
	return uint64(n/yieldEvery + 1)
}

// armLoopBudget sets the instance's loop budget for the next call.
func (in *instance) armLoopBudget(ticks uint64) {
	if ticks > 0 && in.budget != nil {
		in.budget.Set(ticks)
	}
}

// loopBudgetExhausted reports whether a failed call trapped because its loop
// budget ran out: the guest traps as the budget reaches zero, and the host
// never sets it to zero while a budget is configured.
func (p *Plugin) loopBudgetExhausted(in *instance) bool {
	return p.cfg.MaxLoopIterations > 0 && in != nil && in.budget != nil && in.budget.Get() == 0
}
