package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
)

// Config is the one configuration format (SPEC H4) binding plugins to
// streams, read-model tables and options. It is read from JSON; see the
// README for an example.
type Config struct {
	// Endpoint is the DynamoDB endpoint. Empty: AWS_ENDPOINT_URL_DYNAMODB,
	// else the AWS default for Region.
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the AWS region (default us-east-1).
	Region string `json:"region,omitempty"`
	// Source is who delivers the records and reads the batch response:
	// "lambda" (default; identifier dynamodb.SequenceNumber) or "pipe"
	// (identifier eventID).
	Source string `json:"source,omitempty"`
	// OnDecodeFailure is "report" (default) or "skip" (SPEC B4).
	OnDecodeFailure string `json:"onDecodeFailure,omitempty"`
	// EventStore describes the event table and its streams.
	EventStore EventStoreConfig `json:"eventStore"`
	// Plugins holds the defaults of every plugin's sandbox.
	Plugins PluginDefaults `json:"plugins,omitempty"`
	// Projections binds plugins to read models.
	Projections []ProjectionConfig `json:"projections"`
	// SideEffectStreams names streams whose decoded events come back
	// unrouted, for side effects (SPEC B6).
	SideEffectStreams []string `json:"sideEffectStreams,omitempty"`

	dir string // the config file's directory: relative plugin paths start there
}

// EventStoreConfig is the event table and the streams stored in it.
type EventStoreConfig struct {
	Table         string         `json:"table"`
	Schema        string         `json:"schema"`
	SchemaVersion int            `json:"schemaVersion"`
	Streams       []StreamConfig `json:"streams"`
}

// StreamConfig defines one event stream (SPEC ES1).
type StreamConfig struct {
	Name       string   `json:"name"`
	EventTypes []string `json:"eventTypes,omitempty"`
	Composite  []string `json:"composite"`
}

// PluginDefaults are sandbox limits applied to every plugin (SPEC W4, W5).
type PluginDefaults struct {
	CacheDir string `json:"cacheDir,omitempty"`
	// CacheReadOnly says CacheDir ships read-only (a Lambda zip, a
	// container image): it serves the plugins `host plugin precompile`
	// compiled into it and is never written (see plugin.Config).
	CacheReadOnly    bool     `json:"cacheReadOnly,omitempty"`
	PoolSize         int      `json:"poolSize,omitempty"`
	MemoryLimitPages uint32   `json:"memoryLimitPages,omitempty"`
	CallTimeout      Duration `json:"callTimeout,omitempty"`
	// MaxLoopIterations is a fuel-like budget of loop iterations per call
	// (plugin.Config.MaxLoopIterations); 0: none.
	MaxLoopIterations int64 `json:"maxLoopIterations,omitempty"`
	// GuestLog lets every plugin log into the host's log (off by default);
	// a projection's own guestLog overrides it field by field.
	GuestLog *GuestLogConfig `json:"guestLog,omitempty"`
}

// GuestLogConfig is guest logging (ABI.md §7, plugin.GuestLog): a plugin's
// messages go to the host's log, rate-limited per plugin. Absent fields take
// the value of the plugins defaults, else plugin's defaults (off, 10 messages
// per second, bursts of 100).
type GuestLogConfig struct {
	// Enabled sends the plugin's messages to the host's log; when false
	// they are discarded (the plugin still loads and runs).
	Enabled *bool `json:"enabled,omitempty"`
	// Rate is the average number of messages per second per plugin.
	Rate float64 `json:"rate,omitempty"`
	// Burst is the number of messages a plugin may log at once.
	Burst int `json:"burst,omitempty"`
}

// pluginConfig is the sandbox of projection's plugin: the plugins
// defaults, a pool of at least the projection's row concurrency, its guest
// logging, and the cache directory relative to the configuration file.
func (c *Config) pluginConfig(projection string, concurrency int, log *slog.Logger) plugin.Config {
	pd := c.Plugins
	return plugin.Config{
		PoolSize: max(pd.PoolSize, concurrency), MemoryLimitPages: pd.MemoryLimitPages,
		CallTimeout: time.Duration(pd.CallTimeout), MaxLoopIterations: pd.MaxLoopIterations,
		CacheDir: c.rel(pd.CacheDir), CacheReadOnly: pd.CacheReadOnly,
		Logger: log, GuestLog: c.guestLog(projection),
	}
}

// guestLog returns the guest logging of projection: its guestLog over the
// plugins defaults.
func (c *Config) guestLog(projection string) plugin.GuestLog {
	var gl plugin.GuestLog
	for _, g := range []*GuestLogConfig{c.Plugins.GuestLog, c.projectionGuestLog(projection)} {
		if g == nil {
			continue
		}
		if g.Enabled != nil {
			gl.Enabled = *g.Enabled
		}
		if g.Rate != 0 {
			gl.Rate = g.Rate
		}
		if g.Burst != 0 {
			gl.Burst = g.Burst
		}
	}
	return gl
}

func (c *Config) projectionGuestLog(projection string) *GuestLogConfig {
	for i := range c.Projections {
		if c.Projections[i].Name == projection {
			return c.Projections[i].GuestLog
		}
	}
	return nil
}

// validate reports a guest log setting that cannot work; where names it.
func (g *GuestLogConfig) validate(where string) error {
	switch {
	case g == nil:
	case g.Rate < 0:
		return fmt.Errorf("configuration: %s.guestLog.rate %v is negative; it is messages per second", where, g.Rate)
	case g.Burst < 0:
		return fmt.Errorf("configuration: %s.guestLog.burst %d is negative; it is a number of messages", where, g.Burst)
	}
	return nil
}

