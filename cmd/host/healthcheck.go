package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

func init() {
	commands = append(commands, command{"healthcheck",
		"exit 0 when host run's admin server answers --url with 2xx: a container health check for images without a shell or curl (healthcheck [--url http://127.0.0.1:9100/healthz] [--timeout 2s])", runHealthcheck})
}

// runHealthcheck asks the admin server one question and turns its answer
// into an exit code, so an ECS or Docker health check can run
// ["CMD", "/dynafold/host", "healthcheck"] in a distroless image.
func runHealthcheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:9100/healthz", "the admin server's /healthz (liveness) or /readyz (readiness)")
	timeout := durationFlag(fs, "timeout", 2*time.Second, "how long to wait for the answer (a `duration`)")
	setUsage(fs, `usage: host healthcheck [--url URL] [--timeout D]

Exits 0 when host run's admin server answers --url with 2xx, 1 otherwise: a
container health check for images without a shell or curl.

flags:
`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, "usage: host healthcheck [--url URL] [--timeout D]"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("--url %q: %w", *url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w (is host run running with its admin server on that address? set \"admin\": {\"addr\": ...} in the configuration or --admin-addr)", *url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
