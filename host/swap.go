package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// hotSwap is a projection's hot-swappable plugin: the Swapper the engine
// calls as its logic, and the source new versions come from.
type hotSwap struct {
	projection string
	swapper    *swap.Swapper
	source     swap.Source // nil when the configuration names no source

	between swap.Between // CheckSwaps' last check and interval
}

// newHotSwap loads a projection's plugin through the hot-swap pipeline of
// package host/swap: pc.Plugin (relative to the configuration file) is the
// module, pc.HotSwap where new versions come from and how they are accepted
// (pins, fixture, archive). The module first served is the source's when it
// holds one (an S3 object), else the file at pc.Plugin.
//
// The Swapper records the version that computed each item in the
// projection's writtenBy attribute, so the engine built on it writes none
// itself (the engine names its plugin once, when it is built).
func (c *Config) newHotSwap(ctx context.Context, pc ProjectionConfig, log *slog.Logger) (*hotSwap, error) {
	cfg := swap.Config{
		Plugin:    c.pluginConfig(pc.Name, log),
		WrittenBy: pc.WrittenBy,
		Logger:    log.With("projection", pc.Name),
	}
	cfg.Expect.StreamComposites = map[string][]string{}
	for _, st := range c.EventStore.Streams {
		cfg.Expect.StreamComposites[st.Name] = st.Composite
	}
	sc := pc.HotSwap.SourceConfig()
	if err := sc.Apply(&cfg, c.dir); err != nil {
		return nil, fmt.Errorf("hotSwap: %w", err)
	}
	path := c.rel(pc.Plugin)
	src, err := sc.Source(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("hotSwap: %w", err)
	}
	var sw *swap.Swapper
	if src != nil {
		sw, err = swap.OpenOrArchived(ctx, src, cfg) // a refused module falls back on the archive
	}
	if src == nil || errors.Is(err, swap.ErrNoModule) {
		var c0 *swap.Candidate
		if c0, err = readCandidate(path); err == nil {
			sw, err = swap.NewOrArchived(ctx, *c0, cfg)
		}
	}
	if err != nil {
		if src != nil {
			src.Close()
		}
		return nil, err
	}
	return &hotSwap{projection: pc.Name, swapper: sw, source: src, between: swap.Between{Every: pc.HotSwap.CheckEvery(), Last: time.Now()}}, nil
}

func readCandidate(path string) (*swap.Candidate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	return &swap.Candidate{Wasm: b, Origin: path}, nil
}

func (c *Config) rel(p string) string {
	if p == "" || filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

// watchAll watches every source of hs until ctx ends.
func watchAll(ctx context.Context, hs ...*hotSwap) error {
	var wg sync.WaitGroup
	errs := make([]error, len(hs))
	for i, h := range hs {
		if h.source == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = swap.Watch(ctx, h.swapper, h.source)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SwapCheck is what Host.CheckSwaps found for one hot-swapped plugin.
type SwapCheck struct {
	Projection string
	Serving    swap.Info // the version serving after the check
	Swapped    bool      // the source offered a new version and it was swapped in
	// Err is a source that failed, or a module refused by the pipeline (a
	// *swap.CandidateError, already logged by the Swapper); either way the
	// version that served before keeps serving.
	Err error
}

// CheckSwaps checks the source of every hot-swapped plugin once,
// unless its last check is more recent than its interval, and offers a
// changed module to the plugin's Swapper (swap.Between): a module that
// passes validation and the smoke test serves every call made after
// CheckSwaps returns. It is Watch for a host that must not swap while it
// processes a batch: cmd/lambda calls it between invocations, when no batch
// is in flight. The interval is the S3 source's "interval" (default
// swap.DefaultPollInterval); a watched file is checked at every call. Calls
// are serialized.
func (h *Host) CheckSwaps(ctx context.Context) []SwapCheck {
	h.swapMu.Lock()
	defer h.swapMu.Unlock()
	var out []SwapCheck
	for _, hs := range h.swaps {
		if hs.source == nil {
			continue
		}
		hs.between.Swapper, hs.between.Source = hs.swapper, hs.source
		info, swapped, err := hs.between.Check(ctx)
		out = append(out, SwapCheck{Projection: hs.projection, Serving: info, Swapped: swapped, Err: err})
	}
	return out
}

// close closes the Swapper and the source.
func (h *hotSwap) close(ctx context.Context) error {
	err := h.swapper.Close(ctx)
	if h.source != nil {
		err = errors.Join(err, h.source.Close())
	}
	return err
}
