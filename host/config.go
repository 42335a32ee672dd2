package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/jsonconf"
)

// Config is the one configuration format binding plugins to streams,
// read-model tables and options. It is read from JSON by LoadConfig or
// ParseConfig, which refuse any key that is not exactly a field's name, a
// key given twice and data after the object, then run Validate. The
// defaults of absent fields are listed in config_defaults.go (Default*
// constants) and the README; Effective returns the configuration with them
// filled in.
type Config struct {
	// Endpoint is the DynamoDB endpoint, an http or https URL. Empty:
	// AWS_ENDPOINT_URL_DYNAMODB, else the AWS default for Region.
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the AWS region (default DefaultRegion).
	Region string `json:"region,omitempty"`
	// Source is who delivers the records and reads the batch response:
	// SourceLambda (default) or SourcePipe.
	Source Source `json:"source,omitempty"`
	// OnDecodeFailure is what becomes of a record that cannot be decoded:
	// DecodeFailureReport (default) or DecodeFailureSkip.
	OnDecodeFailure DecodeFailurePolicy `json:"onDecodeFailure,omitempty"`
	// EventStore describes the event table and its streams.
	EventStore EventStoreConfig `json:"eventStore"`
	// Plugins holds the defaults of every plugin's sandbox.
	Plugins PluginDefaults `json:"plugins,omitempty"`
	// Projections binds plugins to read models; at least one is required.
	Projections []ProjectionConfig `json:"projections"`
	// SideEffectStreams names streams (of EventStore.Streams) whose decoded
	// events come back unrouted, for side effects.
	SideEffectStreams []string `json:"sideEffectStreams,omitempty"`
	// Quarantine is the table keeping the records a reader gave up on
	// (config_quarantine.go); nil: none.
	Quarantine *QuarantineConfig `json:"quarantine,omitempty"`
	// Admin is the operations HTTP server of a long-running host
	// (config_admin.go); nil: none.
	Admin *AdminConfig `json:"admin,omitempty"`
	// Sidecar configures `host run`, the host's own change-feed reader
	// (see config_sidecar.go); nil when the host is not run that way.
	Sidecar *SidecarConfig `json:"sidecar,omitempty"`

	dir string // the config file's directory: relative plugin paths start there
}

// Source is who delivers the change-feed records and reads the partial
// batch response; it decides which field identifies a failed record.
type Source string

// The sources.
const (
	// SourceLambda is a Lambda event source mapping; a failed record is
	// identified by its dynamodb.SequenceNumber.
	SourceLambda Source = "lambda"
	// SourcePipe is an EventBridge Pipe; a failed record is identified by
	// its eventID.
	SourcePipe Source = "pipe"
)

// Sources lists the allowed values of Source.
var Sources = []Source{SourceLambda, SourcePipe}

// Check reports a source that is not one of Sources; empty (the default,
// SourceLambda) is allowed.
func (s Source) Check() error {
	if s == "" || s == SourceLambda || s == SourcePipe {
		return nil
	}
	msg := fmt.Sprintf("%q is not a source: use %q (a Lambda event source mapping) or %q (an EventBridge Pipe)", string(s), SourceLambda, SourcePipe)
	if strings.EqualFold(string(s), "kinesis") {
		msg += "; a mapping or Pipe on a Kinesis data stream is one of these too: the handler reads Kinesis records by their eventSource"
	}
	return errors.New(msg)
}

// UnmarshalJSON reads a source and refuses any other string.
func (s *Source) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a string, %q or %q", SourceLambda, SourcePipe)
	}
	if err := Source(v).Check(); err != nil {
		return err
	}
	*s = Source(v)
	return nil
}

// DecodeFailurePolicy is what becomes of a record whose image cannot be
// decoded into an event.
type DecodeFailurePolicy string

// The decode failure policies.
const (
	// DecodeFailureReport reports the record as failed, so the event source
	// retries it and, in the end, sends it to its on-failure destination.
	DecodeFailureReport DecodeFailurePolicy = "report"
	// DecodeFailureSkip acknowledges the record; it is still listed in the
	// batch's result and logged.
	DecodeFailureSkip DecodeFailurePolicy = "skip"
)

