package ddblocal

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/kinesis"
	"github.com/dynafold/dynafold/ddblocal/internal/streams"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// A table's Kinesis streaming destinations (EnableKinesisStreamingDestination
// and its siblings): once one is ACTIVE, every change of the table is also
// written, in the same store transaction as the item, to that Kinesis
// stream of this server, in DynamoDB's Kinesis record format.

func init() {
	register("EnableKinesisStreamingDestination", enableKinesisDestination)
	register("DescribeKinesisStreamingDestination", describeKinesisDestination)
	register("UpdateKinesisStreamingDestination", updateKinesisDestination)
	register("DisableKinesisStreamingDestination", disableKinesisDestination)
}

// Destination statuses and creation-time precisions.
const (
	destActive      = "ACTIVE"
	destDisabled    = "DISABLED"
	precisionMilli  = "MILLISECOND"
	precisionMicro  = "MICROSECOND"
	precisionValues = "Member must satisfy enum value set: [MICROSECOND, MILLISECOND]"
	destStatePrefix = "Table is not in a valid state to enable Kinesis Streaming Destination: "
)

// kinesisDest is one streaming destination of a table, as stored in its
// tableMeta.
type kinesisDest struct {
	StreamArn string
	Status    string // ACTIVE or DISABLED
	Precision string // MILLISECOND or MICROSECOND
}

// activeKinesis returns a table's active destination, or nil (t.mu held).
func (t *table) activeKinesis() *kinesisDest {
	for i := range t.meta.KinesisDestinations {
		if d := &t.meta.KinesisDestinations[i]; d.Status == destActive {
			return d
		}
	}
	return nil
}

type precisionConfig struct {
	ApproximateCreationDateTimePrecision *string `json:",omitempty"`
}

type kinesisDestInput struct {
	TableName                           string
	StreamArn                           *string
	EnableKinesisStreamingConfiguration *precisionConfig
	UpdateKinesisStreamingConfiguration *precisionConfig
}

// destRequest decodes and checks a destination request and returns its
// table, locked for a change of its metadata (the caller calls unlockMeta).
func (s *Server) destRequest(ctx context.Context, body []byte, needArn bool) (*table, kinesisDestInput, error) {
	var in kinesisDestInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, in, err
	}
	var c constraintErrors
	if in.TableName == "" {
		c.add(constraint("null", "tableName", "Member must not be null"))
	} else if len(in.TableName) > 1024 {
		c.add(constraint("'"+in.TableName+"'", "tableName", "Member must have length less than or equal to 1024"))
	}
	if needArn {
		switch {
		case in.StreamArn == nil:
			c.add(constraint("null", "streamArn", "Member must not be null"))
		case len(*in.StreamArn) < 37:
			c.add(constraint("'"+*in.StreamArn+"'", "streamArn", "Member must have length greater than or equal to 37"))
		case len(*in.StreamArn) > 1024:
			c.add(constraint("'"+*in.StreamArn+"'", "streamArn", "Member must have length less than or equal to 1024"))
		}
	}
	for field, cfg := range map[string]*precisionConfig{
		"enableKinesisStreamingConfiguration": in.EnableKinesisStreamingConfiguration,
		"updateKinesisStreamingConfiguration": in.UpdateKinesisStreamingConfiguration,
	} {
		if cfg != nil && cfg.ApproximateCreationDateTimePrecision != nil {
			if p := *cfg.ApproximateCreationDateTimePrecision; p != precisionMilli && p != precisionMicro {
				c.add(constraint("'"+p+"'", field+".approximateCreationDateTimePrecision", precisionValues))
			}
		}
	}
	if err := c.err(); err != nil {
		return nil, in, err
	}
	t, err := s.lookupControl(in.TableName)
	if err != nil {
		return nil, in, err
	}
	t.lockMeta()
	if t.deleted {
		t.unlockMeta()
		return nil, in, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	return t, in, nil
}

