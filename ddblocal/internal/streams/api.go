package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Limits of the DynamoDB Streams API.
const (
	maxListLimit     = 100     // ListStreams and DescribeStream Limit
	maxRecordsLimit  = 1000    // GetRecords Limit
	maxRecordsBytes  = 1 << 20 // GetRecords returns at most 1 MB of records
	minArnLen        = 37
	maxArnLen        = 1024
	minShardIDLen    = 28
	maxShardIDLen    = 65
	maxIteratorLen   = 2048
	minSeqLen        = 21
	maxSeqLen        = 40
	targetPrefix     = "DynamoDBStreams_20120810."
	errExpired       = "ExpiredIteratorException"
	errTrimmed       = "TrimmedDataAccessException"
	errLimit         = "LimitExceededException"
	errUnknownOp     = "UnknownOperationException"
	errSerialization = "SerializationException"
)

// Handle serves one DynamoDB Streams operation (ListStreams, DescribeStream,
// GetShardIterator, GetRecords; the op may carry the X-Amz-Target prefix
// "DynamoDBStreams_20120810.") from its JSON request body and returns the
// JSON response body, or an *apierr.Error.
func (r *Registry) Handle(ctx context.Context, op string, body []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("streams: %s: %w", op, err)
	}
	op = strings.TrimPrefix(op, targetPrefix)
	if len(body) == 0 {
		body = []byte("{}")
	}
	var (
		out any
		err error
	)
	switch op {
	case "ListStreams":
		var in listStreamsIn
		if err = decode(body, &in); err == nil {
			out, err = r.listStreams(in)
		}
	case "DescribeStream":
		var in describeStreamIn
		if err = decode(body, &in); err == nil {
			out, err = r.describeStream(in)
		}
	case "GetShardIterator":
		var in getShardIteratorIn
		if err = decode(body, &in); err == nil {
			out, err = r.getShardIterator(in)
		}
	case "GetRecords":
		var in getRecordsIn
		if err = decode(body, &in); err == nil {
			out, err = r.getRecords(in)
		}
	default:
		return nil, apierr.New(errUnknownOp, 400, "unknown operation %q", op)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, apierr.New("InternalServerError", 500, "encoding %s response: %v", op, err)
	}
	return b, nil
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return apierr.New(errSerialization, 400, "%v", err)
	}
	return nil
}

// validation returns DynamoDB's "1 validation error detected" exception.
func validation(value, field, constraint string) *apierr.Error {
	return apierr.Validation("1 validation error detected: Value %s at '%s' failed to satisfy constraint: %s", value, field, constraint)
}

func checkLimit(limit *int, field string, max int) *apierr.Error {
	if limit == nil {
		return nil
	}
	if *limit < 1 {
		return validation(fmt.Sprintf("'%d'", *limit), field, "Member must have value greater than or equal to 1")
	}
	if max > 0 && *limit > max {
		return validation(fmt.Sprintf("'%d'", *limit), field, fmt.Sprintf("Member must have value less than or equal to %d", max))
	}
	return nil
}

func checkLen(v *string, field string, min, max int, required bool) *apierr.Error {
	if v == nil {
		if required {
			return validation("null", field, "Member must not be null")
		}
		return nil
	}
	if len(*v) < min {
		return validation(fmt.Sprintf("'%s'", *v), field, fmt.Sprintf("Member must have length greater than or equal to %d", min))
	}
	if len(*v) > max {
		return validation(fmt.Sprintf("'%s'", *v), field, fmt.Sprintf("Member must have length less than or equal to %d", max))
	}
	return nil
}

func streamNotFound(arn string) *apierr.Error {
	return apierr.NotFound("Requested resource not found: Stream: %s not found", arn)
}

type listStreamsIn struct {
	TableName               *string
	Limit                   *int
	ExclusiveStartStreamArn *string
}

type streamSummary struct {
	StreamArn   string
	StreamLabel string
	TableName   string
}

type listStreamsOut struct {
	Streams                []streamSummary
	LastEvaluatedStreamArn *string `json:",omitempty"`
}

