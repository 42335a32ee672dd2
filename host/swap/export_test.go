package swap

// SetPrepareHookForTest makes f run each time a candidate enters the
// pipeline (Offer, Rollback), before it is loaded, and returns a function
// restoring the previous hook.
func SetPrepareHookForTest(f func(Candidate)) (restore func()) {
	old := prepareHook.Swap(&f)
	return func() { prepareHook.Store(old) }
}
