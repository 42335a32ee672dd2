package kinesis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"time"
)

// epoch is a timestamp as JSON 1.1 writes it: seconds since the epoch.
type epoch float64

func epochOf(t time.Time) epoch { return epoch(float64(t.UnixMilli()) / 1000) }

func (e epoch) time() time.Time {
	sec, frac := math.Modf(float64(e))
	return time.Unix(int64(sec), int64(frac*1e9))
}

type hashRangeOut struct {
	StartingHashKey string
	EndingHashKey   string
}

type seqRangeOut struct {
	StartingSequenceNumber string
	EndingSequenceNumber   string `json:",omitempty"`
}

type shardOut struct {
	ShardId               string
	ParentShardId         string `json:",omitempty"`
	AdjacentParentShardId string `json:",omitempty"`
	HashKeyRange          hashRangeOut
	SequenceNumberRange   seqRangeOut
}

func shardView(sh *shard) shardOut {
	o := shardOut{ShardId: sh.id(), ParentShardId: sh.parent, AdjacentParentShardId: sh.adjacent,
		HashKeyRange:        hashRangeOut{sh.lo.String(), sh.hi.String()},
		SequenceNumberRange: seqRangeOut{StartingSequenceNumber: formatSeq(sh.idx, sh.start)}}
	if !sh.open() {
		o.SequenceNumberRange.EndingSequenceNumber = formatSeq(sh.idx, sh.end)
	}
	return o
}

type modeDetails struct{ StreamMode string }

type createStreamIn struct {
	StreamName        *string
	ShardCount        *int
	StreamModeDetails *modeDetails
}

