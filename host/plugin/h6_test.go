package plugin_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// A trapping call is returned as an error and logged at debug only: the
// caller reports it with the row and record it belongs to, and a bisect,
// which calls the poison event once per half, logged a warning each time.
func TestH6_AFailedCallIsNotWarnedTwice(t *testing.T) {
	logs := &syncbuf.Buffer{}
	p := loadGuest(t, "trap", plugin.Config{PoolSize: 1, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for range 3 {
		if _, err := p.Evolve(context.Background(), evolveReq("Placed", "Shape")); err == nil {
			t.Fatal("the trap did not fail the call")
		}
	}
	out := logs.String()
	if strings.Contains(out, "level=WARN") {
		t.Errorf("a failed call is warned by the plugin:\n%s", out)
	}
	if n := strings.Count(out, "level=DEBUG msg=\"plugin call failed; instance replaced\""); n != 3 {
		t.Errorf("%d debug lines for 3 failed calls:\n%s", n, out)
	}
	if strings.Contains(out, "go.shape") {
		t.Errorf("the logged trap carries mangled generic frames:\n%s", out)
	}
}
