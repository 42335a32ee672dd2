package host

import "time"

// VerifyConfig makes `host run` verify a sample of each projection's rows
// on a schedule (the sidecar section's "verify"): the fleet runs one pass
// per interval (the worker that claims it in the lease table), and each
// pass exports the drift it found per projection as metrics, on the status
// page and in `host status`.
type VerifyConfig struct {
	// Every is the time between two passes (required, at least
	// MinVerifyEvery).
	Every Duration `json:"every"`
	// Sample is the fraction of each projection's rows a pass checks,
	// above 0 and at most 1 (default DefaultVerifySample).
	Sample float64 `json:"sample,omitempty"`
	// Grace is the age under which an event a row lacks is lag, not drift
	// (default DefaultVerifyGrace).
	Grace Duration `json:"grace,omitempty"`
	// Segments is the number of parallel scan segments (default
	// DefaultVerifySegments).
	Segments int `json:"segments,omitempty"`
}

// Defaults and bounds of the sidecar's verify section.
const (
	DefaultVerifySample = 0.01
	MinVerifyEvery      = time.Second
)

// Effective returns the section with its defaults filled in.
func (v VerifyConfig) Effective() VerifyConfig {
	if v.Sample == 0 {
		v.Sample = DefaultVerifySample
	}
	if v.Grace == 0 {
		v.Grace = Duration(DefaultVerifyGrace)
	}
	if v.Segments == 0 {
		v.Segments = DefaultVerifySegments
	}
	return v
}

func (v *VerifyConfig) validate(ps *problems, path string) {
	if v == nil {
		return
	}
	switch {
	case v.Every == 0:
		ps.add(path+".every", "is required: how often to verify a sample of the rows, e.g. \"10m\"")
	case time.Duration(v.Every) < MinVerifyEvery:
		ps.add(path+".every", "is %s: use at least %s", v.Every, MinVerifyEvery)
	}
	if v.Sample < 0 || v.Sample > 1 {
		ps.add(path+".sample", "is %g: use a fraction above 0 and at most 1 (0.01 checks 1%% of the rows per pass; absent: %g)", v.Sample, DefaultVerifySample)
	}
	if v.Grace < 0 {
		ps.add(path+".grace", "is negative (%s): use a positive duration such as \"2m\", or leave it out (%s)", v.Grace, DefaultVerifyGrace)
	}
	if v.Segments < 0 || v.Segments > 1_000_000 {
		ps.add(path+".segments", "is %d: use 1 to 1000000 parallel scan segments (absent: %d)", v.Segments, DefaultVerifySegments)
	}
}
