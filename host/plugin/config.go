package plugin

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"
)

// Defaults applied by Load to zero fields of Config.
const (
	// DefaultPoolSize is the number of instances, so of calls at once.
	DefaultPoolSize = 10
	// DefaultMemoryLimitPages is 512 pages of 64 KiB: 32 MiB per instance.
	DefaultMemoryLimitPages = 512
	// DefaultCallTimeout bounds one call into a plugin.
	DefaultCallTimeout = 5 * time.Second
	// DefaultGuestLogRate is the average number of guest log messages per
	// second a plugin may log when guest logging is enabled.
	DefaultGuestLogRate = 10
	// DefaultGuestLogBurst is the number of guest log messages a plugin may
	// log at once, above the rate.
	DefaultGuestLogBurst = 100
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
	// CallTimeoutName is the setting CallTimeout came from, named in a
	// timeout's error so a user knows what to change (default
	// "plugins.callTimeout"; a command's flag, e.g. "--timeout").
	CallTimeoutName string
	// CacheDir, when set, is a directory where compiled code is cached
	// across processes. `host plugin precompile` (Precompile) fills one to
	// ship beside the binary. Compiled code is native code the host runs:
	// every file of it is verified against its module's manifest, which the
	// cache key authenticates (see CacheKeyFile), before it is used; what
	// does not verify is refused with a warning and compiled again. A
	// directory (or key file) writable by group or others, or owned by
	// another user than this one or root, is not used at all (a warning
	// says how to fix its mode).
	CacheDir string
	// CacheKeyFile is the file holding the cache key (64 hex digits, as
	// `openssl rand -hex 32` prints). Without it the key is
	// $DYNAFOLD_CACHE_KEY, else the file dynafold-cache.key in CacheDir,
	// generated (0600) on first use when CacheDir is writable. Keep the key
	// outside the directory when the directory's content may come from
	// elsewhere (a CI cache, a shared volume): whoever holds the key can
	// write compiled code the host accepts.
	CacheKeyFile string
	// CacheReadOnly says CacheDir must never be written, as when it ships
	// in a Lambda zip or a container image. A directory found unwritable (a
	// probe, once per process) is read-only too. A read-only cache serves
	// the modules precompiled into it; any other module compiles in memory
	// at every start (logged once as a warning) and nothing fails; so does a
	// module whose precompiled code does not verify or was compiled for a
	// CPU with other features. Nothing is ever written there.
	CacheReadOnly bool
	// Logger receives load events, call failures (debug: the error is
	// returned to the caller, who reports it), the guest's stdout and
	// stderr (debug level) and, with GuestLog enabled, the guest's log
	// messages. Nil discards them.
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
	// GuestLog lets the guest log into Logger (off by default).
	GuestLog GuestLog
}

// GuestLog configures logging from the guest into the host's Logger
// (ABI.md §7): the raw ABI's optional import dynafold.log, and an Extism PDK's
// log functions. Messages carry the attributes plugin and function, at the
// guest's level (debug, info, warn, error); the Logger's handler filters
// them by level as any other record. A plugin's instances share one token
// bucket: messages over it are dropped, and a warning says how many, at most
// every few seconds.
//
// When Enabled is false a guest may still import dynafold.log: its messages
// are discarded, so enabling logging never changes whether a plugin loads or
// what it computes.
type GuestLog struct {
	// Enabled sends the guest's messages to Logger.
	Enabled bool
	// Rate is the average number of messages per second the plugin may log,
	// all its instances together (default DefaultGuestLogRate).
	Rate float64
	// Burst is the number of messages the plugin may log at once (default
	// DefaultGuestLogBurst).
	Burst int
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
	if c.GuestLog.Rate == 0 {
		c.GuestLog.Rate = DefaultGuestLogRate
	}
	if c.GuestLog.Burst == 0 {
		c.GuestLog.Burst = DefaultGuestLogBurst
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
	case c.GuestLog.Rate < 0 || math.IsNaN(c.GuestLog.Rate) || math.IsInf(c.GuestLog.Rate, 0):
		return c, fmt.Errorf("%w: GuestLog.Rate %v must be a positive number of messages per second", ErrConfig, c.GuestLog.Rate)
	case c.GuestLog.Burst < 0:
		return c, fmt.Errorf("%w: GuestLog.Burst %d is negative", ErrConfig, c.GuestLog.Burst)
	}
	return c, c.checkLoopBudget()
}

// callTimeoutName returns the setting a timeout's error names.
func (c Config) callTimeoutName() string {
	if c.CallTimeoutName == "" {
		return "plugins.callTimeout"
	}
	return c.CallTimeoutName
}