func enableKinesisDestination(s *Server, ctx context.Context, body []byte) (any, error) {
	t, in, err := s.destRequest(ctx, body, true)
	if err != nil {
		return nil, err
	}
	defer t.unlockMeta()
	arn := *in.StreamArn
	if _, ok := s.kin.ARN(arn); !ok || !strings.HasPrefix(arn, "arn:") {
		return nil, apierr.NotFound("Requested resource not found: Kinesis stream %s not found; create it first (Kinesis CreateStream on this server)", arn)
	}
	if t.activeKinesis() != nil {
		return nil, apierr.Validation(destStatePrefix + "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation.")
	}
	precision := precisionMilli
	if c := in.EnableKinesisStreamingConfiguration; c != nil && c.ApproximateCreationDateTimePrecision != nil {
		precision = *c.ApproximateCreationDateTimePrecision
	}
	kept := t.meta.KinesisDestinations[:0:0]
	for _, d := range t.meta.KinesisDestinations {
		if d.StreamArn != arn {
			kept = append(kept, d)
		}
	}
	old := t.meta.KinesisDestinations
	t.meta.KinesisDestinations = append(kept, kinesisDest{StreamArn: arn, Status: destActive, Precision: precision})
	if err := s.saveMeta(t); err != nil {
		t.meta.KinesisDestinations = old
		return nil, err
	}
	out := map[string]any{"TableName": t.name, "StreamArn": arn, "DestinationStatus": "ENABLING"}
	if in.EnableKinesisStreamingConfiguration != nil {
		out["EnableKinesisStreamingConfiguration"] = in.EnableKinesisStreamingConfiguration
	}
	return out, nil
}

func describeKinesisDestination(s *Server, ctx context.Context, body []byte) (any, error) {
	t, _, err := s.destRequest(ctx, body, false)
	if err != nil {
		return nil, err
	}
	defer t.unlockMeta()
	list := []map[string]any{}
	for _, d := range t.meta.KinesisDestinations {
		m := map[string]any{"StreamArn": d.StreamArn, "DestinationStatus": d.Status}
		if d.Status == destActive {
			m["ApproximateCreationDateTimePrecision"] = d.Precision
		}
		list = append(list, m)
	}
	return map[string]any{"TableName": t.name, "KinesisDataStreamDestinations": list}, nil
}

func updateKinesisDestination(s *Server, ctx context.Context, body []byte) (any, error) {
	t, in, err := s.destRequest(ctx, body, true)
	if err != nil {
		return nil, err
	}
	defer t.unlockMeta()
	var d *kinesisDest
	for i := range t.meta.KinesisDestinations {
		if t.meta.KinesisDestinations[i].StreamArn == *in.StreamArn {
			d = &t.meta.KinesisDestinations[i]
		}
	}
	switch {
	case d == nil:
		return nil, apierr.Validation(destStatePrefix+"No streaming destination with streamArn: %s found for table with tableName: %s", *in.StreamArn, t.name)
	case d.Status != destActive:
		return nil, apierr.Validation(destStatePrefix + "Kinesis streaming is not in ACTIVE state. Updates are only allowed in ACTIVE state.")
	case in.UpdateKinesisStreamingConfiguration == nil || in.UpdateKinesisStreamingConfiguration.ApproximateCreationDateTimePrecision == nil:
		return nil, apierr.Validation("Streaming destination cannot be updated with given parameters: UpdateKinesisStreamingConfiguration cannot be null or contain only null values")
	}
	p := *in.UpdateKinesisStreamingConfiguration.ApproximateCreationDateTimePrecision
	if p == d.Precision {
		return nil, apierr.Validation("Invalid Request: Precision is already set to the desired value of %s", p)
	}
	was := d.Precision
	d.Precision = p
	if err := s.saveMeta(t); err != nil {
		d.Precision = was
		return nil, err
	}
	return map[string]any{"TableName": t.name, "StreamArn": d.StreamArn, "DestinationStatus": "UPDATING",
		"UpdateKinesisStreamingConfiguration": in.UpdateKinesisStreamingConfiguration}, nil
}

func disableKinesisDestination(s *Server, ctx context.Context, body []byte) (any, error) {
	t, in, err := s.destRequest(ctx, body, true)
	if err != nil {
		return nil, err
	}
	defer t.unlockMeta()
	d := t.activeKinesis()
	if d == nil || d.StreamArn != *in.StreamArn {
		return nil, apierr.Validation(destStatePrefix + "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation.")
	}
	d.Status = destDisabled
	if err := s.saveMeta(t); err != nil {
		d.Status = destActive
		return nil, err
	}
	out := map[string]any{"TableName": t.name, "StreamArn": d.StreamArn, "DestinationStatus": "DISABLING"}
	if in.EnableKinesisStreamingConfiguration != nil {
		out["EnableKinesisStreamingConfiguration"] = in.EnableKinesisStreamingConfiguration
	}
	return out, nil
}

