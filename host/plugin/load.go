package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/internal/calls"
	"github.com/dynafold/dynafold/internal/guestlog"
	"github.com/dynafold/dynafold/internal/instpool"
	"github.com/dynafold/dynafold/internal/wasmcache"
)

// Plugin is a loaded Wasm plugin: a compiled module and a pool of its
// instances. It implements logic.Logic and is safe for concurrent use.
type Plugin struct {
	cfg      Config
	name     string // for errors: "name@version"
	desc     abi.Description
	wasmHash string // hex SHA-256 of the module
	rt       *sharedRuntime
	compiled wazero.CompiledModule
	exports  map[string]bool // the capabilities the module exports
	pool     *instpool.Pool[*instance]
	logs     *guestLogs // nil unless the module imports dynafold.log and GuestLog is enabled
	cacheDir string     // the cache that served or keeps the compiled code; "" when none did
	cacheHit bool       // the compiled code came from the cache
	closed   atomic.Bool
}

var _ logic.Logic = (*Plugin)(nil)

// LoadFile reads a module from path and loads it (see Load). Without
// cfg.Name, the file's base name names the plugin until describe answers.
func LoadFile(ctx context.Context, path string, cfg Config) (*Plugin, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Plugin: path, Cause: err}
	}
	if cfg.Name == "" {
		return load(ctx, wasm, cfg, strings.TrimSuffix(filepath.Base(path), ".wasm"))
	}
	return Load(ctx, wasm, cfg)
}

// Load compiles a module, validates it and returns it ready to call: the
// exports follow the calling convention, the ABI major version is this host's
// (else an *ABIVersionError), nothing but WASI is imported, and describe
// decodes and lists describe, key and evolve. One instance is created to do
// so; it joins the pool.
func Load(ctx context.Context, wasm []byte, cfg Config) (*Plugin, error) {
	return load(ctx, wasm, cfg, "")
}

// Precompile compiles a module into cfg.CacheDir, so that a later Load with
// the same CacheDir and MemoryLimitPages (in this or another process) skips
// compilation, also a Load that opens the directory read-only
// (Config.CacheReadOnly) as a Lambda zip or a container image ships it;
// CacheDir must be writable now. It does not instantiate the module.
func Precompile(ctx context.Context, wasm []byte, cfg Config) error {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	if cfg.CacheDir == "" {
		return fmt.Errorf("%w: Precompile needs a CacheDir", ErrConfig)
	}
	if err := wasmcache.PrecompileCheck(cfg.CacheDir, cfg.CacheReadOnly, cfg.CacheKeyFile); err != nil {
		return fmt.Errorf("%w: Precompile needs a writable CacheDir it can trust: %w", ErrConfig, err)
	}
	cache, err := wasmcache.Open(cfg.CacheDir, false, cfg.CacheKeyFile)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	sum := sha256.Sum256(wasm)
	code, ierr := instrumentCached(cache, cfg.Logger, "", wasm, sum)
	if ierr != nil {
		code = wasm
	}
	rt, compiled, _, err := compile(ctx, cfg, cache, code, moduleKey(sum, ierr == nil), ierr != nil, "")
	if err != nil {
		return err
	}
	defer rt.release(ctx)
	return compiled.Close(ctx)
}