// DecodeFailurePolicies lists the allowed values of DecodeFailurePolicy.
var DecodeFailurePolicies = []DecodeFailurePolicy{DecodeFailureReport, DecodeFailureSkip}

// Check reports a policy that is not one of DecodeFailurePolicies; empty
// (the default, DecodeFailureReport) is allowed.
func (p DecodeFailurePolicy) Check() error {
	if p == "" || p == DecodeFailureReport || p == DecodeFailureSkip {
		return nil
	}
	return fmt.Errorf("%q is not a decode failure policy: use %q (the record fails and is retried) or %q (the record is acknowledged)", string(p), DecodeFailureReport, DecodeFailureSkip)
}

// UnmarshalJSON reads a policy and refuses any other string.
func (p *DecodeFailurePolicy) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a string, %q or %q", DecodeFailureReport, DecodeFailureSkip)
	}
	if err := DecodeFailurePolicy(v).Check(); err != nil {
		return err
	}
	*p = DecodeFailurePolicy(v)
	return nil
}

// EventStoreConfig is the event table and the streams stored in it.
type EventStoreConfig struct {
	// Table is the event table's name (required).
	Table string `json:"table"`
	// Schema is the effect-dynamodb schema name, e.g. "shop" (required).
	Schema string `json:"schema"`
	// SchemaVersion is the schema's version (default DefaultSchemaVersion).
	SchemaVersion int `json:"schemaVersion"`
	// Streams defines the streams stored in the table; at least one.
	Streams []StreamConfig `json:"streams"`
	// Compression, when set, makes Append pack event data with a codec
	// (events are always read whether packed or not).
	Compression *CompressionConfig `json:"compression,omitempty"`
}

// StreamConfig defines one event stream.
type StreamConfig struct {
	// Name is the stream's name, unique among the streams (required).
	Name string `json:"name"`
	// EventTypes lists the stream's event types; empty: any.
	EventTypes []string `json:"eventTypes,omitempty"`
	// Composite lists the fields whose values identify a stream instance
	// (required, at least one).
	Composite []string `json:"composite"`
}

// PluginDefaults are sandbox limits applied to every plugin.
type PluginDefaults struct {
	// CacheDir is a directory where compiled plugins are cached across
	// processes, relative to the configuration file; empty: no cache.
	CacheDir string `json:"cacheDir,omitempty"`
	// CacheReadOnly says CacheDir ships read-only (a Lambda zip, a
	// container image): it serves the plugins `host plugin precompile`
	// compiled into it and is never written (see plugin.Config).
	CacheReadOnly bool `json:"cacheReadOnly,omitempty"`
	// CacheKeyFile is the file holding the key that authenticates the
	// cache's compiled code, relative to the configuration file; empty:
	// $DYNAFOLD_CACHE_KEY, else dynafold-cache.key in CacheDir (see
	// plugin.Config.CacheKeyFile).
	CacheKeyFile string `json:"cacheKeyFile,omitempty"`
	// PoolSize is the maximum number of instances of a plugin, so of calls
	// into it at once (default DefaultPoolSize).
	PoolSize int `json:"poolSize,omitempty"`
	// MemoryLimitPages caps each instance's memory in 64 KiB pages, at most
	// MaxMemoryLimitPages (default DefaultMemoryLimitPages).
	MemoryLimitPages uint32 `json:"memoryLimitPages,omitempty" range:"0,65536"`
	// CallTimeout bounds each call into a plugin (default
	// DefaultCallTimeout).
	CallTimeout Duration `json:"callTimeout,omitempty"`
	// MaxLoopIterations is a fuel-like budget of loop iterations per call
	// (plugin.Config.MaxLoopIterations); 0: none.
	MaxLoopIterations int64 `json:"maxLoopIterations,omitempty"`
	// GuestLog lets every plugin log into the host's log (off by default);
	// a projection's own guestLog overrides it field by field.
	GuestLog *GuestLogConfig `json:"guestLog,omitempty"`
}

