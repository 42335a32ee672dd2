package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host/internal/apply"
)

// MaxMemoryLimitPages is the largest plugins.memoryLimitPages: 65536 pages
// of 64 KiB, the 4 GiB a 32-bit WebAssembly memory can address.
const MaxMemoryLimitPages = 65536

// MaxCheckpointOffset bounds checkpoint.offset either way (2^53), so that
// version + offset is exact in every number type that reads the row.
const MaxCheckpointOffset = 1 << 53

// problems collects what Validate finds, each naming the path at fault.
type problems []*problem

// problem is one mistake of a configuration: the path of the value at
// fault, as users read it (a projection by its name, see projectionPath),
// and what is wrong.
type problem struct {
	path, text string
}

// Error implements error: "configuration: <path> <text>".
func (p *problem) Error() string {
	if p.path == "" {
		return "configuration: " + p.text
	}
	sep := ": "
	for _, verb := range []string{"is ", "lists ", "sets "} {
		if strings.HasPrefix(p.text, verb) {
			sep = " " // "eventStore.table is required"
		}
	}
	return "configuration: " + p.path + sep + p.text
}

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, &problem{path: path, text: fmt.Sprintf(format, args...)})
}

// err joins the problems, one per line; nil when there is none.
func (ps problems) err() error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// projectionPath is how messages name projections[i]: by its name,
// `projection "summaries"`, when it has one that no earlier projection
// has; else by its place in the list, projections[3].
func (c *Config) projectionPath(i int) string {
	name := c.Projections[i].Name
	if name == "" {
		return fmt.Sprintf("projections[%d]", i)
	}
	for j := range i {
		if c.Projections[j].Name == name {
			return fmt.Sprintf("projections[%d]", i)
		}
	}
	return fmt.Sprintf("projection %q", name)
}

// userPath rewrites a JSON path (projections[0].retry.base) as messages
// name it (projection "summaries".retry.base): one spelling in every
// message, whether the JSON reader or Validate found the mistake.
func (c *Config) userPath(path string) string {
	rest, ok := strings.CutPrefix(path, "projections[")
	if !ok {
		return path
	}
	n, tail, ok := strings.Cut(rest, "]")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 0 || i >= len(c.Projections) {
		return path
	}
	return c.projectionPath(i) + tail
}

// Validate reports everything that cannot work in the configuration and can
// be known without reading a file or calling a service: unknown values of
// the enumerations, numbers out of range, missing or empty names, duplicate
// streams and projections, references to streams that are not defined, and
// read models and hot-swap settings that cannot work. Each problem names the
// JSON path at fault (a projection by its name: projection "summaries".retry.attempts)
// and what is allowed; all problems are reported together, one per line.
//
// New calls Validate before anything else; so do LoadConfig and ParseConfig.
// Validate accepts a configuration without projections, for a Host that
// serves only its event store (`host append` builds one); a configuration
// file must list at least one (see RequireProjections).
func (c *Config) Validate() error {
	return c.validateAll().err()
}

// RequireProjections reports a configuration that lists no projection: a
// host processing batches with it would acknowledge every record and
// project nothing. ParseConfig and LoadConfig refuse such a file.
func (c *Config) RequireProjections() error {
	if len(c.Projections) == 0 {
		return errors.New(`configuration: no projections: "projections" lists none, so every record would be acknowledged and nothing projected; add at least one projection`)
	}
	return nil
}

// validateAll is Validate's body: every problem found.
func (c *Config) validateAll() problems {
	var ps problems
	if err := c.Source.Check(); err != nil {
		ps.add("source", "%v", err)
	}
	if err := c.OnDecodeFailure.Check(); err != nil {
		ps.add("onDecodeFailure", "%v", err)
	}
	checkEndpoint(&ps, "endpoint", c.Endpoint)
	streams := c.EventStore.validate(&ps)
	seen := map[string]bool{}
	for i, s := range c.SideEffectStreams {
		path := fmt.Sprintf("sideEffectStreams[%d]", i)
		switch {
		case s == "":
			ps.add(path, "is empty: name a stream of eventStore.streams")
		case !streams[s]:
			ps.add(path, "%q is not a stream of eventStore.streams (%s)", s, listOf(c.EventStore.Streams))
		case seen[s]:
			ps.add(path, "%q is listed twice", s)
		}
		seen[s] = true
	}
	c.Plugins.validate(&ps)
	names := map[string]int{}
	for i := range c.Projections {
		p := &c.Projections[i]
		where := c.projectionPath(i)
		j, dup := names[p.Name]
		switch {
		case p.Name == "":
			ps.add(where+".name", "is required: name the projection (it names it in outcomes, logs and commands)")
		case dup:
			ps.add(fmt.Sprintf("projections[%d].name", i), "%q is also the name of projections[%d]; projection names must be unique", p.Name, j)
		default:
			names[p.Name] = i
		}
		p.validate(&ps, where)
		p.Shadow.validate(&ps, where, p)
	}
	c.validateQuarantine(&ps)
	c.validateAdmin(&ps)
	c.validateSidecar(&ps)
	return ps
}

