// Package lease keeps per-shard leases and checkpoints in a DynamoDB table,
// as the KCL does: one item per shard with its owner, a lease counter that
// every write of the owner increments (conditional on the counter it read,
// so two writers can never both win), the checkpoint (a sequence number,
// TRIM_HORIZON or SHARD_END) and the shard's parents.
//
// A lease is taken as expired when its counter has not moved for a lease
// duration as seen by the observer's own clock, so clocks of different
// machines never need to agree.
//
// Besides the owner's name (the worker id), a lease holds the owner's
// instance: a token each process draws at start. The owner's writes are
// conditional on both, so two processes started with the same worker id
// can never both hold a lease: the second one's writes fail as those of
// any other worker would.
package lease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Checkpoint values other than a sequence number.
const (
	TrimHorizon = "TRIM_HORIZON" // nothing processed yet: start at the oldest record
	ShardEnd    = "SHARD_END"    // the shard is closed and was processed to its end
)

// Attribute names of a lease item.
const (
	AttrKey        = "leaseKey"
	AttrOwner      = "leaseOwner"
	AttrCounter    = "leaseCounter"
	AttrCheckpoint = "checkpoint"
	AttrParents    = "parentShardIds"
	AttrStream     = "streamArn"
	AttrHeartbeat  = "heartbeatMillis"
	AttrStealBy    = "stealRequestedBy"
	AttrInstance   = "ownerInstance"
)

// ErrLost is matched by the error of a write that found the lease changed
// by someone else (taken, stolen, or released): the caller no longer owns
// it and must stop reading its shard.
var ErrLost = errors.New("lease: lost to another worker")

// ErrNoTable is matched by the error of List when the lease table does not
// exist.
var ErrNoTable = errors.New("lease: the lease table does not exist")

// Lease is one shard's lease as read from the table.
type Lease struct {
	Key        string   // the shard id
	Owner      string   // "" when no worker holds it
	Counter    int64    // incremented by every write
	Checkpoint string   // sequence number, TrimHorizon or ShardEnd
	Parents    []string // parent shard ids
	Stream     string   // the stream's ARN
	StealBy    string   // a worker that asked the owner to hand the lease over
	// Instance is the token of the owner's process ("" when unowned, or
	// written by a version that had none): two processes with the same
	// worker id have different instances.
	Instance string
	// Heartbeat is the time of the lease's last write by the writer's
	// clock (zero when never written so): for people and the fleet view,
	// never compared by the workers themselves.
	Heartbeat time.Time
}

// Finished reports whether the shard was processed to its end.
func (l Lease) Finished() bool { return l.Checkpoint == ShardEnd }

// Table is a lease table.
type Table struct {
	client *dynamodb.Client
	name   string
	now    func() time.Time
}

// NewTable returns the lease table name reached through client.
func NewTable(client *dynamodb.Client, name string) *Table {
	return &Table{client: client, name: name, now: time.Now}
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

// List reads every lease (a strongly consistent scan), leaving out the
// table's control items (see ListAll).
func (t *Table) List(ctx context.Context) ([]Lease, error) {
	out, _, err := t.ListAll(ctx)
	return out, err
}

// Create writes a new unowned lease at TrimHorizon unless one exists for
// the shard; it reports whether it wrote.
func (t *Table) Create(ctx context.Context, stream, shard string, parents []string) (bool, error) {
	it := map[string]types.AttributeValue{
		AttrKey: s(shard), AttrCounter: n(0), AttrCheckpoint: s(TrimHorizon), AttrStream: s(stream),
		AttrHeartbeat: n(t.now().UnixMilli()),
	}
	if len(parents) > 0 {
		it[AttrParents] = &types.AttributeValueMemberSS{Value: parents}
	}
	_, err := t.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.name), Item: it,
		ConditionExpression: aws.String("attribute_not_exists(#k)"), ExpressionAttributeNames: map[string]string{"#k": AttrKey}})
	if isConditional(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("creating the lease of shard %s in table %s: %w", shard, t.name, err)
	}
	return true, nil
}

// Take makes owner, in its process instance, the owner of l (an unowned
// or expired lease), conditional on l.Counter; it returns the lease as
// written.
func (t *Table) Take(ctx context.Context, l Lease, owner, instance string) (Lease, error) {
	return t.update(ctx, l, write{set: []string{"#o = :o", "#i = :i"}, remove: []string{"#s"},
		vals: map[string]types.AttributeValue{":o": s(owner), ":i": s(instance)}},
		func(x *Lease) { x.Owner, x.Instance, x.StealBy = owner, instance, "" })
}

// RequestSteal asks l's owner to hand the lease over: it records by in the
// lease (and moves the counter, so the owner's next write fails and it
// reads the request). The owner finishes its batch in flight, checkpoints
// and releases the lease; an owner that never does lets it expire.
func (t *Table) RequestSteal(ctx context.Context, l Lease, by string) (Lease, error) {
	return t.update(ctx, l, write{set: []string{"#s = :by"}, vals: map[string]types.AttributeValue{":by": s(by)}, owner: l.Owner, instance: l.Instance},
		func(x *Lease) { x.StealBy = by })
}

// Renew increments the counter of a lease owner holds.
func (t *Table) Renew(ctx context.Context, l Lease) (Lease, error) {
	return t.update(ctx, l, write{owner: l.Owner, instance: l.Instance}, nil)
}

