// Package wasmbuild builds Go guest packages to WebAssembly for tests and
// benchmarks: GOOS=wasip1 GOARCH=wasm, -buildmode=c-shared (a reactor module
// whose //go:wasmexport functions the host calls).
//
// Builds are cached under the user's cache directory
// (os.UserCacheDir()/dynafold/wasmbuild), keyed by a hash of the Go toolchain
// version, the module's go.mod and go.sum and every source file of the package
// and of its non-standard-library dependencies, so a repeated test run does not
// rebuild. Concurrent builds of one package are serialized within a process;
// across processes the output is written to a temporary file and renamed into
// place, so readers never see a partial module.
package wasmbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// CacheDirEnv names an environment variable that, when set, overrides the
// directory where built modules are cached.
const CacheDirEnv = "DYNAFOLD_WASMBUILD_CACHE"

var locks sync.Map // absolute package dir -> *sync.Mutex

// Build compiles the Go package in pkgDir (absolute, or relative to the
// current directory) to a wasip1 c-shared module and returns its bytes. It
// fails tb on any error.
func Build(tb testing.TB, pkgDir string) []byte {
	tb.Helper()
	path := BuildPath(tb, pkgDir)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("wasmbuild: %v", err)
	}
	return b
}

// BuildPath is Build returning the path of the cached module instead of its
// bytes. The file must not be modified.
func BuildPath(tb testing.TB, pkgDir string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := BuildFile(ctx, pkgDir)
	if err != nil {
		tb.Fatalf("wasmbuild: %v", err)
	}
	return path
}

// BuildFile compiles the Go package in pkgDir to a wasip1 c-shared module,
// unless an identical build is cached, and returns the cached module's path.
func BuildFile(ctx context.Context, pkgDir string) (string, error) {
	dir, err := filepath.Abs(pkgDir)
	if err != nil {
		return "", err
	}
	mu, _ := locks.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go tool: %w", err)
	}
	key, err := sourceHash(ctx, goTool, dir)
	if err != nil {
		return "", err
	}
	cacheDir, err := cacheRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(cacheDir, filepath.Base(dir)+"-"+key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.CreateTemp(cacheDir, filepath.Base(dir)+"-*.wasm.tmp")
	if err != nil {
		return "", err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)

	cmd := exec.CommandContext(ctx, goTool, "build", "-buildmode=c-shared", "-o", tmpName, ".")
	cmd.Dir = dir
	cmd.Env = guestEnv()
	if outb, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", dir, err, outb)
	}
	if err := os.Rename(tmpName, out); err != nil {
		return "", err
	}
	return out, nil
}

func guestEnv() []string {
	return append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
}

func cacheRoot() (string, error) {
	dir := os.Getenv(CacheDirEnv)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "dynafold", "wasmbuild")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("wasmbuild cache: %w", err)
	}
	return dir, nil
}

// sourceHash hashes everything the build's output depends on: the toolchain
// version, go.mod and go.sum of the main module, and the source files of the
// package and of each of its non-standard dependencies.
func sourceHash(ctx context.Context, goTool, dir string) (string, error) {
	const format = `{{if not .Standard}}{{.ImportPath}}|{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}`
	cmd := exec.CommandContext(ctx, goTool, "list", "-deps", "-f", format, ".")
	cmd.Dir = dir
	cmd.Env = guestEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	listing, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w\n%s", dir, err, stderr.Bytes())
	}
	ver := exec.CommandContext(ctx, goTool, "env", "GOVERSION", "GOMOD", "GOFLAGS")
	ver.Dir = dir
	ver.Env = guestEnv()
	env, err := ver.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	h := sha256.New()
	h.Write(env)
	h.Write(listing)
	lines := strings.Split(strings.TrimSpace(string(env)), "\n")
	if len(lines) >= 2 && lines[1] != "" && lines[1] != os.DevNull {
		for _, f := range []string{lines[1], strings.TrimSuffix(lines[1], ".mod") + ".sum"} {
			if err := hashFile(h, f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
		}
	}
	for _, line := range strings.Split(string(listing), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 4 {
			continue
		}
		for _, list := range parts[2:] {
			if list == "" {
				continue
			}
			for _, name := range strings.Split(list, ",") {
				if err := hashFile(h, filepath.Join(parts[1], name)); err != nil {
					return "", err
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%s\n", path)
	_, err = io.Copy(h, f)
	return err
}