func listOf(streams []StreamConfig) string {
	var names []string
	for _, s := range streams {
		names = append(names, fmt.Sprintf("%q", s.Name))
	}
	if len(names) == 0 {
		return "none is defined"
	}
	return "defined: " + strings.Join(names, ", ")
}

func checkEndpoint(ps *problems, path, e string) {
	if e == "" {
		return
	}
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		ps.add(path, "%q is not an http:// or https:// URL; leave it out for the AWS default", e)
	}
}

// checkNames reports empty and repeated names in a list of attribute or
// field names.
func checkNames(ps *problems, path string, names []string) {
	seen := map[string]bool{}
	for i, n := range names {
		switch {
		case strings.TrimSpace(n) == "":
			ps.add(fmt.Sprintf("%s[%d]", path, i), "is empty: a name is required")
		case seen[n]:
			ps.add(fmt.Sprintf("%s[%d]", path, i), "%q is listed twice", n)
		}
		seen[n] = true
	}
}

// validate checks the event store and returns the streams' names.
func (es *EventStoreConfig) validate(ps *problems) map[string]bool {
	if es.Table == "" {
		ps.add("eventStore.table", "is required: name the event table")
	}
	if es.Schema == "" {
		ps.add("eventStore.schema", "is required: the effect-dynamodb schema name, e.g. \"shop\"")
	}
	if es.SchemaVersion < 0 {
		ps.add("eventStore.schemaVersion", "%d is not a schema version: use 1 or more (absent or 0: %d)", es.SchemaVersion, DefaultSchemaVersion)
	}
	if len(es.Streams) == 0 {
		ps.add("eventStore.streams", "lists no stream: define at least one, e.g. {\"name\": \"Order\", \"composite\": [\"orderId\"]}")
	}
	names := map[string]bool{}
	for i, s := range es.Streams {
		path := fmt.Sprintf("eventStore.streams[%d]", i)
		switch {
		case s.Name == "":
			ps.add(path+".name", "is required: name the stream")
		case names[s.Name]:
			ps.add(path+".name", "%q is defined twice; stream names must be unique", s.Name)
		}
		names[s.Name] = true
		if len(s.Composite) == 0 {
			ps.add(path+".composite", "lists no field: name at least one field whose value identifies a stream instance, e.g. [\"orderId\"]")
		}
		checkNames(ps, path+".composite", s.Composite)
		checkNames(ps, path+".eventTypes", s.EventTypes)
	}
	es.Compression.validate(ps)
	return names
}

func (pd *PluginDefaults) validate(ps *problems) {
	if pd.PoolSize < 0 {
		ps.add("plugins.poolSize", "%d is negative: use 1 or more instances (absent or 0: %d)", pd.PoolSize, DefaultPoolSize)
	}
	if pd.MemoryLimitPages > MaxMemoryLimitPages {
		ps.add("plugins.memoryLimitPages", "%d is more than %d (4 GiB): use 1 to %d pages of 64 KiB (absent or 0: %d)", pd.MemoryLimitPages, MaxMemoryLimitPages, MaxMemoryLimitPages, DefaultMemoryLimitPages)
	}
	if pd.CallTimeout < 0 {
		ps.add("plugins.callTimeout", "%s is negative: use a positive duration such as \"5s\" (absent: %s)", pd.CallTimeout, DefaultCallTimeout)
	}
	if pd.MaxLoopIterations < 0 {
		ps.add("plugins.maxLoopIterations", "%d is negative: use a positive budget, or 0 (or absent) for none", pd.MaxLoopIterations)
	}
	if pd.CacheReadOnly && pd.CacheDir == "" {
		ps.add("plugins.cacheReadOnly", "is true but plugins.cacheDir names no cache directory")
	}
	if pd.CacheKeyFile != "" && pd.CacheDir == "" {
		ps.add("plugins.cacheKeyFile", "is set but plugins.cacheDir names no cache directory")
	}
	pd.GuestLog.validate(ps, "plugins")
}

