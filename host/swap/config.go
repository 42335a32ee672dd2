package swap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/dynafold/dynafold/internal/jsonconf"
)

// SourceConfig is where a projection's plugin comes from and how new
// versions are accepted. The host's configuration reads it as
// host.HotSwapConfig (typed durations, validated with the rest of the
// configuration) and converts it; the JSON shape is the same:
//
//	"hotSwap": {"watch": true, "sha256": ["9f2c..."], "archive": "plugins/.archive",
//	            "fixture": {"events": "fx/events.json", "rows": "fx/rows.json"}}
//	"hotSwap": {"s3": {"bucket": "plugins", "key": "orders/order-summary.wasm", "interval": "30s"}}
type SourceConfig struct {
	// Watch watches the projection's plugin file (its directory, with
	// fsnotify) and swaps in every new module written there.
	Watch bool `json:"watch,omitempty"`
	// Settle is how long the file must have stopped changing, a Go
	// duration string (default "100ms": DefaultSettle).
	Settle string `json:"settle,omitempty"`
	// S3 polls a versioned S3 object instead of a local file.
	S3 *S3Config `json:"s3,omitempty"`
	// SHA256 pins the modules that may be loaded (hex digests); empty
	// accepts any module that passes validation.
	SHA256 []string `json:"sha256,omitempty"`
	// Fixture is the smoke test of a module without a self_test export.
	Fixture *FixtureFiles `json:"fixture,omitempty"`
	// Archive is a directory where accepted modules are kept for `host
	// plugin rollback` of a watched file.
	Archive string `json:"archive,omitempty"`
	// MaxModuleBytes is the largest module the source reads, a watched
	// file or an S3 object (0: DefaultMaxModuleBytes); a larger one is
	// refused unread.
	MaxModuleBytes int64 `json:"maxModuleBytes,omitempty"`
}

// S3Config locates a plugin module in an S3-compatible store.
type S3Config struct {
	Bucket   string `json:"bucket"`
	Key      string `json:"key"`
	Interval string `json:"interval,omitempty"` // polling interval, a Go duration string (default "30s": DefaultPollInterval)
	Endpoint string `json:"endpoint,omitempty"` // an S3-compatible endpoint (path-style); empty: AWS
	Region   string `json:"region,omitempty"`   // default us-east-1
}

// FixtureFiles names a fixture's events and rows files (see Fixture).
type FixtureFiles struct {
	Events string `json:"events"`
	Rows   string `json:"rows"`
}

// Enabled reports whether the configuration asks for hot swapping.
func (c *SourceConfig) Enabled() bool { return c != nil && (c.Watch || c.S3 != nil) }

// Validate reports what cannot work in the configuration, naming the field
// (hotSwap.s3.interval) and what is allowed: a duration that is not one or
// is negative, an S3 source without bucket or key, both watch and s3, a
// fixture missing one of its files. Source and CheckEvery rely on it.
func (c *SourceConfig) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.Watch && c.S3 != nil {
		errs = append(errs, fmt.Errorf("hotSwap: sets both watch and s3: a plugin comes from one source, a watched file or an S3 object"))
	}
	if _, err := parseDuration("hotSwap.settle", c.Settle, DefaultSettle); err != nil {
		errs = append(errs, err)
	}
	if c.S3 != nil {
		if c.S3.Bucket == "" || c.S3.Key == "" {
			errs = append(errs, fmt.Errorf("hotSwap.s3: bucket and key are required"))
		}
		if _, err := parseDuration("hotSwap.s3.interval", c.S3.Interval, DefaultPollInterval); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxModuleBytes < 0 {
		errs = append(errs, fmt.Errorf("hotSwap.maxModuleBytes: %d is negative: use a size in bytes such as %d (absent: %d, 64 MiB)", c.MaxModuleBytes, DefaultMaxModuleBytes, DefaultMaxModuleBytes))
	}
	if c.Fixture != nil && (c.Fixture.Events == "" || c.Fixture.Rows == "") {
		errs = append(errs, fmt.Errorf("hotSwap.fixture: events and rows are both required"))
	}
	return errors.Join(errs...)
}

