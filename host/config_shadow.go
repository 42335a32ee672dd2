package host

import (
	"strings"
)

// ShadowConfig is a projection's "shadow": a candidate plugin that runs
// beside the live one on the same batches and never writes. Each row whose
// candidate result differs from what the live plugin wrote is counted
// (Host.ShadowStats) and logged with the row's key; `host plugin promote`
// (Host.Promote) makes the candidate live through the hot-swap pipeline.
//
//	"shadow": {"plugin": "plugins/order-summary-1.1.wasm"}
//
// The candidate reads what the live plugin reads (each row once more per
// batch, before the live write) and is compared on the row after the batch;
// the createdAt and writtenBy attributes, which the host sets, are left out
// of the comparison.
type ShadowConfig struct {
	// Plugin is the candidate's .wasm module, relative to the configuration
	// file, or "native:<name>" for logic registered with WithNative
	// (required).
	Plugin string `json:"plugin"`
}

// validate reports a shadow that cannot work.
func (s *ShadowConfig) validate(ps *problems, where string, p *ProjectionConfig) {
	if s == nil {
		return
	}
	switch {
	case strings.TrimSpace(s.Plugin) == "":
		ps.add(where+".shadow.plugin", "is required: the candidate plugin's .wasm file (or native:<name>)")
	case s.Plugin == p.Plugin:
		ps.add(where+".shadow.plugin", "%q is the live plugin itself: name the candidate to compare with it", s.Plugin)
	}
}
