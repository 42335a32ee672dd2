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
	key := compileKey(wasm)
	use := wasmcache.Decide(cfg.CacheDir, cfg.CacheReadOnly, key, name, cfg.Logger)
	try := func(dir string) (cache *sharedCache, compiled *extism.CompiledPlugin, err error) {
		if dir != "" {
			if cache, err = acquireCache(dir); err != nil {
				return nil, nil, err
			}
		}
		compiled, err = extism.NewCompiledPlugin(ctx, manifestFor(wasm, cfg),
			extism.PluginConfig{RuntimeConfig: runtimeConfig(cfg, cache), EnableWasi: wasi}, nil)
		if err != nil {
			if cache != nil {
				cache.release(ctx)
			}
			return nil, nil, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
		}
		return cache, compiled, nil
	}
	cache, compiled, err := try(use.Dir)
	if err != nil && use.ReadOnly && use.Dir != "" {
		wasmcache.Miss(use.Dir, key, name, err.Error(), cfg.Logger)
		cache, compiled, err = try("")
	}
	if err != nil {
		return nil, nil, err
	}
	if use.Dir != "" && !use.ReadOnly {
		if err := wasmcache.Mark(use.Dir, key); err != nil {
			cfg.Logger.Warn("compilation cache", "plugin", name, "err", err)
		}
	}
	return cache, compiled, nil
}
