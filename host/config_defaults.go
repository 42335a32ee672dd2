package host

import (
	"github.com/dynafold/dynafold/host/internal/apply"
	"slices"
	"time"
)

// The defaults of the configuration: the value an absent (or zero) field
// takes. They are kept here, and only here: Effective fills them in, and the
// README's configuration table lists them.
//
//	field                              default
//	region                             DefaultRegion ("us-east-1")
//	source                             DefaultSource ("lambda")
//	onDecodeFailure                    DefaultOnDecodeFailure ("report")
//	eventStore.schemaVersion           DefaultSchemaVersion (1)
//	plugins.poolSize                   DefaultPoolSize (10)
//	plugins.memoryLimitPages           DefaultMemoryLimitPages (512 pages: 32 MiB)
//	plugins.callTimeout                DefaultCallTimeout ("5s")
//	plugins.maxLoopIterations          0: no budget
//	plugins.guestLog                   off, DefaultGuestLogRate (10/s), DefaultGuestLogBurst (100)
//	projections[].key                  DefaultKey (["pk", "sk"])
//	projections[].createdAt            DefaultCreatedAt ("createdAt"; "-": none)
//	projections[].writtenBy            "": none
//	projections[].concurrency          DefaultConcurrency (100)
//	projections[].readNewRows          false: new rows are written without a read
//	projections[].retry.attempts       DefaultRetryAttempts (12)
//	projections[].retry.base           DefaultRetryBase ("5ms")
//	projections[].retry.max            DefaultRetryMax ("200ms")
//	projections[].revision.initial     DefaultRevisionInitial (1); 0 is a value
//	projections[].readModel.entityType the projection's name
//	projections[].removal.ttl          0: tombstones are kept
//	projections[].removal.ttlAttribute DefaultTTLAttribute ("ttl"), with removal.ttl
//	projections[].hotSwap.settle       DefaultSettle ("100ms")
//	projections[].hotSwap.s3.interval  DefaultS3Interval ("30s")
//	projections[].hotSwap.s3.region    DefaultRegion ("us-east-1")
//	projections[].hotSwap.maxModuleBytes DefaultMaxModuleBytes (64 MiB), with watch or s3
const (
	// DefaultRegion is the AWS region of DynamoDB and of S3 sources.
	DefaultRegion = "us-east-1"
	// DefaultSource is the source of the records: a Lambda event source
	// mapping.
	DefaultSource = SourceLambda
	// DefaultOnDecodeFailure reports a record that cannot be decoded as
	// failed.
	DefaultOnDecodeFailure = DecodeFailureReport
	// DefaultSchemaVersion is the event store's schema version.
	DefaultSchemaVersion = 1
	// DefaultPoolSize is the maximum number of instances of a plugin: of
	// calls into it at once. A row holds an instance only while its events
	// fold, so rows waiting on DynamoDB hold none.
	DefaultPoolSize = 10
	// DefaultMemoryLimitPages is 512 pages of 64 KiB: 32 MiB per instance.
	DefaultMemoryLimitPages = 512
	// DefaultCallTimeout bounds one call into a plugin.
	DefaultCallTimeout = 5 * time.Second
	// DefaultGuestLogRate is the average number of guest log messages per
	// second a plugin may log when guest logging is enabled.
	DefaultGuestLogRate = 10
	// DefaultGuestLogBurst is the number of guest log messages a plugin may
	// log at once, above the rate.
	DefaultGuestLogBurst = 100
	// DefaultCreatedAt is the attribute keeping a row's creation time.
	DefaultCreatedAt = "createdAt"
	// DefaultConcurrency is the number of rows a projection processes at
	// once: every row of a batch of up to 100 records (Lambda's default
	// BatchSize for a DynamoDB stream), so such a batch costs its rows'
	// round trips once, not once per wave of rows.
	DefaultConcurrency = 100
	// DefaultRetryAttempts is the number of tries of a write that lost a
	// race, in all.
	DefaultRetryAttempts = 12
	// DefaultRetryBase is the unit of the delay before a lost race is
	// retried: the first retry goes at once, the n-th waits about
	// DefaultRetryBase × 2^(n-1), at most DefaultRetryMax.
	DefaultRetryBase = 5 * time.Millisecond
	// DefaultRetryMax is the longest delay between two tries.
	DefaultRetryMax = 200 * time.Millisecond
	// DefaultRevisionInitial is the revision of a row's first write.
	DefaultRevisionInitial = 1
	// DefaultTTLAttribute is the attribute on which removal.ttl sets a
	// tombstone's expiry time.
	DefaultTTLAttribute = "ttl"
	// MinRemovalTTL is the change feed's retention: removal.ttl must be
	// longer, so no event the feed still holds can recreate a removed row.
	MinRemovalTTL = 24 * time.Hour
	// DefaultSettle is how long a watched plugin file must have stopped
	// changing before it is read.
	DefaultSettle = 100 * time.Millisecond
	// DefaultS3Interval is how often an S3 plugin source is polled.
	DefaultS3Interval = 30 * time.Second
	// DefaultMaxModuleBytes is the largest module a hot-swap source reads
	// (64 MiB).
	DefaultMaxModuleBytes = 64 << 20
)