// GuestLogConfig is guest logging (ABI.md §7, plugin.GuestLog): a plugin's
// messages go to the host's log, rate-limited per plugin. Absent fields take
// the value of the plugins defaults, else the documented defaults (off,
// DefaultGuestLogRate messages per second, bursts of DefaultGuestLogBurst).
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
// defaults, its guest logging, and the cache directory relative to the
// configuration file. The pool does not grow with the projection's row
// concurrency: a row holds an instance only while its events fold, not
// while it waits on DynamoDB.
func (c *Config) pluginConfig(projection string, log *slog.Logger) plugin.Config {
	pd := c.Plugins
	return plugin.Config{
		PoolSize: pd.PoolSize, MemoryLimitPages: pd.MemoryLimitPages,
		CallTimeout: time.Duration(pd.CallTimeout), MaxLoopIterations: pd.MaxLoopIterations,
		CacheDir: c.rel(pd.CacheDir), CacheReadOnly: pd.CacheReadOnly, CacheKeyFile: c.rel(pd.CacheKeyFile),
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

// ProjectionConfig binds one plugin to one read model.
type ProjectionConfig struct {
	// Name names the projection in outcomes, logs and commands; unique
	// (required).
	Name string `json:"name"`
	// Plugin is the path of the .wasm module (relative to the config file),
	// or "native:<name>" for logic registered with WithNative (required).
	Plugin string `json:"plugin"`
	// Table is the read-model table (required).
	Table string `json:"table"`
	// Key lists the read-model table's key attributes, hash then range: one
	// or two names (default DefaultKey).
	Key []string `json:"key,omitempty"`
	// Checkpoint is the numeric field holding the last applied version;
	// required unless Revision is set.
	Checkpoint CheckpointConfig `json:"checkpoint"`
	// Revision, when set, guards every write of the row with a counter.
	Revision *RevisionConfig `json:"revision,omitempty"`
	// CreatedAt names the attribute keeping the row's creation time
	// (default DefaultCreatedAt; "-" disables it).
	CreatedAt string `json:"createdAt,omitempty"`
	// WrittenBy names the attribute recording the plugin name and version
	// that wrote the row (empty disables it).
	WrittenBy string `json:"writtenBy,omitempty"`
	// Concurrency is the number of rows processed at once (default
	// DefaultConcurrency).
	Concurrency int `json:"concurrency,omitempty"`
	// ReadNewRows reads every row before writing it. By default a row whose
	// events in the batch begin each of its streams (version 1) is folded
	// from initial and written on condition that it does not exist, with no
	// read first; it is read only when it exists after all (a redelivery,
	// or a row that other streams feed). Set it for read models where new
	// streams mostly meet existing rows; the host also reads such rows
	// first on its own while they mostly turn out to exist.
	ReadNewRows bool `json:"readNewRows,omitempty"`
	// Retry is the policy for a write that lost a race with another writer.
	Retry RetryConfig `json:"retry,omitempty"`
	// ReadModel describes the read model's entity: its type, and entity
	// features, which projections refuse when they cannot work.
	ReadModel ReadModelConfig `json:"readModel,omitempty"`
	// Removal, when set (even empty: {}), lets the plugin's evolve remove
	// rows (removeRow): a removed row becomes a tombstone, the key, the
	// marker __edd_e__ = "<readModel.entityType>#tombstone", the checkpoints
	// and the revision, nothing else. Every read by key reports it as
	// absent; a later event starts the row again from initial, from the
	// tombstone's checkpoints, so a redelivery cannot recreate it. Without
	// it, a removeRow fails the row.
	Removal *RemovalConfig `json:"removal,omitempty"`
	// Outbox, when set, commits the side effects the plugin returns for
	// applied events with the row, to be delivered in order, at least once
	// (see OutboxConfig); it needs revision.
	Outbox *OutboxConfig `json:"outbox,omitempty"`
	// HotSwap, when set, serves the plugin through the hot-swap pipeline: where new versions come from (a watched file or a
	// versioned S3 object), sha256 pins, the smoke-test fixture, the archive
	// for rollback. Host.Watch follows the sources; cmd/lambda checks them
	// between invocations (Host.CheckSwaps).
	HotSwap *HotSwapConfig `json:"hotSwap,omitempty"`
	// Shadow, when set, runs a candidate plugin beside this one on the same
	// batches, writing nothing and counting the rows where it differs.
	Shadow *ShadowConfig `json:"shadow,omitempty"`
	// GuestLog overrides plugins.guestLog for this projection's plugin.
	GuestLog *GuestLogConfig `json:"guestLog,omitempty"`
	// Freshness declares the projection's freshness objectives: by
	// percentile ("p95", "p99", "p99.9"), the longest time from a change's
	// creation to the commit of the row write that applied it (see
	// FreshnessConfig).
	Freshness FreshnessConfig `json:"freshness,omitempty"`
	// RateLimit, when set, bounds the events and row writes the projection
	// applies per second, per worker (see RateLimitConfig).
	RateLimit *RateLimitConfig `json:"rateLimit,omitempty"`
}

// CheckpointConfig maps the checkpoint onto a field: stored = version + offset.
type CheckpointConfig struct {
	// Field is the numeric attribute holding the checkpoint; it cannot be a
	// key attribute.
	Field string `json:"field"`
	// Offset is added to the stream version before it is stored, between
	// -MaxCheckpointOffset and MaxCheckpointOffset.
	Offset int64 `json:"offset,omitempty"`
	// InstanceField names a string attribute recording the stream id of
	// the instance whose checkpoint Field holds; an empty one is adopted
	// by the first instance that writes the row.
	InstanceField string `json:"instanceField,omitempty"`
	// Map names a map attribute holding a checkpoint per source instance
	// ("<source>#<streamId>" → version): every instance that Field does
	// not follow. Required by multi-source projections unless every
	// source has a field of its own (Sources).
	Map string `json:"map,omitempty"`
	// Sources gives sources their own numeric checkpoint field, by the
	// source names the plugin declares: each with its own offset and
	// instance field, for rows that already keep one version field per
	// source. An instance of the source that does not own the field goes
	// to Map, or fails with ProjectionSourceConflict without one. Requires
	// Revision.
	Sources map[string]SourceCheckpointConfig `json:"sources,omitempty"`
}

// SourceCheckpointConfig maps the checkpoint of one instance of a source
// onto a numeric field of the row: stored = version + offset.
type SourceCheckpointConfig struct {
	// Field is the numeric attribute holding the checkpoint (required).
	Field string `json:"field"`
	// Offset is added to the stream version before it is stored.
	Offset int64 `json:"offset,omitempty"`
	// InstanceField names a string attribute recording the stream id of
	// the instance whose checkpoint Field holds; an empty one is adopted by
	// the first instance of the source that writes the row. Required with
	// Map.
	InstanceField string `json:"instanceField,omitempty"`
}

// RevisionConfig is the row's write counter and guard.
type RevisionConfig struct {
	// Field is the numeric attribute counting the row's writes (required).
	Field string `json:"field"`
	// Initial is the value of a row's first write (absent:
	// DefaultRevisionInitial); 0 is allowed.
	Initial *int64 `json:"initial,omitempty"`
}

// RemovalConfig lets evolve remove rows; a removed row becomes a tombstone.
type RemovalConfig struct {
	// TTL, when set, lets DynamoDB expire tombstones: TTLAttribute is set
	// on each, in epoch seconds, to the time of the removal plus TTL. It
	// must be more than MinRemovalTTL (the change feed's 24 hours) plus any
	// redelivery or replay window: once a tombstone expires, a very late
	// event recreates the row. Absent: tombstones are kept.
	TTL Duration `json:"ttl,omitempty"`
	// TTLAttribute is the table's TTL attribute (default
	// DefaultTTLAttribute); only with TTL. Enable TTL on the table with
	// this attribute.
	TTLAttribute string `json:"ttlAttribute,omitempty"`
}

// RetryConfig is the lost-race retry policy: Attempts tries in all. The
// first retry goes at once (its re-read sees the winner's write); the n-th
// waits a jittered Base × 2^(n-1), at most Max.
type RetryConfig struct {
	// Attempts is the number of tries in all (default DefaultRetryAttempts).
	Attempts int `json:"attempts,omitempty"`
	// Base is the unit of the delay (default DefaultRetryBase); at most Max.
	Base Duration `json:"base,omitempty"`
	// Max is the longest delay (default DefaultRetryMax).
	Max Duration `json:"max,omitempty"`
}

// ReadModelConfig describes the read model's entity: its EntityType, and
// entity features it may declare, each of which, set, makes the projection
// refuse to start with [EDD-9081].
type ReadModelConfig struct {
	// EntityType is the entity type of the read model's rows, as the
	// entity's own library names it ("OrderSummary"); a tombstone's marker
	// is "<entityType>#tombstone" (default: the projection's name).
	EntityType string `json:"entityType,omitempty"`
	// Versioned: the entity keeps its own version counter.
	Versioned bool `json:"versioned,omitempty"`
	// SoftDelete: the entity is deleted by marking it.
	SoftDelete bool `json:"softDelete,omitempty"`
	// TimeSeries: the entity appends one item per point in time.
	TimeSeries bool `json:"timeSeries,omitempty"`
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("5s", "200ms"); a negative one is refused where a field needs it
// positive.
type Duration time.Duration

// UnmarshalJSON reads a Go duration string, naming what is allowed when it
// is not one.
func (d *Duration) UnmarshalJSON(b []byte) error { return (*jsonconf.Duration)(d).UnmarshalJSON(b) }

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return jsonconf.Duration(d).MarshalJSON() }

// String returns the duration as Go writes it.
func (d Duration) String() string { return time.Duration(d).String() }

// LoadConfig reads a configuration file and validates it (see ParseConfig).
// Relative paths in it (plugins, cache, fixtures, archive, the sidecar's
// state and on-failure files) start at the file's directory.
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
	cfg.resolveSidecarFiles()
	return cfg, nil
}

// resolveSidecarFiles makes the sidecar's relative file paths (the state
// file, on-failure files) start at the configuration file's directory, as
// the plugin and cache paths do, so `host run` and `host quarantine` find
// the same files from any working directory.
func (c *Config) resolveSidecarFiles() {
	sc := c.Sidecar
	if sc == nil {
		return
	}
	sc.StateFile = c.rel(sc.StateFile)
	if of := sc.Failure.OnFailure; of != nil {
		of.File = c.rel(of.File)
	}
	for name, pol := range sc.Projections {
		if pol.OnFailure != nil {
			of := *pol.OnFailure
			of.File = c.rel(of.File)
			pol.OnFailure = &of
			sc.Projections[name] = pol
		}
	}
}

// ParseConfig reads a configuration from JSON and validates it. It refuses
// a key that is not exactly the name of a field (the JSON names are
// case-sensitive; the error suggests the field meant), a key given twice in
// one object, anything after the configuration object, a value of the wrong
// type or out of range, every mistake Validate finds and a configuration
// without projections (RequireProjections). All of them are reported at
// once, one per line, each naming the path of the value at fault as
// Validate does (a projection by its name); only JSON that does not parse
// stops the reading at its first error.
func ParseConfig(b []byte) (*Config, error) {
	var cfg Config
	err := jsonconf.Decode(b, &cfg)
	var read jsonconf.Errors
	if err != nil && !errors.As(err, &read) {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	var all problems
	var refused []string
	for _, e := range read {
		e.Path = cfg.userPath(e.Path)
		all = append(all, &problem{path: "", text: e.Error()})
		switch {
		case !e.Key:
			refused = append(refused, e.Path)
		case e.Meant != "": // a misspelt key: what it meant is absent, not missing
			refused = append(refused, cfg.userPath(e.Meant))
		}
	}
	for _, p := range cfg.validateAll() {
		if !under(p.path, refused) {
			all = append(all, p)
		}
	}
	if err := cfg.RequireProjections(); err != nil && !under("projections", refused) {
		all = append(all, &problem{text: strings.TrimPrefix(err.Error(), "configuration: ")})
	}
	if err := all.err(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// under reports whether path is one of paths or inside one: a value the
// JSON reader refused is absent to Validate, which must not report it
// missing as well.
func under(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

// native reports whether plugin names logic registered with WithNative.
func native(plugin string) (string, bool) { return strings.CutPrefix(plugin, "native:") }
