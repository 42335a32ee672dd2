package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/dynamotest"
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
// ddblocal listens on a free port instead of 8000 (the generated
// dynafold.json is pointed at it). When the commands are done, while
// ddblocal still runs, the test reads the account's row through the AWS
// SDK.
func TestH2_READMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host and a plugin project")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: the walkthrough uses the generated Makefile")
	}
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
		lines = append(lines, l)
		if strings.TrimSpace(l) == "cd account-balance" {
			lines = append(lines, `sed "s/127.0.0.1:8000/`+addr+`/" dynafold.json > dynafold.json.new && mv dynafold.json.new dynafold.json`)
		}
	}
	lines = append(lines, "echo WALKTHROUGH-DONE", fmt.Sprintf("while [ ! -f %s ]; do sleep 0.1; done", done))

	cmd := exec.Command("bash", "-c", strings.Join(lines, "\n"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	finished := false
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "WALKTHROUGH-DONE" {
			finished = true
			break
		}
	}
	if finished {
		// ddblocal is still up: read the row the way any client would.
		env := &testenv.Env{Client: dynamotest.ClientAt(t, "http://"+addr)}
		row := env.Get(t, "account-balance-rows", abi.Item{"pk": abi.S("Account#a-1"), "sk": abi.S("Account")})
		require.NotNil(t, row, "the account's row")
		assert.Equal(t, "2.35", row["balance"].Str, "0.1 + 2.25, exactly")
		assert.Equal(t, "Ada", row["owner"].Str)
		assert.Equal(t, "3", row["version"].Str, "the checkpoint")
		assert.Equal(t, "account-balance@1.1.0", row["writtenBy"].Str, "rebuilt by the swapped-in version")
		require.NoError(t, os.WriteFile(done, nil, 0o644))
	}
	_, _ = io.Copy(&out, stdout)
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
		"ok  \texample.com/account-balance", "selftest passed", "ok account-balance@1.0.0: 4 events, 1 row as expected",
		"row pk=Account#a-1,sk=Account: applied 3 events, checkpoint 3, written true",
		`replaces account-balance@1.0.0 in projection "account-balance"`,
		"1 stream instances rebuilt", "compiled into build/wasm-cache",
	} {
		assert.Contains(t, text, want)
	}
}
