package host

import (
	"fmt"
	"os"
	"sort"
	"time"
)

// SidecarConfig configures `host run`, the host's own change-feed reader
// (package host/sidecar): where it keeps its leases and checkpoints, how it
// reads, and what it does with records that keep failing.
type SidecarConfig struct {
	// LeaseTable is the DynamoDB table holding one lease (owner, counter,
	// checkpoint, parents) per shard (required). `host tables create`
	// creates it, keyed by the string attribute "leaseKey".
	LeaseTable string `json:"leaseTable"`
	// WorkerID names this process in the lease table (default: the host
	// name and the process id, "host-1234"). Every process sharing the
	// stream needs its own.
	WorkerID string `json:"workerId,omitempty"`
	// PollInterval is the wait after an empty read of an open shard, and
	// between looks for new shards (default DefaultSidecarPollInterval).
	PollInterval Duration `json:"pollInterval,omitempty"`
	// LeaseDuration is how long a lease whose counter has not moved is
	// still taken as held by its owner; owners renew every third of it
	// (default DefaultLeaseDuration).
	LeaseDuration Duration `json:"leaseDuration,omitempty"`
	// BatchSize is the most records read from a shard at once, 1..1000
	// (default DefaultSidecarBatchSize).
	BatchSize int `json:"batchSize,omitempty"`
	// OnTrimmed is what happens when records were trimmed from the stream
	// before they were read: TrimmedStop (default) or TrimmedContinue.
	OnTrimmed string `json:"onTrimmed,omitempty"`
	// StateFile, with OnTrimmed "continue", is the file where the
	// projections to rebuild are recorded (a JSON line each time data is
	// lost); default: the log only.
	StateFile string `json:"stateFile,omitempty"`
	// Failure is the failure policy of every projection without its own.
	Failure FailurePolicyConfig `json:"failure,omitempty"`
	// Projections overrides Failure per projection, by projection name;
	// fields left out keep Failure's.
	Projections map[string]FailurePolicyConfig `json:"projections,omitempty"`
	// Kinesis, when set, names the Kinesis data stream the event table
	// streams to (config_kinesis.go), read instead of the table's DynamoDB
	// stream; nil: the DynamoDB stream.
	Kinesis *KinesisConfig `json:"kinesis,omitempty"`
	// Verify, when set, verifies a sample of each projection's rows on a
	// schedule (see VerifyConfig).
	Verify *VerifyConfig `json:"verify,omitempty"`
}

// FailurePolicyConfig is what the reader does with a record that keeps
// failing, like a Lambda event source mapping's settings.
type FailurePolicyConfig struct {
	// MaxRetries is how many times a failed record is retried before it is
	// given up to OnFailure; -1 retries until MaxRecordAge, or for ever
	// without it (default DefaultMaxRetries with OnFailure, -1 without:
	// a record is never given up when there is nowhere to keep it).
	MaxRetries *int `json:"maxRetries,omitempty"`
	// MaxRecordAge gives up a failed record older than this (default 0:
	// no limit).
	MaxRecordAge Duration `json:"maxRecordAge,omitempty"`
	// BisectOnError retries a failed batch in halves until the failing
	// record is alone, so only it is counted as failed (default true).
	BisectOnError *bool `json:"bisectOnError,omitempty"`
	// OnFailure is where a given-up record goes. Without one, no record is
	// given up: a record that keeps failing is retried (its shard waits,
	// and the lag shows it) until it succeeds, as an event source mapping
	// does by default; MaxRetries and MaxRecordAge need it.
	OnFailure *OnFailureConfig `json:"onFailure,omitempty"`
}

// OnFailureConfig names one destination for given-up records: exactly one
// field is set.
type OnFailureConfig struct {
	// File is a JSON-lines file that entries are appended to.
	File string `json:"file,omitempty"`
	// Table is a DynamoDB quarantine table.
	Table string `json:"table,omitempty"`
	// QueueURL is an SQS queue.
	QueueURL string `json:"queueUrl,omitempty"`
}

// Defaults of the sidecar section.
const (
	DefaultSidecarPollInterval = time.Second
	DefaultLeaseDuration       = 10 * time.Second
	DefaultSidecarBatchSize    = 100
	DefaultMaxRetries          = 3
	MinLeaseDuration           = 300 * time.Millisecond
)

// The trimmed-data policies.
const (
	// TrimmedStop stops the reader with an error naming the shard: lost
	// changes need an operator.
	TrimmedStop = "stop"
	// TrimmedContinue logs the loss, records the projections to rebuild
	// and reads on from the oldest record still kept.
	TrimmedContinue = "continue"
)

