package kinesis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Limits of the Kinesis API as ddblocal applies them.
const (
	maxDataBytes       = 1 << 20  // a record's data
	maxPutRecords      = 500      // entries of one PutRecords
	maxGetRecords      = 10000    // GetRecords Limit
	maxGetRecordsBytes = 10 << 20 // GetRecords returns at most 10 MiB
)

type putRecordIn struct {
	streamRef
	PartitionKey              *string
	Data                      []byte
	ExplicitHashKey           *string
	SequenceNumberForOrdering *string
}

func checkEntry(c *checks, prefix string, pk *string, data []byte, explicit *string) {
	switch {
	case pk == nil:
		c.add(nil, prefix+"partitionKey", "Member must not be null")
	case len(*pk) < 1:
		c.add(pk, prefix+"partitionKey", "Member must have length greater than or equal to 1")
	case len([]rune(*pk)) > 256:
		c.add(pk, prefix+"partitionKey", "Member must have length less than or equal to 256")
	}
	switch {
	case data == nil:
		c.add(nil, prefix+"data", "Member must not be null")
	case len(data) > maxDataBytes:
		c.add(fmt.Sprintf("java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]", len(data), len(data)), prefix+"data",
			fmt.Sprintf("Member must have length less than or equal to %d", maxDataBytes))
	}
	c.pattern(explicit, prefix+"explicitHashKey", hashPattern, `0|([1-9]\d{0,38})`)
}

// routeKey is the hash key a record goes to.
func routeKey(pk string, explicit *string) (u128, error) {
	if explicit == nil {
		return hashKey(pk), nil
	}
	h, ok := parseU128(*explicit)
	if !ok {
		return u128{}, invalidArg("Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was %s", *explicit)
	}
	return h, nil
}

type putResult struct {
	SequenceNumber string `json:",omitempty"`
	ShardId        string `json:",omitempty"`
	ErrorCode      string `json:",omitempty"`
	ErrorMessage   string `json:",omitempty"`
}