func (r *Registry) listStreams(in listStreamsIn) (any, error) {
	if err := checkLimit(in.Limit, "limit", maxListLimit); err != nil {
		return nil, err
	}
	if err := checkLen(in.TableName, "tableName", 3, 255, false); err != nil {
		return nil, err
	}
	if err := checkLen(in.ExclusiveStartStreamArn, "exclusiveStartStreamArn", minArnLen, maxArnLen, false); err != nil {
		return nil, err
	}
	limit := maxListLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	out := listStreamsOut{Streams: []streamSummary{}}
	for _, s := range r.sortedStreams() {
		if in.TableName != nil && s.table != *in.TableName {
			continue
		}
		if in.ExclusiveStartStreamArn != nil && s.arn <= *in.ExclusiveStartStreamArn {
			continue
		}
		if len(out.Streams) == limit {
			last := out.Streams[limit-1].StreamArn
			out.LastEvaluatedStreamArn = &last
			break
		}
		out.Streams = append(out.Streams, streamSummary{StreamArn: s.arn, StreamLabel: s.label, TableName: s.table})
	}
	return out, nil
}

type shardFilter struct {
	Type    string
	ShardId *string
}

type describeStreamIn struct {
	StreamArn             *string
	Limit                 *int
	ExclusiveStartShardId *string
	ShardFilter           *shardFilter
}

type keySchemaOut struct {
	AttributeName string
	KeyType       string
}

type seqRangeOut struct {
	StartingSequenceNumber string
	EndingSequenceNumber   string `json:",omitempty"`
}

type shardOut struct {
	ShardId             string
	SequenceNumberRange seqRangeOut
	ParentShardId       string `json:",omitempty"`
}

type streamDescription struct {
	StreamArn               string
	StreamLabel             string
	StreamStatus            string
	StreamViewType          string
	TableName               string
	KeySchema               []keySchemaOut
	CreationRequestDateTime json.Number
	Shards                  []shardOut
	LastEvaluatedShardId    string `json:",omitempty"`
}

type describeStreamOut struct {
	StreamDescription streamDescription
}

func (r *Registry) describeStream(in describeStreamIn) (any, error) {
	if err := checkLen(in.StreamArn, "streamArn", minArnLen, maxArnLen, true); err != nil {
		return nil, err
	}
	if err := checkLimit(in.Limit, "limit", maxListLimit); err != nil {
		return nil, err
	}
	if err := checkLen(in.ExclusiveStartShardId, "exclusiveStartShardId", minShardIDLen, maxShardIDLen, false); err != nil {
		return nil, err
	}
	var childOf *string
	if f := in.ShardFilter; f != nil {
		if f.Type != "CHILD_SHARDS" {
			return nil, validation(fmt.Sprintf("'%s'", f.Type), "shardFilter.type", "Member must satisfy enum value set: [CHILD_SHARDS]")
		}
		if err := checkLen(f.ShardId, "shardFilter.shardId", minShardIDLen, maxShardIDLen, true); err != nil {
			return nil, err
		}
		childOf = f.ShardId
	}
	limit := maxListLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	s := r.lookup(*in.StreamArn)
	if s == nil {
		return nil, streamNotFound(*in.StreamArn)
	}
	r.housekeep(s, r.now())
	upTo := r.visibleUpTo()
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := streamDescription{
		StreamArn:               s.arn,
		StreamLabel:             s.label,
		StreamStatus:            s.status,
		StreamViewType:          s.viewType,
		TableName:               s.table,
		KeySchema:               []keySchemaOut{},
		CreationRequestDateTime: json.Number(fmt.Sprintf("%.3f", float64(s.created.UnixMilli())/1000)),
		Shards:                  []shardOut{},
	}
	for _, k := range s.keySchema {
		d.KeySchema = append(d.KeySchema, keySchemaOut{AttributeName: k.Name, KeyType: k.Type})
	}
	from := 0
	if in.ExclusiveStartShardId != nil { // ids sort in listing order
		from = sort.Search(len(s.shards), func(i int) bool { return s.shards[i].id > *in.ExclusiveStartShardId })
	}
	for _, sh := range s.shards[from:] {
		if !sh.listed(upTo) || (childOf != nil && sh.parent != *childOf) {
			continue
		}
		if len(d.Shards) == limit {
			d.LastEvaluatedShardId = d.Shards[limit-1].ShardId
			break
		}
		o := shardOut{ShardId: sh.id, ParentShardId: sh.parent}
		o.SequenceNumberRange.StartingSequenceNumber = formatSeq(sh.start)
		if sh.closedFor(upTo) {
			o.SequenceNumberRange.EndingSequenceNumber = formatSeq(sh.end)
		}
		d.Shards = append(d.Shards, o)
	}
	return describeStreamOut{StreamDescription: d}, nil
}