func load(ctx context.Context, wasm []byte, cfg Config, fallbackName string) (_ *Plugin, err error) {
	sum := sha256.Sum256(wasm)
	hash := hex.EncodeToString(sum[:])
	name := cfg.Name
	if name == "" {
		name = fallbackName
	}
	if name == "" {
		name = "sha256:" + hash[:12]
	}
	fail := func(err error) (*Plugin, error) {
		if _, ok := err.(*ABIVersionError); ok {
			return nil, err
		}
		return nil, &LoadError{Plugin: name, Cause: err}
	}
	cfg, err = cfg.WithDefaults()
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	cache := openCache(cfg, name)
	code, ierr := instrumentCached(cache, cfg.Logger, name, wasm, sum)
	if ierr != nil {
		cfg.Logger.Info("plugin not instrumented; timeouts use wazero's slower close-on-context-done",
			"plugin", name, "reason", ierr)
		code = wasm
		if cfg.MaxLoopIterations > 0 {
			return fail(fmt.Errorf("%w: MaxLoopIterations needs the loop instrumentation, which this module does not allow: %w", ErrConfig, ierr))
		}
	}
	rt, compiled, res, err := compile(ctx, cfg, cache, code, moduleKey(sum, ierr == nil), ierr != nil, name)
	if err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		// compiling does not watch the context: a caller that gave up
		// meanwhile (a shutdown while starting) gets no plugin
		_ = compiled.Close(context.WithoutCancel(ctx))
		_ = rt.release(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("stopped after compiling: %w", err))
	}
	p := &Plugin{cfg: cfg, name: name, wasmHash: hash, rt: rt, compiled: compiled, cacheDir: res.Dir, cacheHit: res.Hit}
	defer func() {
		if err != nil {
			p.release(context.WithoutCancel(ctx))
		}
	}()
	if err = checkExports(p.compiled); err != nil {
		return fail(err)
	}
	p.exports = map[string]bool{}
	for name := range p.compiled.ExportedFunctions() {
		p.exports[name] = isCapability(name)
	}
	if importsLog(p.compiled) {
		if cfg.GuestLog.Enabled {
			p.logs = &guestLogs{reg: &rt.logs, sink: guestlog.New(cfg.Logger, &p.name, cfg.GuestLog.Rate, cfg.GuestLog.Burst, guestLogEvery)}
		} else {
			cfg.Logger.Info("plugin imports dynafold.log but guest logging is off: its messages are discarded; "+
				"to see them set plugin.Config.GuestLog.Enabled (host configuration: \"guestLog\": {\"enabled\": true})",
				"plugin", name)
		}
	}
	p.pool = instpool.New(cfg.PoolSize, p.newInstance)

	in, err := p.newInstance(ctx)
	if err != nil {
		return fail(fmt.Errorf("instantiate: %w", err))
	}
	var major, minor uint32
	if _, err = in.guarded(ctx, startTimeout(cfg), func(ctx context.Context) (err error) {
		major, minor, err = in.abiVersion(ctx)
		return err
	}); err != nil {
		in.Close(ctx)
		return fail(fmt.Errorf("%s: %w", exportVersion, err))
	}
	if major != abi.VersionMajor {
		in.Close(ctx)
		return fail(&ABIVersionError{Plugin: name, Major: major, Minor: minor, HostMajor: abi.VersionMajor, HostMinor: abi.VersionMinor})
	}
	var out []byte
	fired, err := in.guarded(ctx, startTimeout(cfg), func(ctx context.Context) (err error) {
		out, err = in.invoke(ctx, abi.CapDescribe, nil)
		return err
	})
	if err != nil {
		in.Close(ctx)
		return fail(p.classify(ctx, abi.CapDescribe, in, fired, err))
	}
	body, err := p.body(abi.CapDescribe, out)
	if err != nil {
		in.Close(ctx)
		return fail(err)
	}
	desc, err := calls.Describe(body, major, minor, func(c abi.Capability) bool { return p.compiled.ExportedFunctions()[c] != nil })
	if err != nil {
		in.Close(ctx)
		return fail(err)
	}
	p.desc = *desc
	p.name = calls.Name(cfg.Name, p.name, desc)
	p.pool.Adopt(ctx, in) // hand the validated instance to the pool
	// Debug: a module loaded is not yet accepted (a hot-swap candidate
	// still meets its checks); the host logs the plugin it serves.
	cfg.Logger.Debug("plugin loaded", "plugin", p.name, "sha256", hash[:12],
		"abi", fmt.Sprintf("%d.%d", major, minor), "capabilities", desc.Capabilities,
		"elapsed", time.Since(start))
	return p, nil
}

// newInstance instantiates the module in the sandbox, its _initialize
// bounded by CallTimeout.
func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	out := &guestOutput{log: p.cfg.Logger, plugin: &p.name}
	return newInstance(ctx, p.rt.rt, p.compiled, out, p.logs, startTimeout(p.cfg))
}

// startTimeoutForTest, when positive (set by tests), bounds the start of
// an instance and the calls of Load instead of CallTimeout, so that a test
// can give looping calls a short CallTimeout without the starts racing it
// on a loaded machine.
var startTimeoutForTest atomic.Int64

// startTimeout bounds the start of an instance (its start function and
// _initialize) and Load's calls of dynafold_abi_version and describe:
// cfg.CallTimeout, unless a test set startTimeoutForTest.
func startTimeout(cfg Config) time.Duration {
	if d := time.Duration(startTimeoutForTest.Load()); d > 0 {
		return d
	}
	return cfg.CallTimeout
}

// Name returns the plugin's name and version ("order-summary@1.0.0"), as
// errors and logs name it.
func (p *Plugin) Name() string { return p.name }

// SHA256 returns the hex SHA-256 of the module's bytes.
func (p *Plugin) SHA256() string { return p.wasmHash }

// Describe returns what describe answered at load.
func (p *Plugin) Describe() abi.Description { return p.desc }

// Close refuses new calls, waits for the calls in flight (until ctx ends)
// and releases the instances, the compiled module and, with the last plugin
// using it, the runtime.
func (p *Plugin) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	p.pool.Close(ctx)
	if p.logs != nil {
		p.logs.sink.Close() // report what was dropped since the last report
	}
	return p.release(ctx)
}

func (p *Plugin) release(ctx context.Context) error {
	var err error
	if p.compiled != nil {
		err = p.compiled.Close(ctx)
	}
	if rerr := p.rt.release(ctx); err == nil {
		err = rerr
	}
	return err
}
