package quarantine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// KeyAttribute is the quarantine table's only key attribute (a string).
const KeyAttribute = host.QuarantineKeyAttribute

// The attributes of a quarantine table's item besides KeyAttribute. The
// record is its stream-record JSON, images in DynamoDB JSON, as a Lambda
// event source mapping delivers it.
const (
	AttrProjection = "projection"
	AttrStream     = "stream"
	AttrShard      = "shard"
	AttrRecord     = "record"
	AttrReason     = "reason"
	AttrFirstSeen  = "firstSeen" // RFC 3339, UTC
	AttrLastSeen   = "lastSeen"
	AttrAttempts   = "attempts"
)

// ErrNotFound is matched by Get and Delete for an id the table does not
// hold.
var ErrNotFound = errors.New("no quarantine entry")

// Table is a Destination keeping one item per entry in a DynamoDB table
// keyed by KeyAttribute. An entry's id is derived from the projection, the
// stream, the shard and the record's sequence number (or event id), so the
// same record given up again updates its entry (reason, attempts, last
// seen) and keeps its first-seen time. Table is safe for concurrent use.
type Table struct {
	client *dynamodb.Client
	name   string
	now    func() time.Time
}

// NewTable returns the quarantine table name reached through client.
func NewTable(client *dynamodb.Client, name string) (*Table, error) {
	if client == nil {
		return nil, errors.New("quarantine table: nil client: pass a *dynamodb.Client")
	}
	if name == "" {
		return nil, errors.New("quarantine table: no table name: set quarantine.table in the configuration")
	}
	return &Table{client: client, name: name, now: time.Now}, nil
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// EntryID returns the id an entry without one gets: a hash of its
// projection, stream, shard and record identifier; random when the record
// has no identifier.
func EntryID(e Entry) string {
	rid := e.Record.DynamoDB.SequenceNumber
	if rid == "" {
		rid = e.Record.EventID
	}
	if rid == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}
	sum := sha256.Sum256([]byte(e.Projection + "\x00" + e.Stream + "\x00" + e.Shard + "\x00" + rid))
	return hex.EncodeToString(sum[:12])
}

// Send implements Destination: it writes e (its id derived by EntryID when
// empty), keeping the first-seen time of an entry already there.
func (t *Table) Send(ctx context.Context, e Entry) error {
	if e.ID == "" {
		e.ID = EntryID(e)
	}
	if e.FirstSeen.IsZero() {
		e.FirstSeen = t.now()
	}
	rec, err := json.Marshal(e.Record)
	if err != nil {
		return fmt.Errorf("quarantine %s: encoding the record: %w", e.ID, err)
	}
	vals := map[string]types.AttributeValue{
		":p": str(e.Projection), ":st": str(e.Stream), ":sh": str(e.Shard), ":r": str(string(rec)), ":why": str(e.Reason),
		":fs": str(e.FirstSeen.UTC().Format(time.RFC3339Nano)), ":ls": str(t.now().UTC().Format(time.RFC3339Nano)),
		":n": &types.AttributeValueMemberN{Value: strconv.Itoa(e.Attempts)},
	}
	_, err = t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(t.name), Key: map[string]types.AttributeValue{KeyAttribute: str(e.ID)},
		UpdateExpression: aws.String("SET #p = :p, #st = :st, #sh = :sh, #r = :r, #why = :why, #ls = :ls, #n = :n, #fs = if_not_exists(#fs, :fs)"),
		ExpressionAttributeNames: map[string]string{"#p": AttrProjection, "#st": AttrStream, "#sh": AttrShard, "#r": AttrRecord,
			"#why": AttrReason, "#ls": AttrLastSeen, "#n": AttrAttempts, "#fs": AttrFirstSeen},
		ExpressionAttributeValues: vals,
	})
	if err != nil {
		return fmt.Errorf("quarantine table %s: writing entry %s: %w", t.name, e.ID, err)
	}
	return nil
}

