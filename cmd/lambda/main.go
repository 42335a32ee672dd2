package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	handler "github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/internal/gctune"
)

func main() {
	log := newLogger(os.Getenv("AWS_LAMBDA_LOG_LEVEL"))
	slog.SetDefault(log)
	fn, err := initFunction(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(fn)
}

// initFunction reads the configuration from the environment and builds the
// host and its handler: the cold start.
func initFunction(ctx context.Context, getenv func(string) string, log *slog.Logger) (handler.Func, error) {
	start := time.Now()
	// The function's memory is known: give the collector room (gctune).
	gc := "Go's defaults"
	if s, ok := gctune.For(getenv, gctune.LambdaBudget(getenv)); ok {
		gctune.Apply(s)
		gc = s.String()
	}
	cfg, path, err := loadConfig(getenv)
	if err != nil {
		return nil, err
	}
	opts := []handler.Option{handler.WithLogger(log)}
	if getenv(envMetrics) != "off" {
		opts = append(opts, handler.WithMetrics(os.Stdout))
	}
	h, fn, err := handler.Build(ctx, cfg, nil, opts...)
	if err != nil {
		return nil, err
	}
	log.Info("ready", "config", path, "source", cfg.Source, "projections", h.Projections(), "gc", gc,
		"initMs", float64(time.Since(start).Microseconds())/1000)
	return fn, nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil || level == "" {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