// validate reports a guest log setting that cannot work; where names it.
func (g *GuestLogConfig) validate(ps *problems, where string) {
	if g == nil {
		return
	}
	if g.Rate < 0 || math.IsNaN(g.Rate) || math.IsInf(g.Rate, 0) {
		ps.add(where+".guestLog.rate", "%v is negative; it is messages per second: use a positive number (absent or 0: %d)", g.Rate, DefaultGuestLogRate)
	}
	if g.Burst < 0 {
		ps.add(where+".guestLog.burst", "%d is negative; it is a number of messages: use 1 or more (absent or 0: %d)", g.Burst, DefaultGuestLogBurst)
	}
}

func (p *ProjectionConfig) validate(ps *problems, where string) {
	at := func(field string) string { return where + "." + field }
	name, isNative := native(p.Plugin)
	switch {
	case p.Plugin == "":
		ps.add(at("plugin"), "is required: the path of the plugin's .wasm file, or \"native:<name>\"")
	case isNative && name == "":
		ps.add(at("plugin"), "\"native:\" names no logic: write \"native:<name>\" with the name given to host.WithNative")
	}
	if p.Table == "" {
		ps.add(at("table"), "is required: name the read-model table")
	}
	if len(p.Key) > 2 {
		ps.add(at("key"), "lists %d attributes: a table's key is 1 or 2 attribute names, hash then range (absent: %q)", len(p.Key), DefaultKey)
	}
	checkNames(ps, at("key"), p.Key)
	key := p.Key
	if len(key) == 0 {
		key = DefaultKey
	}
	// The attributes the host writes must be distinct, and none a key.
	attrs := map[string]string{}
	for _, k := range key {
		attrs[k] = "a key attribute"
	}
	claim := func(field, attr string) {
		if attr == "" {
			return
		}
		if other, ok := attrs[attr]; ok {
			if other == "a key attribute" {
				ps.add(at(field), "%q is also %s: the host rewrites it with every write, and a row's key cannot change; name another attribute", attr, other)
				return
			}
			ps.add(at(field), "%q is also %s: each attribute the host writes holds one thing; name another attribute for one of them", attr, other)
			return
		}
		attrs[attr] = "the " + field + " attribute"
	}
	if p.Removal != nil {
		if what, ok := attrs[apply.MarkerAttr]; ok {
			ps.add(at("removal"), "%q is %s, but it holds a tombstone's marker: rename the key attribute, or remove removal", apply.MarkerAttr, what)
		}
		attrs[apply.MarkerAttr] = "the tombstone marker attribute (removal)"
	}
	cp := p.Checkpoint
	switch {
	case cp.Field == "" && p.Revision == nil && len(cp.Sources) > 0:
		ps.add(at("checkpoint.sources"), "needs revision: the revision guards the write of a row that several stream instances feed; set revision, e.g. {\"field\": \"revision\"}")
	case cp.Field == "" && p.Revision == nil:
		ps.add(at("checkpoint.field"), "is required: name the numeric attribute that holds the last applied version (or set revision and checkpoint.map)")
	case cp.Field == "" && cp.Map == "" && len(cp.Sources) == 0:
		ps.add(at("checkpoint"), "names neither a field nor a map: with only a revision no checkpoint is kept, so every redelivery would fold its events again; set checkpoint.map (a map attribute with one checkpoint per stream instance) or checkpoint.field")
	case slices.Contains(key, cp.Field):
		ps.add(at("checkpoint.field"), "[EDD-9081] %q is a key attribute: a row's key cannot change with every write", cp.Field)
	default:
		claim("checkpoint.field", cp.Field)
	}
	if o := cp.Offset; o > MaxCheckpointOffset || o < -MaxCheckpointOffset {
		ps.add(at("checkpoint.offset"), "%d is out of range: use -%d to %d", o, int64(MaxCheckpointOffset), int64(MaxCheckpointOffset))
	}
	switch {
	case cp.Map != "" && p.Revision == nil:
		ps.add(at("checkpoint.map"), "needs revision: the revision guards the write of a row that several stream instances feed; set revision, e.g. {\"field\": \"revision\"}")
	case cp.InstanceField != "" && cp.Field == "":
		ps.add(at("checkpoint.instanceField"), "is set but checkpoint.field is not: it records which stream instance the checkpoint field follows; name checkpoint.field or remove it")
	case cp.Field != "" && cp.Map != "" && cp.InstanceField == "":
		ps.add(at("checkpoint.instanceField"), "is required with both checkpoint.field and checkpoint.map: it records which stream instance the field follows (the others go to the map); name a string attribute, e.g. \"checkpointOwner\"")
	}
	claim("checkpoint.instanceField", cp.InstanceField)
	claim("checkpoint.map", cp.Map)
	validateSourceCheckpoints(ps, at, cp, key, claim)
	if r := p.Revision; r != nil {
		switch {
		case r.Field == "":
			ps.add(at("revision.field"), "is required: name the numeric attribute that counts the row's writes")
		case r.Field == cp.Field:
			ps.add(at("revision.field"), "[EDD-9081] %q is also the checkpoint field: the checkpoint is a stream version, the revision counts writes", r.Field)
		default:
			claim("revision.field", r.Field)
		}
	}
	createdAt := p.CreatedAt
	if createdAt == "" {
		createdAt = DefaultCreatedAt
	}
	if createdAt != "-" {
		claim("createdAt", createdAt)
	}
	claim("writtenBy", p.WrittenBy)
	if p.WrittenBy != "" {
		claim("writtenBy (the versions before the writer)", apply.WrittenByBefore(p.WrittenBy))
	}
	if r := p.Removal; r != nil {
		switch {
		case r.TTL < 0:
			ps.add(at("removal.ttl"), "%s is negative: use a duration longer than the change feed's %s plus any redelivery or replay window, such as \"720h\" (absent: tombstones are kept)", r.TTL, MinRemovalTTL)
		case r.TTL > 0 && time.Duration(r.TTL) <= MinRemovalTTL:
			ps.add(at("removal.ttl"), "%s is too short: a tombstone that expires while the change feed (%s) can still redeliver an older event lets that event recreate the removed row; use more than %s plus any redelivery or replay window, such as \"720h\"", r.TTL, MinRemovalTTL, MinRemovalTTL)
		}
		switch {
		case r.TTLAttribute != "" && r.TTL == 0:
			ps.add(at("removal.ttlAttribute"), "is set but removal.ttl is not: set removal.ttl (e.g. \"720h\") or remove removal.ttlAttribute")
		case r.TTL != 0:
			ttlAttr := r.TTLAttribute
			if ttlAttr == "" {
				ttlAttr = DefaultTTLAttribute
			}
			claim("removal.ttlAttribute", ttlAttr)
		}
	}
	if p.Outbox != nil {
		p.Outbox.validate(ps, at("outbox"), p, key)
	}
	if p.Concurrency < 0 {
		ps.add(at("concurrency"), "%d is negative: use 1 or more rows at once (absent or 0: %d)", p.Concurrency, DefaultConcurrency)
	}
	p.Retry.validate(ps, at("retry"))
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
			ps.add(at("readModel."+refused.what), "[EDD-9081] a %s read model cannot be a projection's target: %s; remove it or set it to false", refused.what, refused.reason)
		}
	}
	p.GuestLog.validate(ps, where)
	p.validateOps(ps, at)
	if p.HotSwap != nil && isNative {
		ps.add(at("hotSwap"), "native logic (%q) cannot be hot-swapped: hotSwap serves a .wasm plugin", p.Plugin)
	}
	if p.HotSwap != nil {
		p.HotSwap.validate(ps, at("hotSwap"))
	}
}

