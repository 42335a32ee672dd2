package wasmcachetest

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
)

// The environment of a child started by StartChild.
const (
	envChild    = "DYNAFOLD_COLDSTART_CHILD" // "fold" or "rss"
	envWasm     = "DYNAFOLD_COLDSTART_WASM"
	envCache    = "DYNAFOLD_COLDSTART_CACHE"
	envReadOnly = "DYNAFOLD_COLDSTART_READONLY"
	envPool     = "DYNAFOLD_COLDSTART_POOL"
	envLog      = "DYNAFOLD_COLDSTART_LOG" // log to stderr
)

// Start is what a child does with the module the parent named: load it
// with cfg and fold once; with fill, also create every instance of the pool
// (cfg.PoolSize) and fold once on each. It returns the loaded plugin, kept
// alive until the child has measured itself.
type Start func(ctx context.Context, wasm []byte, cfg plugin.Config, fill bool) (any, error)

// RunChild, called first in a test binary's TestMain, makes the binary the
// child that StartChild starts: it runs start, prints "first-fold" (and,
// for a memory measurement, its VmRSS and VmHWM) and exits. In any other
// process it returns at once.
func RunChild(start Start) {
	mode := os.Getenv(envChild)
	if mode == "" {
		return
	}
	if err := runChild(mode, start); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runChild(mode string, start Start) error {
	ctx := context.Background()
	var keep any
	if path := os.Getenv(envWasm); path != "" {
		wasm, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pool, _ := strconv.Atoi(os.Getenv(envPool))
		cfg := plugin.Config{CacheDir: os.Getenv(envCache), CacheReadOnly: os.Getenv(envReadOnly) != "", PoolSize: pool}
		if os.Getenv(envLog) != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
		if keep, err = start(ctx, wasm, cfg, mode == "rss"); err != nil {
			return err
		}
	}
	fmt.Println("first-fold")
	if mode == "rss" {
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		fmt.Printf("rss %d %d\n", statusKB(string(status), "VmRSS:"), statusKB(string(status), "VmHWM:"))
	}
	runtime.KeepAlive(keep)
	return nil
}

// statusKB returns a /proc/self/status field in kB.
func statusKB(status, field string) int {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return -1
}

// Child is the measurement of one child process.
type Child struct {
	// FirstFold is the wall time from starting the process (exec) to its
	// first fold's result: Go runtime start, package init, reading the
	// module, runtime, compilation or cache, instantiation, describe and
	// one evolve.
	FirstFold time.Duration
	// RSSMB and HWMMB are the child's resident memory (VmRSS) and its
	// peak (VmHWM) after the pool was filled, in MiB (with rss only).
	RSSMB, HWMMB float64
	// Log is what the child logged (LoadInChild only).
	Log string
	// CPU is the child's CPU time, user and system: steadier than
	// FirstFold on a loaded machine, and the whole process's (it exits
	// right after its first fold).
	CPU time.Duration
}

// LoadInChild starts this test binary as a child (see RunChild) that loads
// the module at wasmPath with cacheDir, read-only or not, logging to its
// stderr, and folds once; it fails the test when the child fails (exits
// non-zero, or dies of a signal, as it would running corrupt native code)
// and returns what it logged.
func LoadInChild(tb testing.TB, wasmPath, cacheDir string, readOnly bool) Child {
	tb.Helper()
	return startChild(tb, wasmPath, cacheDir, readOnly, 0, false, true)
}

// StartChild starts this test binary as a child (see RunChild) that loads
// the module at wasmPath ("" loads nothing: the process alone) with
// cacheDir, read-only or not, and a pool of pool instances, and measures it;
// with rss the child fills its pool and reports its memory.
func StartChild(tb testing.TB, wasmPath, cacheDir string, readOnly bool, pool int, rss bool) Child {
	tb.Helper()
	return startChild(tb, wasmPath, cacheDir, readOnly, pool, rss, false)
}

func startChild(tb testing.TB, wasmPath, cacheDir string, readOnly bool, pool int, rss, log bool) Child {
	tb.Helper()
	mode := "fold"
	if rss {
		mode = "rss"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envWasm+"="+wasmPath, envCache+"="+cacheDir,
		envPool+"="+strconv.Itoa(pool))
	if readOnly {
		cmd.Env = append(cmd.Env, envReadOnly+"=1")
	}
	if log {
		cmd.Env = append(cmd.Env, envLog+"=1")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var c Child
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if line == "first-fold" && c.FirstFold == 0 {
			c.FirstFold = time.Since(start)
		}
		var rssKB, hwmKB int
		if n, _ := fmt.Sscanf(line, "rss %d %d", &rssKB, &hwmKB); n == 2 {
			c.RSSMB, c.HWMMB = float64(rssKB)/1024, float64(hwmKB)/1024
		}
	}
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("child: %v\n%s", err, stderr.String())
	}
	c.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if c.FirstFold == 0 || (rss && c.RSSMB == 0) {
		tb.Fatalf("the child reported no first fold or memory:\n%s", stderr.String())
	}
	c.Log = stderr.String()
	return c
}

// Case is one starting point of a cold start.
type Case struct {
	Name     string // nocache, cache, precompiled
	Dir      string // the cache directory; "" for none
	ReadOnly bool   // the directory is used read-only
}

// Cases returns the starting points of a cold start: no cache, a writable
// cache that a load filled (load, with a cache directory), and a cache that
// a precompile step filled (precompile), used read-only.
func Cases(b *testing.B, load, precompile func(dir string) error) []Case {
	warm, pre := b.TempDir(), b.TempDir()
	if err := load(warm); err != nil {
		b.Fatal(err)
	}
	if err := precompile(pre); err != nil {
		b.Fatal(err)
	}
	return []Case{{"nocache", "", false}, {"cache", warm, false}, {"precompiled", pre, true}}
}

// BenchStartProcess is the body of a transport's BenchmarkColdStartProcess:
// for each case, each iteration starts a child on the module file at path
// and reports ms/start, the wall time from exec to its first fold, and
// cpu-ms/start, the child's CPU time (it exits after its first fold).
func BenchStartProcess(b *testing.B, path string, cases []Case) {
	for _, tc := range cases {
		b.Run(tc.Name, func(b *testing.B) {
			var total, cpu time.Duration
			for b.Loop() {
				c := StartChild(b, path, tc.Dir, tc.ReadOnly, 0, false)
				total += c.FirstFold
				cpu += c.CPU
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/start")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/start")
		})
	}
}
