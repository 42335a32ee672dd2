package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"time"

	"github.com/dynafold/dynafold/host"
)

// configCheckEvery is how often a running `host run` looks at its
// configuration file for changes.
const configCheckEvery = 10 * time.Second

// watchConfig warns, once per change, when the configuration file a
// running worker read at its start changes: `host run` reads it only then
// (the plugin module, which hotSwap watches, is the exception), so an edit
// does nothing until the worker restarts. The warning says so, and whether
// the file as it is now loads. started is configSum of the file as the
// worker read it.
func watchConfig(ctx context.Context, path string, started []byte, log *slog.Logger, every time.Duration) {
	if started == nil {
		return
	}
	warned, last := started, started
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := configSum(path)
		// a change counts once two looks in a row see it (an editor
		// may write the file in steps)
		steady := bytes.Equal(now, last)
		last = now
		if now == nil || !steady || bytes.Equal(now, warned) {
			continue
		}
		warned = now
		if bytes.Equal(now, started) {
			log.Info("the configuration file is again as this worker read it at its start", "config", path)
			continue
		}
		args := []any{"config", path}
		if _, err := host.LoadConfig(path); err != nil {
			args = append(args, "loads", false, "err", err.Error())
		} else {
			args = append(args, "loads", true)
		}
		log.Warn("the configuration file changed since this worker started; `host run` reads it only at its start (the plugin module, which hotSwap watches, is the exception): check it with `host status --config FILE`, then restart the workers one at a time to apply it", args...)
	}
}

// configSum is the digest of the configuration file's content, nil when it
// cannot be read.
func configSum(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := sha256.Sum256(b)
	return s[:]
}
