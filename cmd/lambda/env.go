package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynafold/dynafold/host"
	handler "github.com/dynafold/dynafold/host/lambda"
)

// The environment variables the function reads (see the package doc).
const (
	envConfig    = "DYNAFOLD_CONFIG"
	envSource    = "DYNAFOLD_SOURCE"
	envPluginDir = "DYNAFOLD_PLUGIN_DIR"
	envEndpoint  = "AWS_ENDPOINT_URL_DYNAMODB"
	envRegion    = "AWS_REGION"
	envTaskRoot  = "LAMBDA_TASK_ROOT"
	envMetrics   = "DYNAFOLD_METRICS"
)

// defaultConfigName is the configuration file looked for in the task root.
const defaultConfigName = "dynafold.json"

// loadConfig reads the configuration named by the environment, applies the
// environment's overrides and validates the result with host's Validate, so
// that an override is held to the same rules as the file (DYNAFOLD_SOURCE
// "lamda" is refused, naming the variable and the allowed values). It
// returns the configuration and its path.
func loadConfig(getenv func(string) string) (*host.Config, string, error) {
	path := getenv(envConfig)
	if path == "" {
		dir := getenv(envTaskRoot)
		if dir == "" {
			exe, err := os.Executable()
			if err != nil {
				return nil, "", fmt.Errorf("no %s, no %s, and the binary's directory is unknown: %w", envConfig, envTaskRoot, err)
			}
			dir = filepath.Dir(exe)
		}
		path = filepath.Join(dir, defaultConfigName)
	}
	cfg, err := host.LoadConfig(path)
	if err != nil {
		return nil, path, fmt.Errorf("%w (set %s to the configuration file)", err, envConfig)
	}
	if s := getenv(envSource); s != "" {
		if err := host.Source(s).Check(); err != nil {
			return nil, path, fmt.Errorf("%s (overrides the configuration's source): %w: %w", envSource, handler.ErrUnknownSource, err)
		}
		cfg.Source = host.Source(s)
	}
	if dir := getenv(envPluginDir); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, path, fmt.Errorf("%s: %w", envPluginDir, err)
		}
		for i, p := range cfg.Projections {
			if !strings.HasPrefix(p.Plugin, "native:") && !filepath.IsAbs(p.Plugin) {
				cfg.Projections[i].Plugin = filepath.Join(abs, p.Plugin)
			}
		}
	}
	if e := getenv(envEndpoint); e != "" {
		cfg.Endpoint = e
	}
	if r := getenv(envRegion); r != "" {
		cfg.Region = r
	}
	if err := cfg.Validate(); err != nil {
		return nil, path, fmt.Errorf("%s with the environment's overrides (%s, %s, %s, %s): %w", path, envSource, envPluginDir, envEndpoint, envRegion, err)
	}
	return cfg, path, nil
}
