//go:build !wasip1

package guest

import (
	"context"
	"log/slog"
)

func hostLog(level Level, msg string) {
	slog.Default().Log(context.Background(), level.slogLevel(), msg)
}