// ProjectionConfig binds one plugin to one read model.
type ProjectionConfig struct {
	// Name names the projection in outcomes, logs and commands.
	Name string `json:"name"`
	// Plugin is the path of the .wasm module (relative to the config file),
	// or "native:<name>" for logic registered with WithNative.
	Plugin string `json:"plugin"`
	// Table is the read-model table; Key its key attributes (default pk, sk).
	Table string   `json:"table"`
	Key   []string `json:"key,omitempty"`
	// Checkpoint is the numeric field holding the last applied version.
	Checkpoint CheckpointConfig `json:"checkpoint"`
	// Revision, when set, guards every write of the row (SPEC M5).
	Revision *RevisionConfig `json:"revision,omitempty"`
	// CreatedAt names the attribute keeping the row's creation time
	// (default "createdAt"; "-" disables it).
	CreatedAt string `json:"createdAt,omitempty"`
	// WrittenBy names the attribute recording the plugin name and version
	// that wrote the row (SPEC Y3; empty disables it).
	WrittenBy string `json:"writtenBy,omitempty"`
	// Concurrency is the number of rows processed at once (default 10).
	Concurrency int `json:"concurrency,omitempty"`
	// Retry is the lost-race policy (SPEC P10).
	Retry RetryConfig `json:"retry,omitempty"`
	// ReadModel describes entity features of the read model; projections
	// refuse the ones that cannot work (SPEC P6).
	ReadModel ReadModelConfig `json:"readModel,omitempty"`
	// HotSwap, when set, serves the plugin through the hot-swap pipeline
	// (SPEC H3): where new versions come from (a watched directory or a
	// versioned S3 object), sha256 pins, the smoke-test fixture, the
	// archive for rollback. Host.Watch follows the sources; cmd/lambda
	// checks them between invocations (Host.CheckSwaps).
	HotSwap *swap.SourceConfig `json:"hotSwap,omitempty"`
	// GuestLog overrides plugins.guestLog for this projection's plugin.
	GuestLog *GuestLogConfig `json:"guestLog,omitempty"`
}

// CheckpointConfig maps the checkpoint onto a field: stored = version + offset.
type CheckpointConfig struct {
	Field  string `json:"field"`
	Offset int64  `json:"offset,omitempty"`
}

// RevisionConfig is the row's write counter and guard.
type RevisionConfig struct {
	Field   string `json:"field"`
	Initial int64  `json:"initial,omitempty"`
}

// RetryConfig is the lost-race retry policy.
type RetryConfig struct {
	Attempts int      `json:"attempts,omitempty"`
	Base     Duration `json:"base,omitempty"`
	Max      Duration `json:"max,omitempty"`
}

// ReadModelConfig lists entity features a read model may declare. Each one
// set makes the projection refuse to start with [EDD-9081].
type ReadModelConfig struct {
	Versioned  bool `json:"versioned,omitempty"`
	SoftDelete bool `json:"softDelete,omitempty"`
	TimeSeries bool `json:"timeSeries,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("5s").
type Duration time.Duration

// UnmarshalJSON reads "5s", "200ms", ...
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string like \"5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// String returns the duration as Go writes it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadConfig reads a configuration file. Unknown fields are errors, so a
// misspelt option never passes silently.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.dir = filepath.Dir(path)
	return cfg, nil
}

// ParseConfig reads a configuration from JSON.
func ParseConfig(b []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return &cfg, cfg.Validate()
}

// Validate reports what cannot work in the configuration.
func (c *Config) Validate() error {
	es := c.EventStore
	switch {
	case es.Table == "":
		return fmt.Errorf("configuration: eventStore.table is required")
	case es.Schema == "":
		return fmt.Errorf("configuration: eventStore.schema is required (the effect-dynamodb schema name, e.g. \"shop\")")
	case len(es.Streams) == 0:
		return fmt.Errorf("configuration: eventStore.streams lists no stream")
	}
	if err := c.Plugins.GuestLog.validate("plugins"); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, p := range c.Projections {
		switch {
		case p.Name == "":
			return fmt.Errorf("configuration: projections[%d] has no name", i)
		case names[p.Name]:
			return fmt.Errorf("configuration: two projections named %q", p.Name)
		case p.Plugin == "":
			return fmt.Errorf("configuration: projection %q names no plugin", p.Name)
		case p.Table == "":
			return fmt.Errorf("configuration: projection %q names no read-model table", p.Name)
		}
		names[p.Name] = true
		if err := p.GuestLog.validate(fmt.Sprintf("projection %q", p.Name)); err != nil {
			return err
		}
		rm := p.ReadModel
		for _, refused := range []struct {
			on     bool
			what   string
			reason string
		}{
			{rm.Versioned, "versioned", "the entity's own version counter would be the checkpoint, but a projection's checkpoint is the stream version"},
			{rm.SoftDelete, "softDelete", "projections never delete rows; they write tombstones"},
			{rm.TimeSeries, "timeSeries", "a projection writes one row per key, whole, and a time series appends"},
		} {
			if refused.on {
				return fmt.Errorf("configuration: projection %q: [EDD-9081] a %s read model cannot be a projection's target: %s", p.Name, refused.what, refused.reason)
			}
		}
	}
	return nil
}