func (r *Registry) putRecordOp(_ context.Context, body []byte) (any, error) {
	var in putRecordIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	checkEntry(&c, "", in.PartitionKey, in.Data, in.ExplicitHashKey)
	c.pattern(in.SequenceNumberForOrdering, "sequenceNumberForOrdering", numberPattern, `0|([1-9]\d{0,128})`)
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	h, err := routeKey(*in.PartitionKey, in.ExplicitHashKey)
	if err != nil {
		return nil, err
	}
	var res putResult
	err = r.change(s, func(b *sink) error {
		sh := s.route(h)
		rec := &record{at: r.now(), pk: *in.PartitionKey, data: in.Data}
		if err := r.appendLocked(s, sh, rec, b); err != nil {
			return err
		}
		res = putResult{SequenceNumber: formatSeq(sh.idx, rec.n), ShardId: sh.id()}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"ShardId": res.ShardId, "SequenceNumber": res.SequenceNumber, "EncryptionType": "NONE"}, nil
}

type putRecordsEntry struct {
	PartitionKey    *string
	Data            []byte
	ExplicitHashKey *string
}

type putRecordsIn struct {
	streamRef
	Records []*putRecordsEntry
}

func (r *Registry) putRecordsOp(_ context.Context, body []byte) (any, error) {
	var in putRecordsIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	switch {
	case in.Records == nil:
		c.add(nil, "records", "Member must not be null")
	case len(in.Records) < 1:
		c.add("[]", "records", "Member must have length greater than or equal to 1")
	case len(in.Records) > maxPutRecords:
		c.add(fmt.Sprintf("[%d entries]", len(in.Records)), "records", fmt.Sprintf("Member must have length less than or equal to %d", maxPutRecords))
	}
	for i, e := range in.Records {
		if e == nil {
			e = &putRecordsEntry{}
		}
		checkEntry(&c, fmt.Sprintf("records.%d.member.", i+1), e.PartitionKey, e.Data, e.ExplicitHashKey)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	keys := make([]u128, len(in.Records))
	for i, e := range in.Records {
		if keys[i], err = routeKey(*e.PartitionKey, e.ExplicitHashKey); err != nil {
			return nil, err
		}
	}
	results := make([]putResult, len(in.Records))
	err = r.change(s, func(b *sink) error {
		now := r.now()
		for i, e := range in.Records {
			sh := s.route(keys[i])
			rec := &record{at: now, pk: *e.PartitionKey, data: e.Data}
			if err := r.appendLocked(s, sh, rec, b); err != nil {
				return err
			}
			results[i] = putResult{SequenceNumber: formatSeq(sh.idx, rec.n), ShardId: sh.id()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"FailedRecordCount": 0, "Records": results, "EncryptionType": "NONE"}, nil
}

// Shard iterator types.
const (
	iterAt       = "AT_SEQUENCE_NUMBER"
	iterAfter    = "AFTER_SEQUENCE_NUMBER"
	iterHorizon  = "TRIM_HORIZON"
	iterLatest   = "LATEST"
	iterAtTime   = "AT_TIMESTAMP"
	iterTypesSet = "Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_TIMESTAMP, AT_SEQUENCE_NUMBER, TRIM_HORIZON]"
)

// iterator is the content of a shard iterator: the next counter to read in
// a shard, and when the iterator was issued. Horizon marks a TRIM_HORIZON
// iterator not yet used: it reads from wherever the trim horizon is then.
type iterator struct {
	Stream  string `json:"s"`
	Created int64  `json:"c"` // the stream's creation: a stream deleted and created again refuses old iterators
	Shard   int    `json:"h"`
	Pos     uint64 `json:"p"`
	Horizon bool   `json:"z,omitempty"`
	Issued  int64  `json:"t"`
}

func (it iterator) encode() string {
	b, _ := json.Marshal(it) // plain struct: never fails
	return base64.StdEncoding.EncodeToString(b)
}

var errBadIterator = invalidArg("Invalid ShardIterator.")

func decodeIterator(text string) (iterator, error) {
	var it iterator
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil || json.Unmarshal(b, &it) != nil || it.Stream == "" || it.Issued == 0 {
		return it, errBadIterator
	}
	return it, nil
}

type getShardIteratorIn struct {
	streamRef
	ShardId                *string
	ShardIteratorType      *string
	StartingSequenceNumber *string
	Timestamp              *epoch
}

func (r *Registry) getShardIteratorOp(_ context.Context, body []byte) (any, error) {
	var in getShardIteratorIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	in.check(&c)
	c.name(in.ShardId, "shardId", true)
	typ := ""
	if in.ShardIteratorType == nil {
		c.add(nil, "shardIteratorType", "Member must not be null")
	} else {
		switch typ = *in.ShardIteratorType; typ {
		case iterAt, iterAfter, iterHorizon, iterLatest, iterAtTime:
		default:
			c.add(in.ShardIteratorType, "shardIteratorType", iterTypesSet)
		}
	}
	c.pattern(in.StartingSequenceNumber, "startingSequenceNumber", numberPattern, `0|([1-9]\d{0,128})`)
	if err := c.err(); err != nil {
		return nil, err
	}
	withSeq := typ == iterAt || typ == iterAfter
	if withSeq != (in.StartingSequenceNumber != nil) && typ != iterAtTime {
		what := "no StartingSequenceNumber"
		if in.StartingSequenceNumber != nil {
			what = "also a StartingSequenceNumber"
		}
		return nil, invalidArg("Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or (2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified %s and %s.", typ, what)
	}
	s, err := r.stream(in.streamRef)
	if err != nil {
		return nil, err
	}
	now := r.now()
	s.mu.RLock()
	sh := s.shard(*in.ShardId)
	s.mu.RUnlock()
	if sh == nil || sh.gone {
		return nil, apierr.NotFound("Shard %s in stream %s under account %s does not exist", *in.ShardId, s.name, r.opts.AccountID)
	}
	if err := r.housekeep(s, sh, now); err != nil {
		return nil, err
	}
	s.mu.RLock()
	it, err := r.position(s, sh, typ, in.StartingSequenceNumber, in.Timestamp, now)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	it.Stream, it.Created, it.Shard, it.Issued = s.name, nano(s.created), sh.idx, now.UnixNano()
	return map[string]string{"ShardIterator": it.encode()}, nil
}

// position resolves where an iterator starts (s.mu held).
func (r *Registry) position(s *stream, sh *shard, typ string, seqText *string, ts *epoch, now time.Time) (iterator, error) {
	latest := min(r.seq.Load(), r.visibleUpTo()) + 1
	if !sh.open() {
		latest = sh.end + 1
	}
	switch typ {
	case iterHorizon:
		return iterator{Pos: sh.start, Horizon: true}, nil
	case iterLatest:
		return iterator{Pos: latest}, nil
	case iterAtTime:
		if ts == nil {
			return iterator{}, invalidArg("Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter.")
		}
		t := ts.time()
		if t.After(now) {
			return iterator{}, invalidArg("The timestampInMillis parameter cannot be greater than the currentTimestampInMillis. timestampInMillis: %d, currentTimestampInMillis: %d", t.UnixMilli(), now.UnixMilli())
		}
		recs := r.readable(sh)
		i := sort.Search(len(recs), func(i int) bool { return !recs[i].at.Before(t) })
		if i < len(recs) {
			return iterator{Pos: recs[i].n}, nil
		}
		return iterator{Pos: latest}, nil
	}
	idx, n, ok := parseSeq(*seqText)
	if !ok {
		return iterator{}, invalidArg("StartingSequenceNumber %s used in GetShardIterator on shard %s in stream %s under account %s is invalid.", *seqText, sh.id(), s.name, r.opts.AccountID)
	}
	if idx != sh.idx {
		return iterator{}, invalidArg("Invalid StartingSequenceNumber. It encodes %s, while it was used in a call to a shard with %s", shardID(idx), sh.id())
	}
	if n < sh.start || n >= latest {
		return iterator{}, invalidArg("StartingSequenceNumber %s used in GetShardIterator on shard %s in stream %s under account %s is invalid because it did not come from this stream.", *seqText, sh.id(), s.name, r.opts.AccountID)
	}
	if typ == iterAfter {
		n++
	}
	return iterator{Pos: n, Horizon: n <= sh.trimmed}, nil
}

// readable returns the records of sh readers may see (s.mu held).
func (r *Registry) readable(sh *shard) []*record {
	upTo := r.visibleUpTo()
	all := sh.records
	return all[:sort.Search(len(all), func(i int) bool { return all[i].n > upTo })]
}

type getRecordsIn struct {
	ShardIterator *string
	Limit         *int
}

type recordOut struct {
	SequenceNumber              string
	ApproximateArrivalTimestamp epoch
	Data                        []byte
	PartitionKey                string
}

type childShardOut struct {
	ShardId      string
	ParentShards []string
	HashKeyRange hashRangeOut
}

type getRecordsOut struct {
	Records            []recordOut
	NextShardIterator  *string         `json:",omitempty"`
	MillisBehindLatest int64           `json:"MillisBehindLatest"`
	ChildShards        []childShardOut `json:",omitempty"`
}

func (r *Registry) getRecordsOp(_ context.Context, body []byte) (any, error) {
	var in getRecordsIn
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c checks
	switch {
	case in.ShardIterator == nil:
		c.add(nil, "shardIterator", "Member must not be null")
	case len(*in.ShardIterator) < 1:
		c.add(in.ShardIterator, "shardIterator", "Member must have length greater than or equal to 1")
	case len(*in.ShardIterator) > 512:
		c.add(in.ShardIterator, "shardIterator", "Member must have length less than or equal to 512")
	}
	c.limit(in.Limit, "limit", 1, maxGetRecords)
	if err := c.err(); err != nil {
		return nil, err
	}
	it, err := decodeIterator(*in.ShardIterator)
	if err != nil {
		return nil, err
	}
	now := r.now()
	issued := time.Unix(0, it.Issued)
	if now.Sub(issued) > r.opts.IteratorTTL {
		return nil, apierr.New("ExpiredIteratorException", 400,
			"Iterator expired. The iterator was created at time %s while right now it is %s which is further in the future than the tolerated delay of %d milliseconds.",
			amzTime(issued), amzTime(now), r.opts.IteratorTTL.Milliseconds())
	}
	s := r.lookup(it.Stream)
	var sh *shard
	if s != nil && nano(s.created) == it.Created {
		s.mu.RLock()
		if it.Shard < len(s.shards) {
			sh = s.shards[it.Shard]
		}
		s.mu.RUnlock()
	}
	if sh == nil || sh.gone {
		return nil, apierr.NotFound("Shard %s in stream %s under account %s does not exist", shardID(it.Shard), it.Stream, r.opts.AccountID)
	}
	if err := r.throttle(s, sh, now); err != nil {
		return nil, err
	}
	if err := r.housekeep(s, sh, now); err != nil {
		return nil, err
	}
	limit := maxGetRecords
	if in.Limit != nil {
		limit = *in.Limit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	pos := it.Pos
	if it.Horizon || pos <= sh.trimmed {
		pos = max(pos, sh.trimmed+1)
	}
	all := r.readable(sh)
	i := sort.Search(len(all), func(i int) bool { return all[i].n >= pos })
	j, size := i, 0
	for j < len(all) && j-i < limit {
		size += len(all[j].data) + len(all[j].pk)
		if size > maxGetRecordsBytes && j > i {
			break
		}
		j++
	}
	out := getRecordsOut{Records: make([]recordOut, 0, j-i)}
	for _, rec := range all[i:j] {
		out.Records = append(out.Records, recordOut{SequenceNumber: formatSeq(sh.idx, rec.n),
			ApproximateArrivalTimestamp: epochOf(rec.at), Data: rec.data, PartitionKey: rec.pk})
	}
	if j > i {
		pos = all[j-1].n + 1
	}
	if j < len(all) {
		out.MillisBehindLatest = max(0, now.Sub(all[j].at).Milliseconds())
	}
	if !sh.open() && j == len(sh.records) {
		out.ChildShards = []childShardOut{}
		for _, ch := range s.shards {
			if ch.parent == sh.id() || ch.adjacent == sh.id() {
				parents := []string{ch.parent}
				if ch.adjacent != "" {
					parents = append(parents, ch.adjacent)
				}
				out.ChildShards = append(out.ChildShards, childShardOut{ShardId: ch.id(), ParentShards: parents,
					HashKeyRange: hashRangeOut{ch.lo.String(), ch.hi.String()}})
			}
		}
		return out, nil
	}
	next := iterator{Stream: it.Stream, Created: it.Created, Shard: it.Shard, Pos: pos, Issued: now.UnixNano()}.encode()
	out.NextShardIterator = &next
	return out, nil
}

// amzTime formats a time as Kinesis's messages do: Thu Jan 22 01:22:02 UTC 2015.
func amzTime(t time.Time) string { return t.UTC().Format("Mon Jan 02 15:04:05 MST 2006") }

// throttle counts a GetRecords call on a shard and refuses it past
// Options.ReadsPerShardPerSecond calls in the current second.
func (r *Registry) throttle(s *stream, sh *shard, now time.Time) error {
	limit := r.opts.ReadsPerShardPerSecond
	if limit <= 0 {
		return nil
	}
	k := s.name + "/" + sh.id()
	sec := now.Unix()
	r.rateMu.Lock()
	defer r.rateMu.Unlock()
	w := r.rate[k]
	if w.second != sec {
		for key, old := range r.rate {
			if old.second < sec-1 {
				delete(r.rate, key)
			}
		}
		w = rateWindow{second: sec}
	}
	if w.calls >= limit {
		return apierr.New("ProvisionedThroughputExceededException", 400, "Rate exceeded for Shard - %s/%s/%s.", r.opts.AccountID, s.name, sh.id())
	}
	w.calls++
	r.rate[k] = w
	return nil
}