// CheckEvery is how often a host checks the source between Lambda
// invocations (Between.Every): an S3 object at its interval (default
// DefaultPollInterval), since each check is a request; a watched file at
// every call (0), since an unchanged file costs one stat. Call it on a
// validated configuration; an invalid interval gives the default.
func (c *SourceConfig) CheckEvery() time.Duration {
	if c == nil || c.S3 == nil {
		return 0
	}
	d, err := parseDuration("hotSwap.s3.interval", c.S3.Interval, DefaultPollInterval)
	if err != nil {
		return DefaultPollInterval
	}
	return d
}

// Apply sets cfg's Pins, Fixture and Archive from the configuration;
// relative paths start at dir (the configuration file's directory).
func (c *SourceConfig) Apply(cfg *Config, dir string) error {
	if c == nil {
		return nil
	}
	cfg.Pins = append(cfg.Pins, c.SHA256...)
	if c.Archive != "" {
		cfg.Archive = rel(dir, c.Archive)
	}
	if c.Fixture != nil {
		fx, err := LoadFixture(rel(dir, c.Fixture.Events), rel(dir, c.Fixture.Rows))
		if err != nil {
			return err
		}
		cfg.Fixture = fx
		cfg.FixtureFiles = &FixtureFiles{Events: rel(dir, c.Fixture.Events), Rows: rel(dir, c.Fixture.Rows)}
	}
	return nil
}

// Source opens the configured source; pluginPath is the projection's plugin
// file (watched when Watch is set). A configuration that enables neither
// returns a nil Source.
func (c *SourceConfig) Source(ctx context.Context, pluginPath string) (Source, error) {
	switch {
	case c == nil:
		return nil, nil
	case c.S3 != nil:
		if c.S3.Bucket == "" || c.S3.Key == "" {
			return nil, fmt.Errorf("hotSwap.s3: bucket and key are required")
		}
		interval, err := parseDuration("hotSwap.s3.interval", c.S3.Interval, DefaultPollInterval)
		if err != nil {
			return nil, err
		}
		client, err := NewS3Client(ctx, c.S3.Endpoint, c.S3.Region)
		if err != nil {
			return nil, err
		}
		return NewS3Source(client, c.S3.Bucket, c.S3.Key, interval, WithMaxObjectBytes(c.MaxModuleBytes)), nil
	case c.Watch:
		settle, err := parseDuration("hotSwap.settle", c.Settle, DefaultSettle)
		if err != nil {
			return nil, err
		}
		return NewDirSource(pluginPath, settle, WithMaxModuleBytes(c.MaxModuleBytes))
	}
	return nil, nil
}

// NewS3Client returns an S3 client with the default AWS credential chain;
// with an endpoint, path-style addressing against that endpoint (an
// S3-compatible store).
func NewS3Client(ctx context.Context, endpoint, region string) (*s3.Client, error) {
	if region == "" {
		region = "us-east-1"
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("S3 client: %w", err)
	}
	return s3.NewFromConfig(ac, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	}), nil
}

// parseDuration parses the duration string s of field what; empty and
// zero give def.
func parseDuration(what, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := jsonconf.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: %q is negative: use a positive duration such as %q (absent: %s)", what, s, def.String(), def)
	}
	if d == 0 {
		return def, nil
	}
	return d, nil
}

func rel(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// Between checks a source between Lambda invocations (never during one),
// at most once per Every (0: at every call).
type Between struct {
	Swapper *Swapper
	Source  Source
	Every   time.Duration
	// Last is when the source was last checked; zero: never. Set it when
	// the module serving was just read from the source (at start), so the
	// first check waits Every like the others.
	Last time.Time
	// Now returns the current time; nil is time.Now.
	Now func() time.Time
}

// Check checks the source when Every has passed since the last check, and
// offers a changed module (see CheckOnce). Call it from one goroutine, after
// an invocation has returned its response.
func (b *Between) Check(ctx context.Context) (Info, bool, error) {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	t := now()
	if !b.Last.IsZero() && t.Sub(b.Last) < b.Every {
		return b.Swapper.Current(), false, nil
	}
	b.Last = t
	return CheckOnce(ctx, b.Swapper, b.Source)
}