// Checkpoint stores checkpoint (a sequence number or ShardEnd) in a lease
// owner holds.
func (t *Table) Checkpoint(ctx context.Context, l Lease, checkpoint string) (Lease, error) {
	return t.update(ctx, l, write{set: []string{"#c = :c"}, vals: map[string]types.AttributeValue{":c": s(checkpoint)}, owner: l.Owner, instance: l.Instance},
		func(x *Lease) { x.Checkpoint = checkpoint })
}

// Release gives up a lease owner holds, so another worker takes it at
// once: the worker that asked for it (StealBy, kept), or any worker when
// nobody did.
func (t *Table) Release(ctx context.Context, l Lease) (Lease, error) {
	return t.update(ctx, l, write{remove: []string{"#o", "#i"}, owner: l.Owner, instance: l.Instance}, func(x *Lease) { x.Owner, x.Instance = "", "" })
}

// Get reads one lease (strongly consistent); false when there is none.
func (t *Table) Get(ctx context.Context, key string) (Lease, bool, error) {
	out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{AttrKey: s(key)}})
	if err != nil {
		return Lease{}, false, fmt.Errorf("reading the lease of shard %s in table %s: %w", key, t.name, err)
	}
	if out.Item == nil {
		return Lease{}, false, nil
	}
	return fromItem(out.Item), true, nil
}

// Delete removes the lease of a finished shard that the stream no longer
// lists; a lease not finished is kept.
func (t *Table) Delete(ctx context.Context, l Lease) error {
	_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.name),
		Key: map[string]types.AttributeValue{AttrKey: s(l.Key)}, ConditionExpression: aws.String("#c = :end"),
		ExpressionAttributeNames: map[string]string{"#c": AttrCheckpoint}, ExpressionAttributeValues: map[string]types.AttributeValue{":end": s(ShardEnd)}})
	if err != nil && !isConditional(err) {
		return fmt.Errorf("deleting the lease of shard %s in table %s: %w", l.Key, t.name, err)
	}
	return nil
}

// write is one conditional update: SET and REMOVE clauses besides the
// counter and heartbeat, and, when owner (and instance) is set, the owner
// (and its instance) it requires.
type write struct {
	set, remove     []string
	vals            map[string]types.AttributeValue
	owner, instance string
}

// update writes the lease conditional on its counter (and owner),
// incrementing the counter and setting the heartbeat, and l.Stream when
// set: a lease written before leases recorded their stream gets it at its
// next write.
func (t *Table) update(ctx context.Context, l Lease, w write, apply func(*Lease)) (Lease, error) {
	names := map[string]string{"#n": AttrCounter, "#h": AttrHeartbeat, "#o": AttrOwner, "#c": AttrCheckpoint, "#s": AttrStealBy, "#i": AttrInstance, "#a": AttrStream}
	hb := t.now()
	vals := map[string]types.AttributeValue{":old": n(l.Counter), ":one": n(1), ":hb": n(hb.UnixMilli())}
	for k, v := range w.vals {
		vals[k] = v
	}
	set := append([]string{"#n = #n + :one", "#h = :hb"}, w.set...)
	if l.Stream != "" {
		set = append(set, "#a = :arn")
		vals[":arn"] = s(l.Stream)
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(w.remove) > 0 {
		expr += " REMOVE " + strings.Join(w.remove, ", ")
	}
	cond := "#n = :old"
	if w.owner != "" {
		cond += " AND #o = :me"
		vals[":me"] = s(w.owner)
		if w.instance != "" {
			cond += " AND #i = :inst"
			vals[":inst"] = s(w.instance)
		}
	}
	used := map[string]string{}
	for k, v := range names { // only the names the expressions use
		if strings.Contains(expr, k) || strings.Contains(cond, k) {
			used[k] = v
		}
	}
	_, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.name),
		Key: map[string]types.AttributeValue{AttrKey: s(l.Key)}, UpdateExpression: aws.String(expr),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: used, ExpressionAttributeValues: vals})
	if isConditional(err) {
		return l, fmt.Errorf("%w: shard %s (counter %d, owner %q, instance %q)", ErrLost, l.Key, l.Counter, l.Owner, l.Instance)
	}
	if err != nil {
		return l, fmt.Errorf("writing the lease of shard %s in table %s: %w", l.Key, t.name, err)
	}
	l.Counter++
	l.Heartbeat = time.UnixMilli(hb.UnixMilli())
	if apply != nil {
		apply(&l)
	}
	return l, nil
}

func isConditional(err error) bool {
	var cc *types.ConditionalCheckFailedException
	return errors.As(err, &cc)
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func fromItem(it map[string]types.AttributeValue) Lease {
	var l Lease
	str := func(a string) string {
		if v, ok := it[a].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	l.Key, l.Owner, l.Checkpoint, l.Stream, l.StealBy = str(AttrKey), str(AttrOwner), str(AttrCheckpoint), str(AttrStream), str(AttrStealBy)
	l.Instance = str(AttrInstance)
	if v, ok := it[AttrCounter].(*types.AttributeValueMemberN); ok {
		l.Counter, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	if v, ok := it[AttrParents].(*types.AttributeValueMemberSS); ok {
		l.Parents = v.Value
	}
	if v, ok := it[AttrHeartbeat].(*types.AttributeValueMemberN); ok {
		if ms, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			l.Heartbeat = time.UnixMilli(ms)
		}
	}
	return l
}