// constraint is one violation of a "validation error detected" message.
func constraint(value, field, text string) string {
	return "Value " + value + " at '" + field + "' failed to satisfy constraint: " + text
}

// kinesisRecord is the Kinesis record of one change: the stream it goes
// to, its partition key and its data.
type kinesisRecord struct {
	stream, pk string
	data       []byte
}

// kinesisIdentity is userIdentity in DynamoDB's Kinesis record format.
type kinesisIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// kinesisChangeRecord is DynamoDB's change record as a table's Kinesis
// streaming destination writes it, fields in DynamoDB's order.
type kinesisChangeRecord struct {
	AwsRegion    string           `json:"awsRegion"`
	EventID      string           `json:"eventID"`
	EventName    string           `json:"eventName"`
	UserIdentity *kinesisIdentity `json:"userIdentity"`
	RecordFormat string           `json:"recordFormat"`
	TableName    string           `json:"tableName"`
	Dynamodb     kinesisChange    `json:"dynamodb"`
	EventSource  string           `json:"eventSource"`
}

type kinesisChange struct {
	ApproximateCreationDateTime int64     `json:"ApproximateCreationDateTime"`
	Keys                        wire.Item `json:"Keys"`
	NewImage                    wire.Item `json:"NewImage,omitempty"`
	OldImage                    wire.Item `json:"OldImage,omitempty"`
	SizeBytes                   int       `json:"SizeBytes"`
}

// kinesisChanges returns the Kinesis records of changes to tables with an
// active streaming destination (the tables' write locks held).
func (s *Server) kinesisChanges(eff []change, ident *streams.Identity, at time.Time) []kinesisRecord {
	var out []kinesisRecord
	for _, c := range eff {
		d := c.t.activeKinesis()
		if d == nil {
			continue
		}
		ch := kinesisChangeRecord{AwsRegion: s.opts.Region, EventID: uuid(), RecordFormat: "application/json",
			TableName: c.t.name, EventSource: "aws:dynamodb"}
		switch {
		case c.old == nil:
			ch.EventName = "INSERT"
		case c.new == nil:
			ch.EventName = "REMOVE"
		default:
			ch.EventName = "MODIFY"
		}
		if ident != nil {
			ch.UserIdentity = &kinesisIdentity{Type: ident.Type, PrincipalID: ident.PrincipalID}
		}
		ch.Dynamodb.ApproximateCreationDateTime = at.UnixMilli()
		if d.Precision == precisionMicro {
			ch.Dynamodb.ApproximateCreationDateTime = at.UnixMicro()
		}
		key := c.t.keyOf(c.key)
		ch.Dynamodb.Keys = wire.Item(key)
		ch.Dynamodb.NewImage, ch.Dynamodb.OldImage = wire.Item(c.new), wire.Item(c.old)
		ch.Dynamodb.SizeBytes = max(1, itemSize(key)) + itemSize(c.new) + itemSize(c.old)
		data, err := json.Marshal(ch)
		if err != nil { // items marshal as they are stored: cannot happen
			s.log.Error("ddblocal: encoding a Kinesis change record", "table", c.t.name, "err", err)
			continue
		}
		out = append(out, kinesisRecord{stream: kinesis.Name(d.StreamArn), pk: kinesisPartitionKey(c.key[c.t.key.hash]), data: data})
	}
	return out
}

// kinesisPartitionKey is the partition key of a change record: the MD5 of
// the item's partition key value (its type, then its bytes), in upper-case
// hex, as DynamoDB's records carry a 32-digit hex key. Every change of one
// item, and of one partition, so goes to one shard, in order.
func kinesisPartitionKey(v abi.Value) string {
	h := md5.New()
	h.Write([]byte{byte(v.Kind)})
	if v.Kind == abi.KindB {
		h.Write(v.Bytes)
	} else {
		h.Write([]byte(v.Str))
	}
	return strings.ToUpper(hex.EncodeToString(h.Sum(nil)))
}
