package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	handler "github.com/dynafold/dynafold/host/lambda"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeConfig(t *testing.T, dir string, cfg map[string]any) string {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dynafold.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func orderConfig(events, rows, plugin string) map[string]any {
	return map[string]any{
		"endpoint": "http://config.example:8000", "region": "eu-west-1", "source": "pipe",
		"eventStore": map[string]any{"table": events, "schema": "shop", "schemaVersion": 1, "streams": []any{
			map[string]any{"name": "Order", "eventTypes": []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, "composite": []string{"orderId"}}}},
		"projections": []any{
			map[string]any{"name": "summaries", "plugin": plugin, "table": rows, "checkpoint": map[string]any{"field": "version"}},
			map[string]any{"name": "native", "plugin": "native:x", "table": rows, "checkpoint": map[string]any{"field": "version"}},
			map[string]any{"name": "abs", "plugin": "/opt/plugins/abs.wasm", "table": rows, "checkpoint": map[string]any{"field": "version"}},
		},
	}
}

func TestH4_ConfigFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, orderConfig("events", "rows", "order-summary.wasm"))

	// The configuration's own values.
	cfg, got, err := loadConfig(envOf(map[string]string{envConfig: path}))
	if err != nil {
		t.Fatal(err)
	}
	if got != path || cfg.Source != "pipe" || cfg.Endpoint != "http://config.example:8000" || cfg.Region != "eu-west-1" ||
		cfg.Projections[0].Plugin != "order-summary.wasm" {
		t.Errorf("loadConfig = %s %+v", got, cfg)
	}

	// The environment overrides them.
	cfg, _, err = loadConfig(envOf(map[string]string{envConfig: path, envSource: "lambda", envPluginDir: "/var/task/plugins",
		envEndpoint: "http://127.0.0.1:8000", envRegion: "ap-southeast-2"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source != "lambda" || cfg.Endpoint != "http://127.0.0.1:8000" || cfg.Region != "ap-southeast-2" {
		t.Errorf("overrides: source %q endpoint %q region %q", cfg.Source, cfg.Endpoint, cfg.Region)
	}
	if p := []string{cfg.Projections[0].Plugin, cfg.Projections[1].Plugin, cfg.Projections[2].Plugin}; p[0] != "/var/task/plugins/order-summary.wasm" ||
		p[1] != "native:x" || p[2] != "/opt/plugins/abs.wasm" {
		t.Errorf("plugins with DYNAFOLD_PLUGIN_DIR = %v, want only the relative one moved", p)
	}

	// Without DYNAFOLD_CONFIG: dynafold.json in the task root.
	if _, got, err := loadConfig(envOf(map[string]string{envTaskRoot: dir})); err != nil || got != path {
		t.Errorf("LAMBDA_TASK_ROOT: path %q, err %v; want %q", got, err, path)
	}
	// Without either: beside the binary.
	exe, _ := os.Executable()
	_, got, err = loadConfig(envOf(nil))
	if want := filepath.Join(filepath.Dir(exe), defaultConfigName); got != want || err == nil || !strings.Contains(err.Error(), envConfig) {
		t.Errorf("no environment: path %q, err %v; want %q and an error naming %s", got, err, want, envConfig)
	}
}

func TestH1_InitRefusesAnUnknownSource(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, orderConfig("events", "rows", "order-summary.wasm"))
	_, err := initFunction(context.Background(), envOf(map[string]string{envConfig: path, envSource: "kinesis"}), slog.Default())
	if !errors.Is(err, handler.ErrUnknownSource) {
		t.Fatalf("err = %v, want ErrUnknownSource", err)
	}
}

// TestH1_InitFromTheEnvironmentThenInvoke is the cold start and an
// invocation in-process: the configuration from the environment, the Wasm
// plugin from DYNAFOLD_PLUGIN_DIR, ddblocal from AWS_ENDPOINT_URL_DYNAMODB.
func TestH1_InitFromTheEnvironmentThenInvoke(t *testing.T) {
	env, events, rows := newTestEnv(t)
	plugins := t.TempDir()
	wasmPlugin(t, plugins)
	cfg := orderConfig(events, rows, "order-summary.wasm")
	cfg["projections"] = cfg["projections"].([]any)[:1]
	path := writeConfig(t, t.TempDir(), cfg)

	fn, err := initFunction(context.Background(), envOf(map[string]string{envConfig: path, envSource: "lambda",
		envPluginDir: plugins, envEndpoint: env.Server.Endpoint(), envRegion: "us-east-1"}), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	ev := readFixture(t, "stream_event.json")
	seedEvents(t, env, events, ev)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := fn(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("invoke: %+v, %v; want no failures", resp, err)
	}
	row := env.Get(t, rows, ordersummary.RowKey("o-2"))
	if row["total"].Str != "100" || row["version"].Str != "2" {
		t.Errorf("row o-2 = %v, want total 100 at version 2", row)
	}
}

// TestH4_EnvironmentOverridesAreValidated: an override is held to the rules
// of the file, before anything is loaded: DYNAFOLD_SOURCE "lamda" is
// refused naming the variable and the allowed sources, and a configuration
// made invalid by an override is refused by host's Validate.
func TestH4_EnvironmentOverridesAreValidated(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, orderConfig("events", "rows", "order-summary.wasm"))
	_, _, err := loadConfig(envOf(map[string]string{envConfig: path, envSource: "lamda"}))
	if err == nil || !errors.Is(err, handler.ErrUnknownSource) {
		t.Fatalf("DYNAFOLD_SOURCE=lamda: err = %v, want ErrUnknownSource", err)
	}
	for _, w := range []string{envSource, "source", `"lamda"`, `"lambda"`, `"pipe"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("DYNAFOLD_SOURCE=lamda: error %q does not contain %q", err, w)
		}
	}
	_, _, err = loadConfig(envOf(map[string]string{envConfig: path, envEndpoint: "localhost:8000"}))
	if err == nil || !strings.Contains(err.Error(), `endpoint: "localhost:8000" is not an http:// or https:// URL`) || !strings.Contains(err.Error(), envEndpoint) {
		t.Errorf("%s=localhost:8000: err = %v, want the endpoint refused", envEndpoint, err)
	}
	// A wrong value in the file is refused even when the environment would
	// override it.
	cfg := orderConfig("events", "rows", "order-summary.wasm")
	cfg["source"] = "lamda"
	path = writeConfig(t, t.TempDir(), cfg)
	_, _, err = loadConfig(envOf(map[string]string{envConfig: path, envSource: "pipe"}))
	if err == nil || !strings.Contains(err.Error(), `source: "lamda" is not a source`) || !strings.Contains(err.Error(), path) {
		t.Errorf("source lamda in the file: err = %v", err)
	}
	// And the whole function refuses to start.
	_, err = initFunction(t.Context(), envOf(map[string]string{envConfig: path}), slog.Default())
	if err == nil || !strings.Contains(err.Error(), `"lamda"`) {
		t.Errorf("initFunction: err = %v", err)
	}
}