// Page is one page of List.
type Page struct {
	Entries []Entry
	// Next is the token of the next page; empty on the last one.
	Next string
}

// List returns up to limit entries (0: as many as one Scan page holds),
// starting after the token of a previous page ("" for the first).
func (t *Table) List(ctx context.Context, limit int, after string) (Page, error) {
	in := &dynamodb.ScanInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true)}
	if limit > 0 {
		in.Limit = aws.Int32(int32(min(limit, 1<<30)))
	}
	if after != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{KeyAttribute: str(after)}
	}
	out, err := t.client.Scan(ctx, in)
	if err != nil {
		return Page{}, fmt.Errorf("quarantine table %s: listing: %w", t.name, err)
	}
	var p Page
	for _, m := range out.Items {
		e, err := entryOf(m)
		if err != nil {
			return p, fmt.Errorf("quarantine table %s: %w", t.name, err)
		}
		p.Entries = append(p.Entries, e)
	}
	if id, ok := out.LastEvaluatedKey[KeyAttribute].(*types.AttributeValueMemberS); ok {
		p.Next = id.Value
	}
	return p, nil
}

// All returns every entry, following List's pages.
func (t *Table) All(ctx context.Context) ([]Entry, error) {
	var all []Entry
	for after := ""; ; {
		p, err := t.List(ctx, 0, after)
		all = append(all, p.Entries...)
		if err != nil || p.Next == "" {
			return all, err
		}
		after = p.Next
	}
}

// Get returns the entry id; ErrNotFound when there is none.
func (t *Table) Get(ctx context.Context, id string) (Entry, error) {
	out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{KeyAttribute: str(id)}})
	if err != nil {
		return Entry{}, fmt.Errorf("quarantine table %s: reading %s: %w", t.name, id, err)
	}
	if out.Item == nil {
		return Entry{}, fmt.Errorf("%w %q in %s: `host quarantine list` shows the ids", ErrNotFound, id, t.name)
	}
	return entryOf(out.Item)
}

// Delete removes the entry id; ErrNotFound when there is none.
func (t *Table) Delete(ctx context.Context, id string) error {
	_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.name),
		Key:                 map[string]types.AttributeValue{KeyAttribute: str(id)},
		ConditionExpression: aws.String("attribute_exists(#id)"), ExpressionAttributeNames: map[string]string{"#id": KeyAttribute}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%w %q in %s", ErrNotFound, id, t.name)
	}
	if err != nil {
		return fmt.Errorf("quarantine table %s: deleting %s: %w", t.name, id, err)
	}
	return nil
}

func entryOf(m map[string]types.AttributeValue) (Entry, error) {
	it, err := ddbclient.FromAttributeMap(m)
	if err != nil {
		return Entry{}, err
	}
	s := func(a string) string { return it[a].Str }
	e := Entry{ID: s(KeyAttribute), Projection: s(AttrProjection), Stream: s(AttrStream), Shard: s(AttrShard), Reason: s(AttrReason)}
	if e.FirstSeen, err = time.Parse(time.RFC3339Nano, s(AttrFirstSeen)); err != nil {
		return e, fmt.Errorf("entry %s: firstSeen %q: %w", e.ID, s(AttrFirstSeen), err)
	}
	if v, ok := it[AttrAttempts]; ok && v.Kind == abi.KindN {
		e.Attempts, _ = strconv.Atoi(v.Str)
	}
	if err := json.Unmarshal([]byte(s(AttrRecord)), &e.Record); err != nil {
		return e, fmt.Errorf("entry %s: the stored record does not decode: %w", e.ID, err)
	}
	return e, nil
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

var _ Destination = (*Table)(nil)

// Records returns the entries' records, in order, for Host.ProcessBatch.
func Records(es ...Entry) []host.Record {
	out := make([]host.Record, len(es))
	for i, e := range es {
		out[i] = e.Record
	}
	return out
}
