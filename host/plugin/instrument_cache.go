package plugin

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// instrumentVersion names the rewrite in cached files; bump it whenever
// instrument's output changes.
const instrumentVersion = 3

// instrumentCached is instrumentFor with the result kept in cacheDir (next
// to wazero's compiled code), so a warm cold start skips the rewrite too. The
// cache is trusted as much as wazero's, which holds native code.
// A read-only cache is only read.
func instrumentCached(cfg Config, wasm []byte, sum [32]byte) ([]byte, error) {
	cacheDir := cfg.CacheDir
	if cacheDir == "" || skipInstrument {
		return instrumentFor(wasm)
	}
	path := filepath.Join(cacheDir, fmt.Sprintf("dynafold-instrumented-v%d-%s.wasm", instrumentVersion, hex.EncodeToString(sum[:])))
	if code, err := os.ReadFile(path); err == nil {
		return code, nil
	}
	code, err := instrument(wasm)
	if err != nil || cacheReadOnly(cfg) {
		return code, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err == nil {
		if tmp, err := os.CreateTemp(cacheDir, "dynafold-instrumented-*.tmp"); err == nil {
			_, werr := tmp.Write(code)
			cerr := tmp.Close()
			if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
				os.Remove(tmp.Name())
			}
		}
	}
	return code, nil
}
