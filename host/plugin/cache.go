package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// compileKey names compiled code in the cache's markers: its SHA-256 and
// whether wazero adds its own termination checks, which changes wazero's
// cache key.
func compileKey(code []byte, closeOnDone bool) string {
	sum := sha256.Sum256(code)
	key := hex.EncodeToString(sum[:])
	if closeOnDone {
		key += "-closeondone"
	}
	return key
}

// compile acquires the runtime for cfg and compiles code in it. A writable
// CacheDir serves hits and keeps misses (and marks the module as compiled
// there); a read-only one (Config.CacheReadOnly, or found unwritable) is
// used only for a module marked in it, any other compiles in memory and
// nothing is written (see package wasmcache). Should wazero still miss in a
// read-only directory (code compiled for another CPU), the module compiles
// again in memory rather than fail.
func compile(ctx context.Context, cfg Config, code []byte, closeOnDone bool, name string) (*sharedRuntime, wazero.CompiledModule, error) {
	type result struct {
		rt       *sharedRuntime
		compiled wazero.CompiledModule
	}
	r, err := wasmcache.Compile(cfg.CacheDir, cfg.CacheReadOnly, compileKey(code, closeOnDone), name, cfg.Logger,
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
	return r.rt, r.compiled, err
}

// cacheReadOnly reports whether cfg's CacheDir must not be written.
func cacheReadOnly(cfg Config) bool {
	return cfg.CacheDir != "" && wasmcache.ReadOnly(cfg.CacheDir, cfg.CacheReadOnly)
}
