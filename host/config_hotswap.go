package host

import (
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// HotSwapConfig is a projection's "hotSwap": where new versions of its
// plugin come from and how they are accepted.
//
//	"hotSwap": {"watch": true, "sha256": ["9f2c..."], "archive": "plugins/.archive",
//	            "fixture": {"events": "fx/events.json", "rows": "fx/rows.json"}}
//	"hotSwap": {"s3": {"bucket": "plugins", "key": "orders/order-summary.wasm", "interval": "30s"}}
//
// A watched file is opened through its directory: a symlink out of the
// directory, anything but a regular file and a module over MaxModuleBytes
// are refused, with the reason in the log and the swap history. Without watch or s3 the plugin file is loaded once, through the same
// pipeline (pins, fixture).
type HotSwapConfig struct {
	// Watch watches the projection's plugin file and swaps in every new
	// module written there. It excludes S3.
	Watch bool `json:"watch,omitempty"`
	// Settle is how long the watched file must have stopped changing
	// before it is read (default DefaultSettle); only with Watch.
	Settle Duration `json:"settle,omitempty"`
	// S3 polls a versioned S3 object instead of a local file.
	S3 *S3SourceConfig `json:"s3,omitempty"`
	// SHA256 pins the modules that may be loaded (64 hex digits each);
	// empty accepts any module that passes validation.
	SHA256 []string `json:"sha256,omitempty"`
	// Fixture is the smoke test of a module without a self_test export.
	Fixture *FixtureConfig `json:"fixture,omitempty"`
	// Archive is a directory, relative to the configuration file, where
	// accepted modules are kept for `host plugin rollback` of a watched
	// file.
	Archive string `json:"archive,omitempty"`
	// MaxModuleBytes is the largest module read from the source, a
	// watched file or an S3 object (default DefaultMaxModuleBytes, 64
	// MiB); a larger one is refused unread, as is a watched file that is
	// a symlink out of its directory.
	MaxModuleBytes int64 `json:"maxModuleBytes,omitempty"`
}

// S3SourceConfig locates a plugin module in a versioned S3 bucket or an
// S3-compatible store.
type S3SourceConfig struct {
	// Bucket is the bucket holding the module (required).
	Bucket string `json:"bucket"`
	// Key is the module's object key (required).
	Key string `json:"key"`
	// Interval is how often the object is polled (default
	// DefaultS3Interval).
	Interval Duration `json:"interval,omitempty"`
	// Endpoint is an S3-compatible endpoint, addressed path-style; empty:
	// AWS.
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the bucket's region (default DefaultRegion).
	Region string `json:"region,omitempty"`
}

// FixtureConfig names a smoke-test fixture's files, relative to the
// configuration file: the events to fold and the rows they must give.
type FixtureConfig struct {
	// Events is the fixture's events file (required).
	Events string `json:"events"`
	// Rows is the fixture's expected rows file (required).
	Rows string `json:"rows"`
}

// Enabled reports whether the configuration names a source of new
// versions (a watched file or an S3 object).
func (h *HotSwapConfig) Enabled() bool { return h != nil && (h.Watch || h.S3 != nil) }

// CheckEvery is how often Host.CheckSwaps checks the source: an S3 object
// at its interval (default DefaultS3Interval), since each check is a
// request; a watched file at every call (0), since an unchanged file costs
// one stat.
func (h *HotSwapConfig) CheckEvery() time.Duration {
	if h == nil || h.S3 == nil {
		return 0
	}
	if h.S3.Interval > 0 {
		return time.Duration(h.S3.Interval)
	}
	return DefaultS3Interval
}

// effective returns a copy with the defaults filled in, nil for nil.
func (h *HotSwapConfig) effective() *HotSwapConfig {
	if h == nil {
		return nil
	}
	e := *h
	if e.Watch && e.Settle == 0 {
		e.Settle = Duration(DefaultSettle)
	}
	if e.Enabled() && e.MaxModuleBytes == 0 {
		e.MaxModuleBytes = DefaultMaxModuleBytes
	}
	if h.S3 != nil {
		s := *h.S3
		if s.Interval == 0 {
			s.Interval = Duration(DefaultS3Interval)
		}
		if s.Region == "" {
			s.Region = DefaultRegion
		}
		e.S3 = &s
	}
	if h.Fixture != nil {
		f := *h.Fixture
		e.Fixture = &f
	}
	e.SHA256 = append([]string(nil), h.SHA256...)
	return &e
}

// SourceConfig converts the configuration, defaults filled in, to the form
// of package host/swap (its Apply and Source methods); nil for nil. The
// durations are already parsed and validated here: swap only reads back
// their canonical form.
func (h *HotSwapConfig) SourceConfig() *swap.SourceConfig {
	e := h.effective()
	if e == nil {
		return nil
	}
	sc := &swap.SourceConfig{Watch: e.Watch, SHA256: e.SHA256, Archive: e.Archive, MaxModuleBytes: e.MaxModuleBytes}
	if e.Watch {
		sc.Settle = e.Settle.String()
	}
	if s := e.S3; s != nil {
		sc.S3 = &swap.S3Config{Bucket: s.Bucket, Key: s.Key, Interval: s.Interval.String(), Endpoint: s.Endpoint, Region: s.Region}
	}
	if f := e.Fixture; f != nil {
		sc.Fixture = &swap.FixtureFiles{Events: f.Events, Rows: f.Rows}
	}
	return sc
}
