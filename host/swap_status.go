package host

import "github.com/dynafold/dynafold/host/swap"

// SwapStatus is a hot-swapped projection's plugin: the version serving, the
// swapper's counters and its last events (swaps, refusals with their
// reasons, a fallback to an archived version at start), for status pages
// and metrics.
type SwapStatus struct {
	Projection string
	Serving    swap.Info
	Stats      swap.Stats
	Fallbacks  uint64       // starts on an archived version because the module was refused
	Events     []swap.Event // newest first
}

// SwapStatus returns the status of every projection whose plugin is
// hot-swapped (a "hotSwap" section), in configuration order.
func (h *Host) SwapStatus() []SwapStatus {
	out := make([]SwapStatus, 0, len(h.swaps))
	for _, hs := range h.swaps {
		s := hs.swapper
		out = append(out, SwapStatus{Projection: hs.projection, Serving: s.Current(), Stats: s.Stats(), Fallbacks: s.Fallbacks(), Events: s.Events()})
	}
	return out
}
