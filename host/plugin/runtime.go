package plugin

import (
	"context"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// runtimeKey identifies the runtime-wide settings: plugins that agree on them
// share one wazero.Runtime (and so its compiled code and WASI host module).
type runtimeKey struct {
	cacheDir string
	memLimit uint32
	// closeOnDone is set for modules instrument cannot rewrite: wazero then
	// enforces timeouts itself, at a cost (see instrument).
	closeOnDone bool
}

// sharedRuntime is a reference-counted wazero.Runtime.
type sharedRuntime struct {
	key   runtimeKey
	rt    wazero.Runtime
	cache wazero.CompilationCache // nil without a cache dir
	refs  int
	// logs registers the instances of plugins with guest logging, for the
	// dynafold.log host function (guestlog.go).
	logs sync.Map
}

var runtimes = struct {
	sync.Mutex
	m map[runtimeKey]*sharedRuntime
}{m: map[runtimeKey]*sharedRuntime{}}

// acquireRuntime returns the runtime for cfg's settings, creating it (with
// WASI and the dynafold host module instantiated) when no live plugin uses
// it.
func acquireRuntime(ctx context.Context, cfg Config, closeOnDone bool) (*sharedRuntime, error) {
	key := runtimeKey{cacheDir: cfg.CacheDir, memLimit: cfg.MemoryLimitPages, closeOnDone: closeOnDone}
	runtimes.Lock()
	defer runtimes.Unlock()
	if s := runtimes.m[key]; s != nil {
		s.refs++
		return s, nil
	}
	rc := wazero.NewRuntimeConfig(). // the compiler where supported
						WithCloseOnContextDone(key.closeOnDone).
						WithMemoryLimitPages(key.memLimit)
	s := &sharedRuntime{key: key, refs: 1}
	if key.cacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(key.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", key.cacheDir, err)
		}
		s.cache = cache
		rc = rc.WithCompilationCache(cache)
	}
	s.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, s.rt); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, s.rt, &s.logs); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("instantiate the %s host module: %w", importModule, err)
	}
	runtimes.m[key] = s
	return s, nil
}

// release drops one reference and closes the runtime with the last one.
func (s *sharedRuntime) release(ctx context.Context) error {
	runtimes.Lock()
	s.refs--
	last := s.refs == 0
	if last {
		delete(runtimes.m, s.key)
	}
	runtimes.Unlock()
	if !last {
		return nil
	}
	return s.close(ctx)
}

func (s *sharedRuntime) close(ctx context.Context) error {
	err := s.rt.Close(ctx)
	if s.cache != nil {
		if cerr := s.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}
