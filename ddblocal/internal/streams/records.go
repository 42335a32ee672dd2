package streams

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sort"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

type getRecordsIn struct {
	ShardIterator *string
	Limit         *int
}

type identityOut struct {
	PrincipalId string
	Type        string
}

type streamRecordOut struct {
	ApproximateCreationDateTime int64
	Keys                        wire.Item `json:",omitempty"`
	NewImage                    wire.Item `json:",omitempty"`
	OldImage                    wire.Item `json:",omitempty"`
	SequenceNumber              string
	SizeBytes                   int
	StreamViewType              string
}

type recordOut struct {
	AwsRegion    string          `json:"awsRegion"`
	Dynamodb     streamRecordOut `json:"dynamodb"`
	EventID      string          `json:"eventID"`
	EventName    string          `json:"eventName"`
	EventSource  string          `json:"eventSource"`
	EventVersion string          `json:"eventVersion"`
	UserIdentity *identityOut    `json:"userIdentity,omitempty"`
}

type getRecordsOut struct {
	Records           []recordOut
	NextShardIterator *string `json:",omitempty"`
}

func (r *Registry) getRecords(in getRecordsIn) (any, error) {
	if err := checkLen(in.ShardIterator, "shardIterator", 1, maxIteratorLen, true); err != nil {
		return nil, err
	}
	// "The upper limit is 1000": a larger Limit is a ValidationException
	// (AWS CodeGuru warns of exactly that for stream batch sizes).
	if err := checkLimit(in.Limit, "limit", maxRecordsLimit); err != nil {
		return nil, err
	}
	limit := maxRecordsLimit
	if in.Limit != nil && *in.Limit < limit {
		limit = *in.Limit
	}
	it, err := decodeIterator(*in.ShardIterator)
	if err != nil {
		return nil, err
	}
	now := r.now()
	if now.Sub(it.issued()) > r.opts.IteratorTTL {
		return nil, apierr.New(errExpired, 400,
			"Iterator expired. The iterator was created at time %s while right now it is %s. The iterator is valid for %s.",
			it.issued().UTC().Format(time.RFC1123), now.UTC().Format(time.RFC1123), r.opts.IteratorTTL)
	}
	s := r.lookup(it.Arn)
	if s == nil {
		return nil, streamNotFound(it.Arn)
	}
	if err := r.throttle(it, now); err != nil {
		return nil, err
	}

	r.housekeep(s, now)
	s.mu.RLock()
	recs, next, err := s.read(it, limit, r.visibleUpTo())
	view := s.viewType
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}

	out := getRecordsOut{Records: make([]recordOut, len(recs))}
	for i, rec := range recs {
		out.Records[i] = r.recordOut(s.arn, view, rec)
	}
	if next != nil {
		next.Issued = now.UnixNano()
		t := next.encode()
		out.NextShardIterator = &t
	}
	return out, nil
}

// throttle counts a GetRecords call on a shard and refuses it past
// Options.GetRecordsPerShardPerSecond calls in the current second.
func (r *Registry) throttle(it iterator, now time.Time) error {
	limit := r.opts.GetRecordsPerShardPerSecond
	if limit <= 0 {
		return nil
	}
	k := it.Arn + "/" + it.Shard
	sec := now.Unix()
	r.rateMu.Lock()
	defer r.rateMu.Unlock()
	if r.rate == nil {
		r.rate = map[string]rateWindow{}
	}
	w := r.rate[k]
	if w.second != sec {
		for key, old := range r.rate { // forget idle shards
			if old.second < sec-1 {
				delete(r.rate, key)
			}
		}
		w = rateWindow{second: sec}
	}
	if w.calls >= limit {
		return apierr.New(errLimit, 400, "Rate exceeded for shard %s in stream %s under account %s.", it.Shard, it.Arn, r.opts.AccountID)
	}
	w.calls++
	r.rate[k] = w
	return nil
}

// read returns the records an iterator reaches, at most limit of them and
// at most 1 MB (always at least one), and the iterator to continue with, nil
// once a closed shard has been read to its end (s.mu held, for reading at
// least). Records past upTo (not yet committed to the database) are not
// read, nor is a closing past upTo seen.
func (s *stream) read(it iterator, limit int, upTo uint64) ([]*record, *iterator, error) {
	sh := s.shard(it.Shard)
	if sh == nil {
		return nil, nil, apierr.New(errTrimmed, 400,
			"Shard %s of stream %s no longer exists: its records passed the retention period", it.Shard, it.Arn)
	}
	pos := it.Pos
	if it.Horizon {
		pos = max(pos, sh.trimmed+1)
	} else if pos <= sh.trimmed {
		return nil, nil, apierr.New(errTrimmed, 400,
			"The iterator points at sequence number %s, trimmed from shard %s: records beyond the retention period are removed", formatSeq(pos), sh.id)
	}
	all := sh.records
	if upTo < math.MaxUint64 {
		all = all[:sort.Search(len(all), func(i int) bool { return all[i].seq > upTo })]
	}
	i := sort.Search(len(all), func(i int) bool { return all[i].seq >= pos })
	j, size := i, 0
	for j < len(all) && j-i < limit {
		size += sh.records[j].size
		if size > maxRecordsBytes && j > i {
			break
		}
		j++
	}
	recs := sh.records[i:j:j]
	if j > i {
		pos = recs[len(recs)-1].seq + 1
	}
	if sh.closedFor(upTo) && j == len(sh.records) {
		// every record of the closed shard is read (and committed)
		return recs, nil, nil
	}
	return recs, &iterator{Arn: it.Arn, Shard: it.Shard, Pos: pos}, nil
}

func (r *Registry) recordOut(arn, view string, rec *record) recordOut {
	seq := formatSeq(rec.seq)
	h := sha256.Sum256([]byte(arn + "/" + seq))
	o := recordOut{
		AwsRegion: r.opts.Region,
		Dynamodb: streamRecordOut{
			ApproximateCreationDateTime: rec.at.Unix(),
			Keys:                        wire.Item(rec.keys),
			NewImage:                    wire.Item(rec.newImage),
			OldImage:                    wire.Item(rec.oldImage),
			SequenceNumber:              seq,
			SizeBytes:                   rec.size,
			StreamViewType:              view,
		},
		EventID:      hex.EncodeToString(h[:16]),
		EventName:    rec.eventName,
		EventSource:  "aws:dynamodb",
		EventVersion: "1.1",
	}
	if rec.identity != nil {
		o.UserIdentity = &identityOut{PrincipalId: rec.identity.PrincipalID, Type: rec.identity.Type}
	}
	return o
}
