package wasmbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// SDKC is the C guest SDK, sdk-guest/c of this checkout (dynafold.h and
// dynafold.c).
func SDKC() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "sdk-guest", "c")
}

// BuildC compiles the C sources srcs (with the SDK's dynafold.c and its
// header on the include path) into a wasm32-wasi reactor module and
// returns its bytes; defines are -D flags without the -D. It skips tb,
// with one line naming the packages to install, when clang cannot build
// for Wasm, and fails it on any other error.
func BuildC(tb testing.TB, srcs []string, defines ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := BuildCFile(ctx, srcs, defines...)
	skipIfMissing(tb, err)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("wasmbuild: %v", err)
	}
	return b
}

// BuildCFile is BuildC returning the cached module's path; the cache key
// covers the compiler's version, the flags, the sources and the SDK.
func BuildCFile(ctx context.Context, srcs []string, defines ...string) (string, error) {
	cc, err := FindC()
	if err != nil {
		return "", err
	}
	sdk := SDKC()
	all := append([]string(nil), srcs...)
	all = append(all, filepath.Join(sdk, "dynafold.c"))
	args := append(CFlags(), "-I", sdk)
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", versionOf(ctx, cc, nil, "--version"), args)
	for _, f := range append(all, filepath.Join(sdk, "dynafold.h")) {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", err
		}
		if err := hashFile(h, abs); err != nil {
			return "", err
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:24]
	mu, _ := locks.LoadOrStore("c:"+key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	cache, err := cacheRoot()
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(srcs[0]), ".c")
	out := filepath.Join(cache, name+"-c-"+key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.CreateTemp(cache, name+"-*.wasm.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, cc, append(append(args, "-o", tmp.Name()), all...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", cc, strings.Join(cmd.Args[1:], " "), err, b)
	}
	return out, os.Rename(tmp.Name(), out)
}

// BuildCPath is BuildC returning the cached module's path.
func BuildCPath(tb testing.TB, srcs []string, defines ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := BuildCFile(ctx, srcs, defines...)
	skipIfMissing(tb, err)
	return path
}
