package plugin

import (
	"context"
	"log/slog"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"

	"github.com/dynafold/dynafold/host/plugin/internal/determinism"
)

// outputLimit bounds the guest output kept per call to explain a failure:
// the first half of the limit (where a Go guest writes "panic: ...") and the
// last half.
const outputLimit = 4 << 10

// guestOutput receives an instance's stdout and stderr: it keeps the head and
// the tail of the current call's output and logs each write at debug level.
type guestOutput struct {
	log    *slog.Logger
	plugin *string // the plugin's name, set once it is known
	head   []byte
	tail   []byte
}

type outStream struct {
	o    *guestOutput
	name string
}

// Write implements io.Writer.
func (s outStream) Write(p []byte) (int, error) {
	o := s.o
	rest := p
	if n := outputLimit/2 - len(o.head); n > 0 {
		n = min(n, len(rest))
		o.head = append(o.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		o.tail = append(o.tail, rest...)
		if len(o.tail) > outputLimit/2 {
			o.tail = append(o.tail[:0], o.tail[len(o.tail)-outputLimit/2:]...)
		}
	}
	if o.log.Enabled(context.Background(), slog.LevelDebug) {
		o.log.Debug("plugin output", "plugin", *o.plugin, "stream", s.name, "text", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (o *guestOutput) reset() { o.head, o.tail = o.head[:0], o.tail[:0] }

// reason returns the most telling line of the call's output: a line that
// says "out of memory", else the first "panic:" or "fatal error:" line of a
// Go guest, else the last line.
func (o *guestOutput) reason() string {
	text := strings.TrimSpace(string(o.head) + string(o.tail))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if strings.Contains(l, "out of memory") {
			return strings.TrimSpace(l)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// moduleConfig is the sandbox of one instance (see the package doc): WASI
// with no filesystem, environment, arguments or network; a frozen wall clock;
// wazero's fake monotonic clock and no-op sleep; a deterministic random
// source; captured output; and no start function.
func moduleConfig(out *guestOutput, rnd *determinism.Rand, clk *determinism.Clock) wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").         // anonymous: many instances of one module in a runtime
		WithStartFunctions(). // _initialize runs under the watchdog (newInstance)
		WithStdout(outStream{out, "stdout"}).
		WithStderr(outStream{out, "stderr"}).
		WithRandSource(rnd).
		WithWalltime(determinism.Epoch, sys.ClockResolution(1000)).
		WithNanotime(clk.Nanotime, sys.ClockResolution(1)).
		WithNanosleep(clk.Nanosleep)
}
