// Package transport loads a plugin module with whichever transport it
// follows: a raw dynafold module through host/plugin, an Extism
// module through host/plugin/extism, told apart by extism.Detect. It is the
// one place that imports both, so callers that load plugins from files or
// bytes (the host, hot swap, the operator commands) call it instead of
// plugin.Load.
package transport

import (
	"context"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
)

// Plugin is what a loaded plugin offers on either transport: *plugin.Plugin
// and *extism.Plugin both implement it.
type Plugin interface {
	logic.Logic
	// Name returns the plugin's name and version, as errors name it.
	Name() string
	// SHA256 returns the hex SHA-256 of the module's bytes.
	SHA256() string
	// Call calls an export with an encoded request and returns the encoded
	// response (the optional exports: initial, terminal, to_item, ...).
	Call(ctx context.Context, fn string, input []byte) ([]byte, error)
}

var (
	_ Plugin = (*plugin.Plugin)(nil)
	_ Plugin = (*extism.Plugin)(nil)
)

// Load detects the module's transport and loads it with cfg.
func Load(ctx context.Context, wasm []byte, cfg plugin.Config) (Plugin, extism.Transport, error) {
	t, err := extism.Detect(wasm)
	if err != nil {
		return nil, t, &plugin.LoadError{Plugin: nameOr(cfg.Name, "module"), Cause: err}
	}
	if t == extism.TransportExtism {
		p, err := extism.Load(ctx, wasm, extism.Config(cfg))
		if err != nil {
			return nil, t, err
		}
		return p, t, nil
	}
	p, err := plugin.Load(ctx, wasm, cfg)
	if err != nil {
		return nil, t, err
	}
	return p, t, nil
}

// LoadFile reads a module from path and loads it with its transport.
// Without cfg.Name, the file's base name names the plugin until describe
// answers.
func LoadFile(ctx context.Context, path string, cfg plugin.Config) (Plugin, extism.Transport, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, extism.TransportUnknown, &plugin.LoadError{Plugin: path, Cause: err}
	}
	t, err := extism.Detect(wasm)
	if err != nil {
		return nil, t, &plugin.LoadError{Plugin: path, Cause: err}
	}
	if t == extism.TransportExtism {
		p, err := extism.LoadFile(ctx, path, extism.Config(cfg))
		if err != nil {
			return nil, t, err
		}
		return p, t, nil
	}
	p, err := plugin.LoadFile(ctx, path, cfg)
	if err != nil {
		return nil, t, err
	}
	return p, t, nil
}

// Precompile fills cfg.CacheDir with the module's compiled code (and, for
// an Extism module, the Extism kernel's).
func Precompile(ctx context.Context, wasm []byte, cfg plugin.Config) error {
	t, err := extism.Detect(wasm)
	if err != nil {
		return err
	}
	if t == extism.TransportExtism {
		return extism.Precompile(ctx, wasm, extism.Config(cfg))
	}
	return plugin.Precompile(ctx, wasm, cfg)
}

// Stats returns a loaded plugin's pool and call counters.
func Stats(p Plugin) (plugin.Stats, error) {
	switch p := p.(type) {
	case *plugin.Plugin:
		return p.Stats(), nil
	case *extism.Plugin:
		return p.Stats(), nil
	}
	return plugin.Stats{}, fmt.Errorf("transport: no stats for %T", p)
}

func nameOr(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}
