package admin_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium returns the path of a chromium binary, installing Debian's
// package when apt-get can do so without prompting; the test is skipped,
// saying why, when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("headless browser check skipped: chromium is not installed and apt-get is unavailable or needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, apt, "install", "-y", "--no-install-recommends", "chromium")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("headless browser check skipped: chromium is not installed and `apt-get install -y chromium` failed: %v\n%s", err, tail(out))
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("headless browser check skipped: apt-get installed chromium but it is not on PATH")
	}
	return p
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 500 {
		s = s[len(s)-500:]
	}
	return s
}

// The status page, loaded in headless chromium, renders into a DOM with
// the shard, plugin and failure tables and their rows.
func TestX1_StatusPageRendersInAHeadlessBrowser(t *testing.T) {
	bin := chromium(t)
	srv, _ := served(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--dump-dom", srv.URL()+"/")
	out, err := cmd.Output()
	require.NoError(t, err, "chromium --dump-dom")
	dom := string(out)
	assert.Contains(t, dom, "<title>dynafold status</title>")
	for _, id := range []string{"shards", "plugins", "failures"} {
		assert.Contains(t, dom, `<table id="`+id+`">`, "the %s table is in the DOM", id)
	}
	// The browser puts the rows in a tbody: they parsed as table rows.
	assert.Contains(t, dom, "<tbody><tr><th>Stream</th>")
	assert.Contains(t, dom, "<td>shardId-0001</td>")
	assert.Contains(t, dom, "<td>worker-7</td>")
	assert.Contains(t, dom, "<td>ledger@1.0.0</td>")
	assert.Equal(t, 1, strings.Count(dom, "&lt;Boom&gt;"), "the failure's reason is text, not markup")
}
