package extism

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// compileKey names a plugin's compiled code (the module and the Extism
// kernel) in the cache's markers.
func compileKey(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	key := "extism-" + hex.EncodeToString(sum[:])
	if !closeOnContextDone {
		key += "-noclose"
	}
	return key
}

// compilePlugin compiles a plugin with cfg's CacheDir as host/plugin does: a
// writable directory serves hits, keeps misses and marks the plugin as
// compiled; a read-only one (Config.CacheReadOnly, or found unwritable)
// serves only a plugin marked in it, any other compiles in memory and
// nothing is written; should wazero still miss there (another CPU, another
// Extism kernel), the plugin compiles again in memory rather than fail.
func compilePlugin(ctx context.Context, wasm []byte, cfg Config, wasi bool, name string) (*sharedCache, *extism.CompiledPlugin, error) {
	type result struct {
		cache    *sharedCache
		compiled *extism.CompiledPlugin
	}
	r, err := wasmcache.Compile(cfg.CacheDir, cfg.CacheReadOnly, compileKey(wasm), name, cfg.Logger,
		func(dir string) (r result, err error) {
			if dir != "" {
				if r.cache, err = acquireCache(dir); err != nil {
					return result{}, err
				}
			}
			r.compiled, err = extism.NewCompiledPlugin(ctx, manifestFor(wasm, cfg),
				extism.PluginConfig{RuntimeConfig: runtimeConfig(cfg, r.cache), EnableWasi: wasi}, nil)
			if err != nil {
				if r.cache != nil {
					r.cache.release(ctx)
				}
				return result{}, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
			}
			return r, nil
		})
	return r.cache, r.compiled, err
}
