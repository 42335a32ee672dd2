package plugin

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults applied by Load to zero fields of Config.
const (
	// DefaultPoolSize is the engine's default row concurrency (SPEC P7).
	DefaultPoolSize = 10
	// DefaultMemoryLimitPages is 512 pages of 64 KiB: 32 MiB per instance.
	DefaultMemoryLimitPages = 512
	// DefaultCallTimeout bounds one call into a plugin.
	DefaultCallTimeout = 5 * time.Second
)

// Config holds the options of a loaded plugin. It is passed by value and never
// changed after Load; zero fields take the defaults above.
type Config struct {
	// Name overrides the name the plugin gives itself in describe; it names
	// the plugin in errors and logs.
	Name string
	// PoolSize is the maximum number of instances, and so of concurrent calls.
	PoolSize int
	// MemoryLimitPages caps the linear memory of each instance, in 64 KiB
	// pages (at most 65536).
	MemoryLimitPages uint32
	// CallTimeout bounds each call into the plugin, including the
	// instantiation of a new instance.
	CallTimeout time.Duration
	// CacheDir, when set, is a directory where compiled code is cached
	// across processes.
	CacheDir string
	// Logger receives load events, call failures and the guest's stdout and
	// stderr (debug level). Nil discards them.
	Logger *slog.Logger
	// MaxLoopIterations, when positive, is a fuel-like budget: a call whose
	// guest runs more loop iterations (every loop of the module, counted at
	// loop heads in blocks of 4,096, so it runs at least this many and at
	// most 4,096 more) fails with ErrLoopBudget. Unlike CallTimeout it does
	// not depend on the machine's speed or load. Straight-line code and
	// recursion are not counted; CallTimeout still bounds them. 0, the
	// default, sets no budget. Only modules the host can instrument support
	// it (Load refuses the others), and the Extism transport does not.
	MaxLoopIterations int64
}

// WithDefaults returns c with the defaults in its zero fields, or ErrConfig
// when a field cannot work. Every transport's Load applies it.
func (c Config) WithDefaults() (Config, error) {
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case c.PoolSize < 0:
		return c, fmt.Errorf("%w: PoolSize %d is negative", ErrConfig, c.PoolSize)
	case c.MemoryLimitPages > 65536:
		return c, fmt.Errorf("%w: MemoryLimitPages %d exceeds 65536 (4 GiB)", ErrConfig, c.MemoryLimitPages)
	case c.CallTimeout < 0:
		return c, fmt.Errorf("%w: CallTimeout %s is negative", ErrConfig, c.CallTimeout)
	}
	return c, c.checkLoopBudget()
}