// EffectiveSidecar returns the sidecar section with its defaults filled in
// (a zero section when the configuration has none).
func (c *Config) EffectiveSidecar() SidecarConfig {
	if c.Sidecar == nil {
		return SidecarConfig{}
	}
	s := *c.Sidecar
	if s.WorkerID == "" {
		h, _ := os.Hostname()
		s.WorkerID = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if s.PollInterval == 0 {
		s.PollInterval = Duration(DefaultSidecarPollInterval)
	}
	if s.LeaseDuration == 0 {
		s.LeaseDuration = Duration(DefaultLeaseDuration)
	}
	if s.BatchSize == 0 {
		s.BatchSize = DefaultSidecarBatchSize
	}
	if s.OnTrimmed == "" {
		s.OnTrimmed = TrimmedStop
	}
	return s
}

// Policy returns the failure policy of a projection: its own fields over
// Failure's, then the defaults.
func (s SidecarConfig) Policy(projection string) FailurePolicyConfig {
	p := s.Failure
	if o, ok := s.Projections[projection]; ok {
		if o.MaxRetries != nil {
			p.MaxRetries = o.MaxRetries
		}
		if o.MaxRecordAge != 0 {
			p.MaxRecordAge = o.MaxRecordAge
		}
		if o.BisectOnError != nil {
			p.BisectOnError = o.BisectOnError
		}
		if o.OnFailure != nil {
			p.OnFailure = o.OnFailure
		}
	}
	if p.MaxRetries == nil {
		n := DefaultMaxRetries
		if p.OnFailure == nil {
			n = -1
		}
		p.MaxRetries = &n
	}
	if p.BisectOnError == nil {
		b := true
		p.BisectOnError = &b
	}
	return p
}

func (c *Config) validateSidecar(ps *problems) {
	s := c.Sidecar
	if s == nil {
		return
	}
	if s.LeaseTable == "" {
		ps.add("sidecar.leaseTable", "is required: name the DynamoDB table for the reader's leases and checkpoints (`host tables create` creates it)")
	}
	if s.PollInterval < 0 {
		ps.add("sidecar.pollInterval", "is negative (%s): use a positive duration such as \"1s\"", s.PollInterval)
	}
	if s.LeaseDuration != 0 && time.Duration(s.LeaseDuration) < MinLeaseDuration {
		ps.add("sidecar.leaseDuration", "is %s: use at least %s (owners renew every third of it)", s.LeaseDuration, MinLeaseDuration)
	}
	if s.BatchSize < 0 || s.BatchSize > 1000 {
		ps.add("sidecar.batchSize", "is %d: use 1 to 1000 (DynamoDB Streams returns at most 1000 records a read)", s.BatchSize)
	}
	if s.OnTrimmed != "" && s.OnTrimmed != TrimmedStop && s.OnTrimmed != TrimmedContinue {
		ps.add("sidecar.onTrimmed", "%q is not a policy: use %q (stop and alert) or %q (read on from the oldest record kept and record the projections to rebuild)", s.OnTrimmed, TrimmedStop, TrimmedContinue)
	}
	if s.Kinesis != nil {
		s.Kinesis.validate(ps, "sidecar.kinesis")
	}
	s.Verify.validate(ps, "sidecar.verify")
	s.Failure.validate(ps, "sidecar.failure")
	s.checkKept(ps, "sidecar.failure", "")
	names := map[string]bool{}
	for _, p := range c.Projections {
		names[p.Name] = true
	}
	keys := make([]string, 0, len(s.Projections))
	for k := range s.Projections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := "sidecar.projections." + k
		if !names[k] {
			ps.add(path, "names no projection of \"projections\"")
		}
		s.Projections[k].validate(ps, path)
		s.checkKept(ps, path, k)
	}
}

// checkKept refuses a policy that gives records up (maxRetries,
// maxRecordAge) with no onFailure destination to keep them: they would be
// lost. path is where the policy is written, projection whose it is ("":
// the default one).
func (s *SidecarConfig) checkKept(ps *problems, path, projection string) {
	own := s.Failure
	if projection != "" {
		own = s.Projections[projection]
	}
	if s.Policy(projection).OnFailure != nil {
		return
	}
	if own.MaxRetries != nil && *own.MaxRetries >= 0 {
		ps.add(path+".maxRetries", "gives a record up after %d retries, but there is no onFailure destination to keep it: the record would be lost; set onFailure (\"file\", \"table\" or \"queueUrl\"), or leave maxRetries out to retry until it succeeds", *own.MaxRetries)
	}
	if own.MaxRecordAge > 0 {
		ps.add(path+".maxRecordAge", "gives a record up once older than %s, but there is no onFailure destination to keep it: the record would be lost; set onFailure (\"file\", \"table\" or \"queueUrl\"), or leave maxRecordAge out", own.MaxRecordAge)
	}
}

func (f FailurePolicyConfig) validate(ps *problems, path string) {
	if f.MaxRetries != nil && *f.MaxRetries < -1 {
		ps.add(path+".maxRetries", "is %d: use -1 (retry until maxRecordAge) or 0 and up", *f.MaxRetries)
	}
	if f.MaxRecordAge < 0 {
		ps.add(path+".maxRecordAge", "is negative (%s): use a positive duration such as \"1h\", or leave it out", f.MaxRecordAge)
	}
	if o := f.OnFailure; o != nil {
		n := 0
		for _, v := range []string{o.File, o.Table, o.QueueURL} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			ps.add(path+".onFailure", "sets %d destinations: set exactly one of \"file\", \"table\" or \"queueUrl\"", n)
		}
	}
}

// LeaseKeyAttr is the lease table's key attribute (a string: the shard id).
const LeaseKeyAttr = "leaseKey"
