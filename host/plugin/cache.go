package plugin

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// moduleKey names a module's compiled code in the cache: the SHA-256 of
// the module as given to Load and how it is compiled (instrumented by this
// version of the rewrite, or left as is with wazero's own termination
// checks, which changes the code).
func moduleKey(sum [32]byte, instrumented bool) string {
	if instrumented {
		return fmt.Sprintf("%s-instrumented-v%d", hex.EncodeToString(sum[:]), instrumentVersion)
	}
	return hex.EncodeToString(sum[:]) + "-closeondone"
}

// compile acquires a runtime for cfg and compiles code, the module (or its
// instrumented form) named module, in it. With a cache, the code its
// manifest vouches for is verified and serves the compilation, and what is
// compiled is kept in a writable cache (see package wasmcache); without, it
// compiles in memory.
func compile(ctx context.Context, cfg Config, cache *wasmcache.Cache, code []byte, module string, closeOnDone bool, name string) (*sharedRuntime, wazero.CompiledModule, wasmcache.Result, error) {
	type result struct {
		rt       *sharedRuntime
		compiled wazero.CompiledModule
	}
	r, res, err := wasmcache.Compile(cache, module, name, cfg.Logger,
		func(dir string) (result, error) {
			rcfg := cfg
			rcfg.CacheDir = dir
			rt, err := acquireRuntime(ctx, rcfg, closeOnDone)
			if err != nil {
				return result{}, err
			}
			compiled, err := rt.rt.CompileModule(ctx, code)
			if err != nil {
				rt.release(ctx)
				return result{}, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
			}
			return result{rt, compiled}, nil
		})
	return r.rt, r.compiled, res, err
}

// openCache opens cfg's cache for a load, or returns nil (after a warning)
// when there is none or it cannot be used.
func openCache(cfg Config, name string) *wasmcache.Cache {
	return wasmcache.OpenOrWarn(cfg.CacheDir, cfg.CacheReadOnly, cfg.CacheKeyFile, name, cfg.Logger)
}
