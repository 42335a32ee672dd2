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
	// across processes. `host plugin precompile` (Precompile) fills one to
	// ship beside the binary.
	CacheDir string
	// CacheReadOnly says CacheDir must never be written, as when it ships
	// in a Lambda zip or a container image. A directory found unwritable (a
	// probe, once per process) is read-only too. A read-only cache serves
	// the modules precompiled into it; any other module compiles in memory
	// at every start (logged once as a warning) and nothing fails. Should
	// wazero miss a module marked as precompiled (code compiled for a CPU
	// with other features), it tries to add its entry: on an unwritable
	// directory that fails and the module compiles in memory.
	CacheReadOnly bool
	// Logger receives load events, call failures and the guest's stdout and
	// stderr (debug level). Nil discards them.
	Logger *slog.Logger
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
	return c, nil
}