func (r RetryConfig) validate(ps *problems, path string) {
	if r.Attempts < 0 {
		ps.add(path+".attempts", "%d is negative: use 1 or more tries in all (absent or 0: %d)", r.Attempts, DefaultRetryAttempts)
	}
	if r.Base < 0 {
		ps.add(path+".base", "%s is negative: use a positive duration such as \"5ms\" (absent: %s)", r.Base, DefaultRetryBase)
	}
	if r.Max < 0 {
		ps.add(path+".max", "%s is negative: use a positive duration such as \"200ms\" (absent: %s)", r.Max, DefaultRetryMax)
	}
	base, mx := r.effective()
	if r.Base >= 0 && r.Max >= 0 && base > mx {
		ps.add(path+".base", "%s is longer than retry.max %s: the first delay must be at most the longest (defaults: base %s, max %s)", base, mx, DefaultRetryBase, DefaultRetryMax)
	}
}

// effective returns the retry delays with their defaults.
func (r RetryConfig) effective() (base, mx time.Duration) {
	base, mx = time.Duration(r.Base), time.Duration(r.Max)
	if base == 0 {
		base = DefaultRetryBase
	}
	if mx == 0 {
		mx = DefaultRetryMax
	}
	return base, mx
}

// validate checks a hot-swap configuration at path and reports whether it
// is valid.
func (h *HotSwapConfig) validate(ps *problems, path string) bool {
	n := len(*ps)
	if h.Watch && h.S3 != nil {
		ps.add(path, "sets both watch and s3: a plugin comes from one source, a watched file (watch: true) or an S3 object (s3)")
	}
	if h.Settle < 0 {
		ps.add(path+".settle", "%s is negative: use a positive duration such as \"100ms\" (absent: %s)", h.Settle, DefaultSettle)
	}
	if h.Settle != 0 && !h.Watch {
		ps.add(path+".settle", "is set but watch is not: settle is how long a watched file must stop changing; set \"watch\": true or remove settle")
	}
	if s := h.S3; s != nil {
		if s.Bucket == "" {
			ps.add(path+".s3.bucket", "is required: the bucket holding the plugin")
		}
		if s.Key == "" {
			ps.add(path+".s3.key", "is required: the key of the plugin's object")
		}
		if s.Interval < 0 {
			ps.add(path+".s3.interval", "%s is negative: use a positive duration such as \"30s\" (absent: %s)", s.Interval, DefaultS3Interval)
		}
		checkEndpoint(ps, path+".s3.endpoint", s.Endpoint)
	}
	if h.MaxModuleBytes < 0 {
		ps.add(path+".maxModuleBytes", "%d is negative: use a size in bytes such as %d (absent: %d, 64 MiB)", h.MaxModuleBytes, int64(DefaultMaxModuleBytes), int64(DefaultMaxModuleBytes))
	}
	if h.MaxModuleBytes != 0 && !h.Enabled() {
		ps.add(path+".maxModuleBytes", "is set but neither watch nor s3 is: it bounds the modules read from a hot-swap source; set one or remove maxModuleBytes")
	}
	for i, pin := range h.SHA256 {
		if b, err := hex.DecodeString(pin); err != nil || len(b) != 32 {
			ps.add(fmt.Sprintf("%s.sha256[%d]", path, i), "%q is not a SHA-256 digest: write 64 hexadecimal digits", pin)
		}
	}
	if f := h.Fixture; f != nil {
		if f.Events == "" {
			ps.add(path+".fixture.events", "is required: the fixture's events file")
		}
		if f.Rows == "" {
			ps.add(path+".fixture.rows", "is required: the fixture's expected rows file")
		}
	}
	return len(*ps) == n
}