type getShardIteratorIn struct {
	StreamArn         *string
	ShardId           *string
	ShardIteratorType *string
	SequenceNumber    *string
}

type getShardIteratorOut struct {
	ShardIterator string
}

func (r *Registry) getShardIterator(in getShardIteratorIn) (any, error) {
	if err := checkLen(in.StreamArn, "streamArn", minArnLen, maxArnLen, true); err != nil {
		return nil, err
	}
	if err := checkLen(in.ShardId, "shardId", minShardIDLen, maxShardIDLen, true); err != nil {
		return nil, err
	}
	if in.ShardIteratorType == nil {
		return nil, validation("null", "shardIteratorType", "Member must not be null")
	}
	typ := *in.ShardIteratorType
	switch typ {
	case IterTrimHorizon, IterLatest:
	case IterAtSequence, IterAfterSeq:
		if in.SequenceNumber == nil {
			return nil, apierr.Validation("SequenceNumber must be provided for ShardIteratorType %s", typ)
		}
		if err := checkLen(in.SequenceNumber, "sequenceNumber", minSeqLen, maxSeqLen, true); err != nil {
			return nil, err
		}
	default:
		return nil, validation(fmt.Sprintf("'%s'", typ), "shardIteratorType",
			"Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]")
	}
	s := r.lookup(*in.StreamArn)
	if s == nil {
		return nil, streamNotFound(*in.StreamArn)
	}
	now := r.now()
	r.housekeep(s, now)
	s.mu.RLock()
	it, err := r.position(s, *in.ShardId, typ, in.SequenceNumber)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	it.Arn, it.Shard, it.Issued = s.arn, *in.ShardId, now.UnixNano()
	return getShardIteratorOut{ShardIterator: it.encode()}, nil
}

// position resolves where an iterator of the given type starts (s.mu held).
func (r *Registry) position(s *stream, shardID, typ string, seqText *string) (iterator, error) {
	upTo := r.visibleUpTo()
	sh := s.shard(shardID)
	if sh == nil || !sh.listed(upTo) {
		return iterator{}, apierr.NotFound("Requested resource not found: Shard %s does not exist in stream %s", shardID, s.arn)
	}
	closed := sh.closedFor(upTo)
	switch typ {
	case IterTrimHorizon:
		return iterator{Pos: sh.start, Horizon: true}, nil
	case IterLatest:
		if closed {
			return iterator{Pos: sh.end + 1}, nil
		}
		return iterator{Pos: r.seq.Load() + 1}, nil
	}
	n, ok := parseSeq(*seqText)
	upper := sh.end
	if !closed {
		upper = r.seq.Load()
	}
	if !ok || n < sh.start || n > upper {
		return iterator{}, apierr.Validation("Invalid SequenceNumber %s for shard %s: not within the shard's sequence number range", *seqText, shardID)
	}
	pos := n
	if typ == IterAfterSeq {
		pos = n + 1
	}
	if pos <= sh.trimmed {
		return iterator{}, apierr.New(errTrimmed, 400,
			"Attempted to access a sequence number (%s) that has been trimmed from shard %s: records beyond the retention period are removed", *seqText, shardID)
	}
	return iterator{Pos: pos}, nil
}
