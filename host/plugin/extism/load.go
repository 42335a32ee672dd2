package extism

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/internal/calls"
	"github.com/dynafold/dynafold/internal/guestlog"
	"github.com/dynafold/dynafold/internal/instpool"
	"github.com/dynafold/dynafold/internal/wasmcache"
)

// Plugin is a loaded Extism plugin: an extism.CompiledPlugin and a pool of
// its instances. It implements logic.Logic and is safe for concurrent use.
type Plugin struct {
	cfg      Config
	name     string // for errors: "name@version"
	desc     abi.Description
	wasmHash string
	compiled *extism.CompiledPlugin
	cache    *sharedCache
	wasi     bool
	exports  map[string]bool // the capabilities the module exports
	pool     *instpool.Pool[*instance]
	logs     *guestlog.Sink // nil unless the module logs and GuestLog is enabled
	cacheDir string         // the cache that served or keeps the compiled code; "" when none did
	cacheHit bool           // the compiled code came from the cache
	closed   atomic.Bool
}

var _ logic.Logic = (*Plugin)(nil)

// capabilities lists every capability export name of the ABI.
var capabilities = []string{"describe", "key", "evolve", "initial", "terminal", "to_item", "effects", "self_test"}

func isCapability(name string) bool {
	for _, c := range capabilities {
		if c == name {
			return true
		}
	}
	return false
}

// LoadFile reads a module from path and loads it (see Load). Without
// cfg.Name, the file's base name names the plugin until describe answers.
func LoadFile(ctx context.Context, path string, cfg Config) (*Plugin, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Plugin: path, Cause: err}
	}
	return load(ctx, wasm, cfg, strings.TrimSuffix(filepath.Base(path), ".wasm"))
}

// Load compiles an Extism plugin module, validates it and returns it ready to
// call. The module must import from "extism:host/env" (and otherwise only
// wasi_snapshot_preview1) and export dynafold_abi_version, describe, key and
// evolve as Extism functions (() -> i32); dynafold_abi_version returns
// major<<16|minor as its return code, a module of another major version is
// refused with an *ABIVersionError, and describe must decode and list
// describe, key and evolve. One instance is created to do so; it joins the
// pool.
func Load(ctx context.Context, wasm []byte, cfg Config) (*Plugin, error) {
	return load(ctx, wasm, cfg, "")
}

// Precompile compiles a module (and the Extism kernel) into cfg.CacheDir,
// so that a later Load with the same CacheDir and MemoryLimitPages, in this
// or another process, skips compilation. It validates the
// module's imports and exports but does not instantiate it. The later Load
// may open CacheDir read-only (Config.CacheReadOnly); it must be writable
// now.
func Precompile(ctx context.Context, wasm []byte, cfg Config) error {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	if cfg.CacheDir == "" {
		return fmt.Errorf("%w: Precompile needs a CacheDir", ErrConfig)
	}
	mod, err := parseModule(wasm)
	if err != nil {
		return err
	}
	wasi, err := checkModule(mod)
	if err != nil {
		return err
	}
	if err := wasmcache.PrecompileCheck(cfg.CacheDir, cfg.CacheReadOnly, cfg.CacheKeyFile); err != nil {
		return fmt.Errorf("%w: Precompile needs a writable CacheDir it can trust: %w", ErrConfig, err)
	}
	cache, compiled, _, err := compilePlugin(ctx, wasm, sha256.Sum256(wasm), cfg, wasi, "")
	if err != nil {
		return err
	}
	if cache != nil {
		defer cache.release(ctx)
	}
	return compiled.Close(ctx)
}

// runtimeConfig is the wazero configuration of a plugin's runtime.
func runtimeConfig(cfg Config, cache *sharedCache) wazero.RuntimeConfig {
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(closeOnContextDone). // CallTimeout and the caller's context
		WithMemoryLimitPages(cfg.MemoryLimitPages)
	if cache != nil {
		rc = rc.WithCompilationCache(cache.cache)
	}
	return rc
}

// manifestFor is the Extism manifest of a plugin: no AllowedHosts,
// AllowedPaths or Config (no network, no filesystem), and MaxVarBytes 0,
// which disables Extism vars, so an instance keeps no state between calls
// (ABI.md §2).
func manifestFor(wasm []byte, cfg Config) extism.Manifest {
	return extism.Manifest{
		Wasm:   []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{MaxPages: cfg.MemoryLimitPages, MaxVarBytes: 0},
	}
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
	if cfg, err = cfg.WithDefaults(); err != nil {
		return fail(err)
	}
	if cfg.MaxLoopIterations > 0 {
		return fail(fmt.Errorf("%w: MaxLoopIterations is not supported by the Extism transport", ErrConfig))
	}
	start := time.Now()
	mod, err := parseModule(wasm)
	if err != nil {
		return fail(err)
	}
	wasi, err := checkModule(mod)
	if err != nil {
		return fail(err)
	}
	p := &Plugin{cfg: cfg, name: name, wasmHash: hash, wasi: wasi, exports: map[string]bool{}}
	for _, e := range mod.exports {
		if e.kind == 0 && isCapability(e.name) {
			p.exports[e.name] = true
		}
	}
	defer func() {
		if err != nil {
			p.release(context.WithoutCancel(ctx))
		}
	}()
	var res wasmcache.Result
	if p.cache, p.compiled, res, err = compilePlugin(ctx, wasm, sum, cfg, wasi, name); err != nil {
		return fail(err)
	}
	p.cacheDir, p.cacheHit = res.Dir, res.Hit
	if importsLog(mod) && cfg.GuestLog.Enabled {
		p.logs = guestlog.New(cfg.Logger, &p.name, cfg.GuestLog.Rate, cfg.GuestLog.Burst, guestLogEvery)
		enableSDKLogging(cfg.Logger)
	}
	p.pool = instpool.New(cfg.PoolSize, p.newInstance)

	in, err := p.newInstance(ctx)
	if err != nil {
		return fail(fmt.Errorf("instantiate: %w", err))
	}
	major, minor, err := p.abiVersion(ctx, in)
	if err != nil {
		in.Close(ctx)
		return fail(err)
	}
	if major != abi.VersionMajor {
		in.Close(ctx)
		return fail(&ABIVersionError{Plugin: name, Major: major, Minor: minor, HostMajor: abi.VersionMajor, HostMinor: abi.VersionMinor})
	}
	out, err := p.invoke(ctx, in, abi.CapDescribe, nil)
	if err != nil {
		in.Close(ctx)
		return fail(err)
	}
	desc, err := calls.Describe(out, major, minor, func(c abi.Capability) bool { return p.exports[c] })
	if err != nil {
		in.Close(ctx)
		return fail(err)
	}
	p.desc = *desc
	p.name = calls.Name(cfg.Name, p.name, desc)
	p.pool.Adopt(ctx, in)
	// Debug: a module loaded is not yet accepted (a hot-swap candidate
	// still meets its checks); the host logs the plugin it serves.
	cfg.Logger.Debug("plugin loaded", "plugin", p.name, "transport", "extism", "sha256", hash[:12],
		"abi", fmt.Sprintf("%d.%d", major, minor), "capabilities", desc.Capabilities,
		"elapsed", time.Since(start))
	return p, nil
}

