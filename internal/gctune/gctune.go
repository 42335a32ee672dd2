// Package gctune gives the garbage collector of dynafold's commands room
// when the memory they may use is known: a Lambda function's configured
// memory, or a container's memory limit.
//
// Go's default (GOGC=100, no memory limit) collects whenever the heap
// doubles. The host's heap is small and its garbage is short-lived (the
// items of one batch), so at that pace the collector takes a sixth of a
// batch's CPU. With a budget known, the commands let the heap grow to five
// times what is live (GOGC=400) and set a soft limit at three quarters of
// the budget (GOMEMLIMIT): below the limit the collector runs a quarter as
// often; near it, Go collects as often as it must to stay under it.
//
// A GOGC or GOMEMLIMIT in the environment is the operator's choice and is
// left alone, as is a process whose budget is unknown.
package gctune

import (
	"fmt"
	"io/fs"
	"runtime/debug"
	"strconv"
	"strings"
)

// Percent is the GOGC the commands set when a budget is known.
const Percent = 400

// Settings are the garbage collector's settings for one budget.
type Settings struct {
	// Percent is the heap's growth between collections (GOGC).
	Percent int
	// Limit is the soft memory limit in bytes (GOMEMLIMIT).
	Limit int64
}

// String shows s as the environment would set it.
func (s Settings) String() string {
	return fmt.Sprintf("GOGC=%d GOMEMLIMIT=%dMiB", s.Percent, s.Limit>>20)
}

// For returns the settings for a budget of budget bytes, or false when
// the environment sets GOGC or GOMEMLIMIT, or the budget is unknown (0)
// or too small to leave the runtime anything (under 32 MiB).
func For(getenv func(string) string, budget int64) (Settings, bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || budget < 32<<20 {
		return Settings{}, false
	}
	return Settings{Percent: Percent, Limit: budget / 4 * 3}, true
}

// Apply sets s for the whole process.
func Apply(s Settings) {
	debug.SetGCPercent(s.Percent)
	debug.SetMemoryLimit(s.Limit)
}

// LambdaBudget is a Lambda function's memory, which Lambda gives in
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE (MiB); 0 when unset or not a number.
func LambdaBudget(getenv func(string) string) int64 {
	mb, err := strconv.ParseInt(strings.TrimSpace(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")), 10, 64)
	if err != nil || mb <= 0 || mb > 1<<20 {
		return 0
	}
	return mb << 20
}

// CgroupBudget is the memory limit of the process's control group, read
// from root (os.DirFS("/") in the commands): cgroup v2's
// sys/fs/cgroup/memory.max, else v1's
// sys/fs/cgroup/memory/memory.limit_in_bytes; 0 when neither names a
// limit ("max", or v1's near-2^63 for none).
func CgroupBudget(root fs.FS) int64 {
	for _, name := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0
		}
		return n
	}
	return 0
}
