package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/backoff"
)

// startRetry is the wait between two attempts to reach the endpoint at
// start: growing, jittered, at most 30 s (a running worker retries its
// lease rounds likewise, for ever).
var startRetry = backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}

// checkTables checks that every table the configuration names exists
// before anything is read: a missing read-model table would otherwise send
// every record to the quarantine and, with a quarantine table, move the
// checkpoint past the whole stream. While the endpoint cannot be reached
// it retries with backoff (readiness stays false), one log line per retry,
// until ctx ends.
func checkTables(ctx context.Context, cfg *host.Config, cfgPath string, ops *runOps, log *slog.Logger) error {
	es, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithLogger(log))
	if err != nil {
		return err
	}
	defer es.Close(context.WithoutCancel(ctx))
	for attempt := 1; ; attempt++ {
		err := es.CheckTables(ctx)
		if err == nil {
			ops.setWaiting(nil)
			return nil
		}
		if errors.Is(err, host.ErrTablesMissing) {
			return fmt.Errorf("%w; run `host tables create --config %s`, then start again", err, cfgPath)
		}
		if ctx.Err() != nil || !unreachable(err) {
			return err
		}
		ops.setWaiting(err)
		d := startRetry.Delay(attempt)
		log.Warn("the DynamoDB endpoint cannot be reached; retrying", "endpoint", endpointName(cfg), "attempt", attempt,
			"retryIn", d.Round(time.Millisecond).String(), "err", err.Error())
		if err := backoff.Sleep(ctx, d); err != nil {
			return fmt.Errorf("waiting for the DynamoDB endpoint %s: %w", endpointName(cfg), err)
		}
	}
}

// unreachable reports whether err says the endpoint could not be reached
// or could not answer now (a connection refused, a timeout, throttling, a
// server error), rather than that something is wrong with the request.
func unreachable(err error) bool {
	var send *smithyhttp.RequestSendError
	var nerr net.Error
	if errors.As(err, &send) || errors.As(err, &nerr) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded", "LimitExceededException",
			"InternalServerError", "ServiceUnavailable":
			return true
		}
	}
	return false
}

func endpointName(cfg *host.Config) string {
	if cfg.Endpoint != "" {
		return cfg.Endpoint
	}
	return "AWS (region " + cfg.Effective().Region + ")"
}
