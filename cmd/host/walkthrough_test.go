package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
)

// walkthrough returns the shell commands of the README's "Your first
// plugin" section: its first sh block.
func walkthrough(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "\n## Your first plugin, start to finish\n")
	require.True(t, ok, "README.md has no walkthrough section")
	_, block, ok := strings.Cut(after, "```sh\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestH2_READMEWalkthrough runs the README's walkthrough, command by
// command as a user types them, in bash from a temporary directory: the
// host binary goes to a temporary bin/ instead of the checkout's, and
// ddblocal listens on a free port instead of 8000 (host plugin new
// --endpoint points the generated dynafold.json at it). When the commands are done, while
// ddblocal and host run still run, the test reads the item's row through
// the AWS SDK.
func TestH2_READMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host and a plugin project")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: the walkthrough uses the generated Makefile")
	}
	t.Parallel() // its own processes, directories and port
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	done := filepath.Join(tmp, "done")

	lines := []string{"set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", "cd " + repoRoot(t)}
	for _, l := range walkthrough(t) {
		l = strings.ReplaceAll(l, "bin/host", bin+"/host")
		l = strings.ReplaceAll(l, "$PWD/bin", bin)
		l = strings.ReplaceAll(l, "127.0.0.1:8000", addr)
		if trimmed := strings.TrimSpace(l); trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			lines = append(lines, "echo '+ "+strings.ReplaceAll(trimmed, "'", `'\''`)+"'")
		}
		if strings.HasPrefix(l, "host plugin new ") {
			l += " --endpoint http://" + addr // the generated dynafold.json's
		}
		lines = append(lines, l)
	}
	lines = append(lines, "echo WALKTHROUGH-DONE", fmt.Sprintf("while [ ! -f %s ]; do sleep 0.1; done", done))

	cmd := exec.Command("bash", "-c", strings.Join(lines, "\n"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the watchdog below kills its background jobs too
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	// A step that never ends (a server that does not come up, a wait for a
	// row that never comes) fails the test with the output so far instead
	// of hanging until the package's timeout; the bound is far above a
	// loaded machine's run (about a minute on a quiet one).
	watchdog := time.AfterFunc(15*time.Minute, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer watchdog.Stop()
	var out syncbuf.Buffer
	sc := bufio.NewScanner(stdout)
	finishedc, readAll := make(chan struct{}), make(chan struct{})
	go func() { // the output, read to its end: host run still logs after the last command
		defer close(readAll)
		for sc.Scan() {
			_, _ = out.Write([]byte(sc.Text() + "\n"))
			if sc.Text() == "WALKTHROUGH-DONE" {
				close(finishedc)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	finished := false
	select {
	case <-finishedc:
		finished = true
	case <-readAll:
	}
	if finished {
		// ddblocal is still up: read the row the way any client would.
		env := &testenv.Env{Client: dynamotest.ClientAt(t, "http://"+addr)}
		row := env.Get(t, "inventory-rows", abi.Item{"pk": abi.S("Inventory#i-1"), "sk": abi.S("Inventory")})
		require.NotNil(t, row, "the item's row")
		assert.Equal(t, "2.35", row["total"].Str, "0.1 + 2.25, exactly")
		assert.Equal(t, "bolts", row["name"].Str)
		assert.Equal(t, "3", row["version"].Str, "the checkpoint")
		assert.Equal(t, "inventory@1.1.0", row["writtenBy"].Str, "rebuilt by the swapped-in version")
		// host run, still running, holds the shards and has read the
		// records: a lease checkpointed at a sequence number.
		deadline := time.Now().Add(time.Minute)
		for ran := false; !ran; {
			scan, err := env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("inventory-leases"), ConsistentRead: aws.Bool(true)})
			require.NoError(t, err)
			for _, it := range scan.Items {
				if c, ok := it["checkpoint"].(*types.AttributeValueMemberS); ok && c.Value != "" && strings.Trim(c.Value, "0123456789") == "" {
					ran = true
				}
			}
			require.True(t, ran || time.Now().Before(deadline), "host run never checkpointed a shard: %v", scan.Items)
			time.Sleep(100 * time.Millisecond)
		}
		// host run, started before step 3's cp, swapped the new module in:
		// dynafold.json's hotSwap watches the plugin file.
		for !swapped.MatchString(out.String()) && time.Now().Before(deadline.Add(time.Minute)) {
			time.Sleep(100 * time.Millisecond)
		}
		require.NoError(t, os.WriteFile(done, nil, 0o644))
	}
	<-readAll // every writer has exited: the script and its background jobs
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		err = fmt.Errorf("the walkthrough did not end")
	}
	text := out.String()
	t.Logf("walkthrough output:\n%s", text)
	require.True(t, finished, "the walkthrough stopped early")
	require.NoError(t, err)
	for _, want := range []string{
		"ok  \texample.com/inventory", "selftest passed", "ok inventory@1.0.0: 5 events, 1 row as expected",
		`replaces inventory@1.0.0 in projection "inventory"`,
		"rows     1 sampled row re-derived from their events by the candidate: 0 differ from the table",
		"1 stream instance rebuilt", "compiled into build/wasm-cache",
		// 1.1.0 folds as 1.0.0 did: the rebuilt row is the same, but for
		// its writtenBy
		"row pk=Inventory#i-1,sk=Inventory: unchanged but for its writer, now the version serving",
	} {
		assert.Contains(t, text, want)
	}
	// host run or catchup folded the events, whichever came first: the row
	// is at checkpoint 3 either way.
	assert.Regexp(t, `row pk=Inventory#i-1,sk=Inventory: applied [0-3] events?, checkpoint 3, written (true|false)`, text)
	assert.Regexp(t, swapped, text, "host run, running since step 2, swaps in the module step 3 copies over its plugin file")
	// the one-shot commands (catchup, rebuild, validate …) print their
	// output and warnings only; host run's lines are JSON
	assert.NotContains(t, text, `level=INFO msg="plugin loaded"`)
}

// swapped is host run's log line (JSON, its output not being a terminal)
// for the walkthrough's swap from 1.0.0 to 1.1.0: an upgrade, not a rollback.
var swapped = regexp.MustCompile(`"msg":"plugin swapped"[^\n]*"from":"inventory@1\.0\.0","to":"inventory@1\.1\.0"[^\n]*"rollback":false`)
