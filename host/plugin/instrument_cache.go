package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// instrumentVersion names the rewrite in cached files; bump it whenever
// instrument's output changes.
const instrumentVersion = 3

// instrumentCached is instrumentFor with the result kept in the cache, so
// a warm cold start skips the rewrite too. The cached module is a blob
// bound to the SHA-256 of the module it was made from (sum) and
// authenticated with the cache's key: one made from another module, or
// changed since, is refused (logged) and the module instrumented again; it
// is never trusted by its file name. A read-only cache is only read.
func instrumentCached(cache *wasmcache.Cache, log *slog.Logger, name string, wasm []byte, sum [32]byte) ([]byte, error) {
	if cache == nil || skipInstrument {
		return instrumentFor(wasm)
	}
	kind := fmt.Sprintf("instrumented-v%d", instrumentVersion)
	code, err := cache.ReadBlob(kind, sum)
	if err == nil {
		return code, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		log.Warn("instrumented module in the compilation cache refused: the module is instrumented again",
			"plugin", name, "cacheDir", cache.Dir(), "reason", err)
	}
	code, err = instrument(wasm)
	if err != nil || !cache.Writable() {
		return code, err
	}
	if werr := cache.WriteBlob(kind, sum, code); werr != nil {
		log.Warn("compilation cache: keeping the instrumented module", "plugin", name, "cacheDir", cache.Dir(), "err", werr)
	}
	return code, nil
}
