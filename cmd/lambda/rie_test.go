package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// rieModule is the AWS Lambda Runtime Interface Emulator, as the Go module
// proxy serves it. DYNAFOLD_RIE names a prebuilt aws-lambda-rie instead.
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// goBuild runs the go tool in dir with extra environment.
func goBuild(t testing.TB, dir string, env []string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// buildBootstrap builds this command as Lambda's provided runtime runs it,
// once per test process (the tests and benchmarks that start it share it:
// the build is the same each time).
func buildBootstrap(t testing.TB) string {
	t.Helper()
	return builtOnce(t, "bootstrap", func(dir string) (string, error) {
		out := filepath.Join(dir, "bootstrap")
		return out, goBuild(t, ".", []string{"GOOS=linux", "CGO_ENABLED=0"}, "build", "-tags", "lambda.norpc", "-o", out, ".")
	})
}

// emulator returns the path of aws-lambda-rie, built once per test
// process; it skips the test when the emulator cannot be built on this
// machine.
func emulator(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("DYNAFOLD_RIE"); p != "" {
		return p
	}
	var skip error
	p := builtOnce(t, "aws-lambda-rie", func(dir string) (string, error) {
		if err := goBuild(t, dir, []string{"GOBIN=" + dir, "GOFLAGS=", "CGO_ENABLED=0"}, "install", rieModule); err != nil {
			return "", errSkip{err}
		}
		return filepath.Join(dir, "aws-lambda-rie"), nil
	}, &skip)
	if skip != nil {
		t.Skipf("the Lambda Runtime Interface Emulator cannot be built on this machine (set DYNAFOLD_RIE to a prebuilt aws-lambda-rie): %v", skip)
	}
	return p
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// rie is a running emulator with the function as its bootstrap.
type rie struct {
	addr   string
	out    *syncbuf.Buffer
	labels []string // what each invocation posted, in order
}

// startRIE starts the emulator on a free loopback port, with the function's
// environment; it stops at the end of the test.
func startRIE(t testing.TB, riePath, bootstrap, taskRoot string, env map[string]string) *rie {
	t.Helper()
	r := &rie{addr: freeAddr(t), out: &syncbuf.Buffer{}}
	cmd := exec.Command(riePath, "--runtime-interface-emulator-address", r.addr,
		"--runtime-api-address", freeAddr(t), bootstrap)
	cmd.Dir = taskRoot
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "DYNAFOLD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = r.out, r.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and its bootstrap, stopped together
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() || os.Getenv("DYNAFOLD_RIE_LOG") != "" {
			t.Logf("emulator output:\n%s", r.out)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.DialTimeout("tcp", r.addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator does not listen on %s: %v\n%s", r.addr, err, r.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// invoke posts a payload as Lambda's Invoke API does and returns the body.
func (r *rie) invoke(t testing.TB, label string, payload []byte) []byte {
	t.Helper()
	r.labels = append(r.labels, label)
	url := "http://" + r.addr + "/2015-03-31/functions/function/invocations"
	resp, err := http.Post(url, "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("invoke: HTTP %d: %s", resp.StatusCode, body)
	}
	return body
}

// report is one REPORT line of the emulator.
type report struct {
	init, duration string // milliseconds as printed; init is "" on warm invocations
}

var reportLine = regexp.MustCompile(`REPORT RequestId: \S+\s+(?:Init Duration: ([0-9.]+) ms\s+)?Duration: ([0-9.]+) ms`)

var initReportLine = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initReport returns the duration of the init phase the emulator logs
// (its REPORT line's Init Duration does not cover the runtime's init).
func (r *rie) initReport() string {
	if m := initReportLine.FindStringSubmatch(r.out.String()); m != nil {
		return m[1]
	}
	return "?"
}

func (r *rie) reports() []report {
	var out []report
	for _, m := range reportLine.FindAllStringSubmatch(r.out.String(), -1) {
		out = append(out, report{init: m[1], duration: m[2]})
	}
	return out
}

// failures decodes a partial batch response.
func failures(t testing.TB, body []byte) []string {
	t.Helper()
	var resp struct {
		BatchItemFailures *[]struct {
			ItemIdentifier string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.BatchItemFailures == nil {
		t.Fatalf("not a partial batch response: %s (%v)", body, err)
	}
	ids := []string{}
	for _, f := range *resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func wasmPlugin(t testing.TB, dir string) {
	t.Helper()
	src := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "order-summary.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var errNoReport = errors.New("no REPORT line")

// waitReports waits until the emulator printed n REPORT lines.
func (r *rie) waitReports(n int) ([]report, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		reps := r.reports()
		if len(reps) >= n {
			return reps, nil
		}
		if time.Now().After(deadline) {
			return reps, errNoReport
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newTestEnv starts ddblocal for the function: the event table and the
// read-model table.
func newTestEnv(t *testing.T) (*testenv.Env, string, string) {
	t.Helper()
	env := testenv.Start(t)
	return env, env.Table(t, "events", true), env.Table(t, "summaries", false)
}