// validateSourceCheckpoints checks checkpoint.sources: each source's field
// is required and its offset in range; with a map, its instance field is
// required; each attribute holds one thing. Whether the plugin declares the
// sources is checked when the plugin is loaded.
func validateSourceCheckpoints(ps *problems, at func(string) string, cp CheckpointConfig, key []string, claim func(field, attr string)) {
	names := make([]string, 0, len(cp.Sources))
	for n := range cp.Sources {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		sc := cp.Sources[n]
		path := "checkpoint.sources." + n
		switch {
		case n == "":
			ps.add(at("checkpoint.sources"), "has an empty source name: use the source names the plugin declares")
		case sc.Field == "":
			ps.add(at(path+".field"), "is required: name the numeric attribute that holds the last applied version of the source's instance")
		case slices.Contains(key, sc.Field):
			ps.add(at(path+".field"), "[EDD-9081] %q is a key attribute: a row's key cannot change with every write", sc.Field)
		default:
			claim(path+".field", sc.Field)
		}
		if o := sc.Offset; o > MaxCheckpointOffset || o < -MaxCheckpointOffset {
			ps.add(at(path+".offset"), "%d is out of range: use -%d to %d", o, int64(MaxCheckpointOffset), int64(MaxCheckpointOffset))
		}
		switch {
		case cp.Map != "" && sc.InstanceField == "":
			ps.add(at(path+".instanceField"), "is required with checkpoint.map: it records which stream instance the field follows (the others go to the map); name a string attribute, e.g. %q", n+"Instance")
		case sc.InstanceField == "":
			ps.add(at(path+".instanceField"), "is required without checkpoint.map: [EDD-9081] without it the row does not record which stream instance the field follows, so a second instance's events would be compared with the first one's checkpoint and reported already applied; name a string attribute, e.g. %q, and set checkpoint.map to give every other instance a checkpoint of its own", n+"Instance")
		}
		claim(path+".instanceField", sc.InstanceField)
	}
}
