package extism

import (
	"context"
	"encoding/hex"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// moduleKey names a plugin's compiled code (the module and the Extism
// kernel) in the cache: the module's SHA-256 and how it is compiled.
func moduleKey(sum [32]byte) string {
	key := "extism-" + hex.EncodeToString(sum[:])
	if !closeOnContextDone {
		key += "-noclose"
	}
	return key
}

// compilePlugin compiles a plugin with cfg's CacheDir as host/plugin does:
// the code the plugin's manifest vouches for is verified and serves the
// compilation; what is compiled is kept in a writable cache; a read-only
// cache that misses is logged and the plugin compiles in memory (see
// package wasmcache).
func compilePlugin(ctx context.Context, wasm []byte, sum [32]byte, cfg Config, wasi bool, name string) (*sharedCache, *extism.CompiledPlugin, wasmcache.Result, error) {
	type result struct {
		cache    *sharedCache
		compiled *extism.CompiledPlugin
	}
	cache := wasmcache.OpenOrWarn(cfg.CacheDir, cfg.CacheReadOnly, cfg.CacheKeyFile, name, cfg.Logger)
	r, res, err := wasmcache.Compile(cache, moduleKey(sum), name, cfg.Logger,
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
	return r.cache, r.compiled, res, err
}
