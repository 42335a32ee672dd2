package extism

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"

	"github.com/dynafold/dynafold/internal/guestlog"
)

// guestLogEvery is how often a plugin reports the guest log messages it
// dropped over its rate (tests shorten it).
var guestLogEvery = 10 * time.Second

// sdkLevel lowers the Extism SDK's process-wide log level once (see
// enableSDKLogging).
var sdkLevel sync.Once

// enableSDKLogging makes the Extism SDK pass guest log messages of level
// debug and above to each instance's logger. The SDK (go-sdk 1.7) has one
// level for the whole process (extism.SetLogLevel), and its default drops
// every message, so the first plugin loaded with guest logging sets it to
// debug; every instance then filters by its own plugin's setting (logger).
// Guest trace messages are never forwarded.
func enableSDKLogging(log *slog.Logger) {
	sdkLevel.Do(func() {
		extism.SetLogLevel(extism.LogLevelDebug)
		log.Info("Extism SDK log level set to debug for the process, for guest logging; each plugin keeps or discards its messages by its GuestLog setting")
	})
}

// importsLog reports whether a module imports one of the Extism log
// functions (extism:host/env log_*).
func importsLog(m *module) bool {
	for _, im := range m.imports {
		if im.module == ExtismHostModule && strings.HasPrefix(im.name, "log_") {
			return true
		}
	}
	return false
}

// The SDK's own debug messages, which reach the same logger as the guest's.
var sdkMessages = []string{"Calling function : ", "Initializing runtime for "}

// logger returns the Extism logger of in: with a sink, the guest's messages
// go to it (the SDK's own debug messages left out), named with the export
// being called and carrying its context; without, they are discarded.
func (in *instance) logger(sink *guestlog.Sink) func(extism.LogLevel, string) {
	if sink == nil {
		return func(extism.LogLevel, string) {}
	}
	return func(level extism.LogLevel, msg string) {
		if level <= extism.LogLevelDebug {
			for _, m := range sdkMessages {
				if strings.HasPrefix(msg, m) {
					return
				}
			}
		}
		ctx := in.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		sink.LogString(ctx, slogLevel(level), in.fn, msg)
	}
}

// slogLevel maps an Extism level to slog's (trace is debug).
func slogLevel(l extism.LogLevel) slog.Level {
	switch {
	case l <= extism.LogLevelDebug:
		return slog.LevelDebug
	case l == extism.LogLevelInfo:
		return slog.LevelInfo
	case l == extism.LogLevelWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}