// DefaultKey is the read-model table's key attributes (hash, range) when a
// projection names none. Do not modify it.
var DefaultKey = []string{"pk", "sk"}

// Effective returns a copy of the configuration with every default filled
// in (see the Default constants): what the host runs. A projection's
// guestLog comes back whole, its own fields over those of plugins.guestLog;
// createdAt "-" (none) stays "-". c is not modified; call it on a valid
// configuration.
func (c *Config) Effective() *Config {
	e := *c
	if e.Region == "" {
		e.Region = DefaultRegion
	}
	if e.Source == "" {
		e.Source = DefaultSource
	}
	if e.OnDecodeFailure == "" {
		e.OnDecodeFailure = DefaultOnDecodeFailure
	}
	if e.EventStore.SchemaVersion == 0 {
		e.EventStore.SchemaVersion = DefaultSchemaVersion
	}
	e.EventStore.Streams = slices.Clone(c.EventStore.Streams)
	e.SideEffectStreams = slices.Clone(c.SideEffectStreams)
	pd := &e.Plugins
	if pd.PoolSize == 0 {
		pd.PoolSize = DefaultPoolSize
	}
	if pd.MemoryLimitPages == 0 {
		pd.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if pd.CallTimeout == 0 {
		pd.CallTimeout = Duration(DefaultCallTimeout)
	}
	pd.GuestLog = mergeGuestLog(&GuestLogConfig{Enabled: new(false), Rate: DefaultGuestLogRate, Burst: DefaultGuestLogBurst}, c.Plugins.GuestLog)
	e.Projections = make([]ProjectionConfig, len(c.Projections))
	for i, p := range c.Projections {
		if len(p.Key) == 0 {
			p.Key = slices.Clone(DefaultKey)
		} else {
			p.Key = slices.Clone(p.Key)
		}
		if p.CreatedAt == "" {
			p.CreatedAt = DefaultCreatedAt
		}
		if p.Concurrency == 0 {
			p.Concurrency = DefaultConcurrency
		}
		if p.Retry.Attempts == 0 {
			p.Retry.Attempts = DefaultRetryAttempts
		}
		base, mx := p.Retry.effective()
		p.Retry.Base, p.Retry.Max = Duration(base), Duration(mx)
		if p.Revision != nil {
			r := *p.Revision
			if r.Initial == nil {
				r.Initial = new(int64(DefaultRevisionInitial))
			}
			p.Revision = &r
		}
		if p.ReadModel.EntityType == "" {
			p.ReadModel.EntityType = p.Name
		}
		if p.Removal != nil {
			r := *p.Removal
			if r.TTL != 0 && r.TTLAttribute == "" {
				r.TTLAttribute = DefaultTTLAttribute
			}
			p.Removal = &r
		}
		p.GuestLog = mergeGuestLog(pd.GuestLog, p.GuestLog)
		p.HotSwap = p.HotSwap.effective()
		e.Projections[i] = p
	}
	return &e
}

// CreatedAtAttribute returns the attribute keeping the row's creation time:
// createdAt, DefaultCreatedAt when absent, "" when it is "-" (none).
func (p *ProjectionConfig) CreatedAtAttribute() string {
	switch p.CreatedAt {
	case "":
		return DefaultCreatedAt
	case "-":
		return ""
	}
	return p.CreatedAt
}

// provenanceAttrs are the attributes every write sets about its own
// making rather than the row's state: createdAt, writtenBy and the
// versions before the writer (comparisons of two folds leave them out).
func (p *ProjectionConfig) provenanceAttrs() []string {
	var out []string
	if a := p.CreatedAtAttribute(); a != "" {
		out = append(out, a)
	}
	if p.WrittenBy != "" {
		out = append(out, p.WrittenBy, apply.WrittenByBefore(p.WrittenBy))
	}
	return out
}

// mergeGuestLog returns a new GuestLogConfig: over's set fields over base's.
func mergeGuestLog(base, over *GuestLogConfig) *GuestLogConfig {
	var out GuestLogConfig
	for _, g := range []*GuestLogConfig{base, over} {
		if g == nil {
			continue
		}
		if g.Enabled != nil {
			out.Enabled = new(*g.Enabled)
		}
		if g.Rate != 0 {
			out.Rate = g.Rate
		}
		if g.Burst != 0 {
			out.Burst = g.Burst
		}
	}
	return &out
}

// idleConns is the number of idle connections the host's DynamoDB client
// keeps open: two per row the projections process at once (a row's write
// and the outbox read beside it), so a batch finds the connections the
// previous one opened.
func (c *Config) idleConns() int {
	n := 0
	for _, p := range c.Projections {
		n += 2 * p.Concurrency
	}
	return n
}