// closeOnContextDone is how CallTimeout and the caller's context stop a
// running guest (wazero checks for cancellation in every loop and call);
// tests turn it off to measure its cost.
var closeOnContextDone = true

// checkModule validates a module's imports and exports against the Extism
// form of the ABI; it reports whether the module imports WASI.
func checkModule(m *module) (wasi bool, err error) {
	extismImports := false
	for _, im := range m.imports {
		switch im.module {
		case ExtismHostModule:
			extismImports = true
		case "wasi_snapshot_preview1":
			wasi = true
		case "env":
			if im.name == "abort" {
				return false, fmt.Errorf("%w: imports env.abort; build an AssemblyScript plugin with --use abort=<your handler> (see plugins/examples/order-summary-as)", ErrInvalidModule)
			}
			fallthrough
		default:
			return false, fmt.Errorf("%w: imports %s.%s; the host provides %s and wasi_snapshot_preview1 only",
				ErrInvalidModule, im.module, im.name, ExtismHostModule)
		}
	}
	if !extismImports {
		return false, fmt.Errorf("%w: not an Extism plugin: it imports nothing from %q", ErrInvalidModule, ExtismHostModule)
	}
	for _, name := range []string{exportVersion, "describe", "key", "evolve"} {
		if !m.exportsFunc(name) {
			return false, fmt.Errorf("%w: missing export %q", ErrInvalidModule, name)
		}
	}
	for _, e := range m.exports {
		if e.kind != 0 || (e.name != exportVersion && !isCapability(e.name)) {
			continue
		}
		t, ok := m.signature(e.name)
		if !ok || len(t.params) != 0 || len(t.results) != 1 || t.results[0] != valI32 {
			return false, fmt.Errorf("%w: export %q must be an Extism function () -> i32", ErrInvalidModule, e.name)
		}
	}
	return wasi, nil
}

// Name returns the plugin's name and version ("order-summary@1.0.0"), as
// errors and logs name it.
func (p *Plugin) Name() string { return p.name }

// SHA256 returns the hex SHA-256 of the module's bytes.
func (p *Plugin) SHA256() string { return p.wasmHash }

// Describe returns what describe answered at load.
func (p *Plugin) Describe() abi.Description { return p.desc }

// Transport returns TransportExtism.
func (p *Plugin) Transport() Transport { return TransportExtism }

// Close refuses new calls, waits for the calls in flight (until ctx ends)
// and releases the instances, the compiled plugin and its runtime.
func (p *Plugin) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	p.pool.Close(ctx)
	if p.logs != nil {
		p.logs.Close() // report what was dropped since the last report
	}
	return p.release(ctx)
}

func (p *Plugin) release(ctx context.Context) error {
	var err error
	if p.compiled != nil {
		err = p.compiled.Close(ctx)
		p.compiled = nil
	}
	if p.cache != nil {
		if cerr := p.cache.release(ctx); err == nil {
			err = cerr
		}
		p.cache = nil
	}
	return err
}

// sharedCache is a reference-counted wazero compilation cache per
// directory, shared by the plugins loaded with the same CacheDir (each
// extism.CompiledPlugin has its own runtime; the compiled code is shared).
type sharedCache struct {
	dir   string
	cache wazero.CompilationCache
	refs  int
}

var caches = struct {
	sync.Mutex
	m map[string]*sharedCache
}{m: map[string]*sharedCache{}}

func acquireCache(dir string) (*sharedCache, error) {
	caches.Lock()
	defer caches.Unlock()
	if c := caches.m[dir]; c != nil {
		c.refs++
		return c, nil
	}
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("compilation cache %s: %w", dir, err)
	}
	c := &sharedCache{dir: dir, cache: cache, refs: 1}
	caches.m[dir] = c
	return c, nil
}

func (c *sharedCache) release(ctx context.Context) error {
	caches.Lock()
	c.refs--
	last := c.refs == 0
	if last {
		delete(caches.m, c.dir)
	}
	caches.Unlock()
	if last {
		return c.cache.Close(ctx)
	}
	return nil
}