func (r *Registry) createStreamOp(_ context.Context, body []byte) (any, error) {
	var in createStreamIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	c.name(in.StreamName, "streamName", true)
	c.limit(in.ShardCount, "shardCount", 1, 100000)
	if m := in.StreamModeDetails; m != nil && m.StreamMode != modeOnDemand && m.StreamMode != modeProv {
		c.add(m.StreamMode, "streamModeDetails.streamMode", "Member must satisfy enum value set: [ON_DEMAND, PROVISIONED]")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	mode, n := modeProv, r.opts.OnDemandShards
	if in.StreamModeDetails != nil {
		mode = in.StreamModeDetails.StreamMode
	}
	switch {
	case mode == modeOnDemand && in.ShardCount != nil:
		return nil, invalidArg("ShardCount is not supported for streams in ON_DEMAND mode.")
	case mode == modeProv && in.ShardCount == nil && in.StreamModeDetails != nil:
		return nil, invalidArg("ShardCount is required for streams in PROVISIONED mode.")
	case in.ShardCount == nil:
		mode = modeOnDemand
	default:
		n = *in.ShardCount
	}
	return struct{}{}, r.createStream(*in.StreamName, n, mode)
}

type deleteStreamIn struct {
	streamRef
	EnforceConsumerDeletion *bool
}

func (r *Registry) deleteStreamOp(_ context.Context, body []byte) (any, error) {
	var in deleteStreamIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	return struct{}{}, r.deleteStream(s)
}

type describeStreamIn struct {
	streamRef
	Limit                 *int
	ExclusiveStartShardId *string
}

type streamDescription struct {
	StreamName              string
	StreamARN               string
	StreamStatus            string
	StreamModeDetails       modeDetails
	Shards                  []shardOut
	HasMoreShards           bool
	RetentionPeriodHours    int
	StreamCreationTimestamp epoch
	EnhancedMonitoring      []map[string][]string
	EncryptionType          string
}

func (r *Registry) describeStreamOp(_ context.Context, body []byte) (any, error) {
	var in describeStreamIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	c.limit(in.Limit, "limit", 1, 10000)
	c.name(in.ExclusiveStartShardId, "exclusiveStartShardId", false)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	if err := r.housekeep(s, nil, r.now()); err != nil {
		return nil, err
	}
	limit := 100
	if in.Limit != nil {
		limit = *in.Limit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := streamDescription{StreamName: s.name, StreamARN: s.arn, StreamStatus: statusActive, StreamModeDetails: modeDetails{s.mode},
		Shards: []shardOut{}, RetentionPeriodHours: int(s.retention / time.Hour), StreamCreationTimestamp: epochOf(s.created),
		EnhancedMonitoring: []map[string][]string{{"ShardLevelMetrics": {}}}, EncryptionType: "NONE"}
	for _, sh := range s.shards {
		if sh.gone || (in.ExclusiveStartShardId != nil && sh.id() <= *in.ExclusiveStartShardId) {
			continue
		}
		if len(d.Shards) == limit {
			d.HasMoreShards = true
			break
		}
		d.Shards = append(d.Shards, shardView(sh))
	}
	return map[string]any{"StreamDescription": d}, nil
}

func (r *Registry) describeStreamSummaryOp(_ context.Context, body []byte) (any, error) {
	var in streamRef
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in)
	if err != nil {
		return nil, err
	}
	if err := r.housekeep(s, nil, r.now()); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	open := 0
	for _, sh := range s.shards {
		if sh.open() {
			open++
		}
	}
	return map[string]any{"StreamDescriptionSummary": map[string]any{
		"StreamName": s.name, "StreamARN": s.arn, "StreamStatus": statusActive, "StreamModeDetails": modeDetails{s.mode},
		"RetentionPeriodHours": int(s.retention / time.Hour), "StreamCreationTimestamp": epochOf(s.created),
		"EnhancedMonitoring": []map[string][]string{{"ShardLevelMetrics": {}}}, "EncryptionType": "NONE",
		"OpenShardCount": open, "ConsumerCount": 0,
	}}, nil
}

type listStreamsIn struct {
	Limit                    *int
	ExclusiveStartStreamName *string
	NextToken                *string
}

func (r *Registry) listStreamsOp(_ context.Context, body []byte) (any, error) {
	var in listStreamsIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	c.limit(in.Limit, "limit", 1, 10000)
	c.name(in.ExclusiveStartStreamName, "exclusiveStartStreamName", false)
	if err := c.err(); err != nil {
		return nil, err
	}
	after := ""
	if in.ExclusiveStartStreamName != nil {
		after = *in.ExclusiveStartStreamName
	}
	if in.NextToken != nil {
		b, err := base64.RawURLEncoding.DecodeString(*in.NextToken)
		if err != nil || len(b) == 0 {
			return nil, invalidArg("NextToken %s is invalid.", *in.NextToken)
		}
		after = string(b)
	}
	limit := 100
	if in.Limit != nil {
		limit = *in.Limit
	}
	names, sums := []string{}, []map[string]any{}
	more := false
	for _, n := range r.sortedNames() {
		if n <= after {
			continue
		}
		if len(names) == limit {
			more = true
			break
		}
		s := r.lookup(n)
		if s == nil {
			continue
		}
		names = append(names, n)
		sums = append(sums, map[string]any{"StreamName": n, "StreamARN": s.arn, "StreamStatus": statusActive,
			"StreamModeDetails": modeDetails{s.mode}, "StreamCreationTimestamp": epochOf(s.created)})
	}
	out := map[string]any{"StreamNames": names, "StreamSummaries": sums, "HasMoreStreams": more}
	if more {
		out["NextToken"] = base64.RawURLEncoding.EncodeToString([]byte(names[len(names)-1]))
	}
	return out, nil
}

// ShardFilter types of ListShards.
const (
	filterAfterShardID   = "AFTER_SHARD_ID"
	filterAtTrimHorizon  = "AT_TRIM_HORIZON"
	filterFromTrimHoriz  = "FROM_TRIM_HORIZON"
	filterAtLatest       = "AT_LATEST"
	filterAtTimestamp    = "AT_TIMESTAMP"
	filterFromTimestamp  = "FROM_TIMESTAMP"
	filterTypesConstrain = "Member must satisfy enum value set: [AFTER_SHARD_ID, AT_TRIM_HORIZON, FROM_TRIM_HORIZON, AT_LATEST, AT_TIMESTAMP, FROM_TIMESTAMP]"
)

type shardFilter struct {
	Type      string
	ShardId   *string `json:",omitempty"`
	Timestamp *epoch  `json:",omitempty"`
}

type listShardsIn struct {
	streamRef
	NextToken               *string
	ExclusiveStartShardId   *string
	MaxResults              *int
	StreamCreationTimestamp *epoch
	ShardFilter             *shardFilter
}

// shardsToken is the content of a ListShards NextToken.
type shardsToken struct {
	Stream  string       `json:"s"`
	Created int64        `json:"c"`
	After   int          `json:"a"`
	Filter  *shardFilter `json:"f,omitempty"`
}

func (r *Registry) listShardsOp(_ context.Context, body []byte) (any, error) {
	var in listShardsIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	c.limit(in.MaxResults, "maxResults", 1, 10000)
	c.name(in.ExclusiveStartShardId, "exclusiveStartShardId", false)
	if f := in.ShardFilter; f != nil {
		switch f.Type {
		case filterAfterShardID, filterAtTrimHorizon, filterFromTrimHoriz, filterAtLatest, filterAtTimestamp, filterFromTimestamp:
		default:
			c.add(f.Type, "shardFilter.type", filterTypesConstrain)
		}
		c.name(f.ShardId, "shardFilter.shardId", false)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	after, filter := -1, in.ShardFilter
	var s *stream
	if in.NextToken != nil {
		if in.StreamName != nil || in.StreamARN != nil {
			return nil, invalidArg("NextToken and StreamName cannot be provided together.")
		}
		var tok shardsToken
		b, err := base64.RawURLEncoding.DecodeString(*in.NextToken)
		if err != nil || json.Unmarshal(b, &tok) != nil {
			return nil, invalidArg("NextToken %s is invalid.", *in.NextToken)
		}
		if s = r.lookup(tok.Stream); s == nil || nano(s.created) != tok.Created {
			return nil, invalidArg("NextToken %s is invalid: its stream no longer exists.", *in.NextToken)
		}
		after, filter = tok.After, tok.Filter
	} else {
		if in.StreamName == nil && in.StreamARN == nil {
			return nil, invalidArg("Either NextToken or StreamName should be provided.")
		}
		var err error
		if s, err = r.stream(in.streamRef); err != nil {
			return nil, err
		}
		if in.ExclusiveStartShardId != nil {
			if i, ok := shardIndex(*in.ExclusiveStartShardId); ok {
				after = i
			}
		}
	}
	now := r.now()
	if err := r.housekeep(s, nil, now); err != nil {
		return nil, err
	}
	keep, err := r.filterShards(s, filter, now)
	if err != nil {
		return nil, err
	}
	limit := 1000
	if in.MaxResults != nil {
		limit = *in.MaxResults
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]any{}
	list := []shardOut{}
	for _, sh := range s.shards {
		if sh.gone || sh.idx <= after || !keep(sh) {
			continue
		}
		if len(list) == limit {
			tok, _ := json.Marshal(shardsToken{Stream: s.name, Created: nano(s.created), After: sh.idx - 1, Filter: filter})
			out["NextToken"] = base64.RawURLEncoding.EncodeToString(tok)
			break
		}
		list = append(list, shardView(sh))
	}
	out["Shards"] = list
	return out, nil
}

// filterShards returns the test of a ShardFilter (s.mu held when called).
func (r *Registry) filterShards(s *stream, f *shardFilter, now time.Time) (func(*shard) bool, error) {
	if f == nil {
		return func(*shard) bool { return true }, nil
	}
	switch f.Type {
	case filterAfterShardID:
		if f.ShardId == nil {
			return nil, invalidArg("Must specify ShardId in ShardFilter of type AFTER_SHARD_ID.")
		}
		i, ok := shardIndex(*f.ShardId)
		if !ok {
			return nil, invalidArg("ShardId %s in ShardFilter is invalid.", *f.ShardId)
		}
		return func(sh *shard) bool { return sh.idx > i }, nil
	case filterAtLatest:
		return func(sh *shard) bool { return sh.open() }, nil
	case filterFromTrimHoriz:
		return func(*shard) bool { return true }, nil
	case filterAtTrimHorizon:
		// the first shards still kept of each lineage: no parent left
		return func(sh *shard) bool { return !r.listedParent(s, sh.parent) && !r.listedParent(s, sh.adjacent) }, nil
	case filterAtTimestamp, filterFromTimestamp:
		if f.Timestamp == nil {
			return nil, invalidArg("Must specify Timestamp in ShardFilter of type %s.", f.Type)
		}
		t := f.Timestamp.time()
		if t.After(now) {
			return nil, invalidArg("The Timestamp in ShardFilter cannot be in the future.")
		}
		if t.Before(s.created) {
			t = s.created
		}
		from := f.Type == filterFromTimestamp
		return func(sh *shard) bool {
			if sh.created.After(t) {
				return from
			}
			return sh.open() || sh.closed.After(t)
		}, nil
	}
	return nil, invalidArg("ShardFilter type %s is not supported.", f.Type)
}

// listedParent reports whether id names a shard still listed (s.mu held).
func (r *Registry) listedParent(s *stream, id string) bool {
	if id == "" {
		return false
	}
	sh := s.shard(id)
	return sh != nil && !sh.gone
}

type splitShardIn struct {
	streamRef
	ShardToSplit       *string
	NewStartingHashKey *string
}

func (r *Registry) splitShardOp(_ context.Context, body []byte) (any, error) {
	var in splitShardIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	c.name(in.ShardToSplit, "shardToSplit", true)
	if in.NewStartingHashKey == nil {
		c.add(nil, "newStartingHashKey", "Member must not be null")
	}
	c.pattern(in.NewStartingHashKey, "newStartingHashKey", hashPattern, `0|([1-9]\d{0,38})`)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	at, ok := parseU128(*in.NewStartingHashKey)
	if !ok {
		return nil, invalidArg("NewStartingHashKey %s is not a hash key in [0, 2^128-1].", *in.NewStartingHashKey)
	}
	err = r.change(s, func(b *sink) error {
		_, err := r.split(s, *in.ShardToSplit, at, b)
		return err
	})
	return struct{}{}, err
}

type mergeShardsIn struct {
	streamRef
	ShardToMerge         *string
	AdjacentShardToMerge *string
}

func (r *Registry) mergeShardsOp(_ context.Context, body []byte) (any, error) {
	var in mergeShardsIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	c.name(in.ShardToMerge, "shardToMerge", true)
	c.name(in.AdjacentShardToMerge, "adjacentShardToMerge", true)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	err = r.change(s, func(b *sink) error {
		_, err := r.merge(s, *in.ShardToMerge, *in.AdjacentShardToMerge, b)
		return err
	})
	return struct{}{}, err
}
