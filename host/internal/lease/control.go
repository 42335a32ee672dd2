package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The lease table also holds control items, whose keys start with
// ControlPrefix (a shard id never does): a projection's pause and the
// stream instances a paused projection left unapplied. List leaves them
// out; ListAll returns them beside the leases. A worker's status rides on a
// lease it holds, as attributes a version that does not know them leaves
// alone.
const ControlPrefix = "dynafold#"

const (
	pausePrefix    = ControlPrefix + "pause#"
	deferredPrefix = ControlPrefix + "deferred#"
)

// Attribute names of control items.
const (
	AttrPaused     = "paused"
	AttrChangedAt  = "changedAtMillis"
	AttrBy         = "changedBy"
	AttrReason     = "reason"
	AttrProjection = "projection"
	AttrStreamName = "stream"
	AttrStreamID   = "streamId"
	AttrToken      = "token"
	AttrStatus     = "workerStatus"
	AttrStatusBy   = "workerStatusBy"
	AttrStatusAt   = "workerStatusMillis"
)

// IsControl reports whether a lease table key names a control item rather
// than a shard's lease.
func IsControl(key string) bool { return strings.HasPrefix(key, ControlPrefix) }

// Pause is a projection's pause as the lease table holds it.
type Pause struct {
	Projection string
	Paused     bool
	At         time.Time // when it was last paused or resumed, by the writer's clock
	By         string    // who did it
	Reason     string
}

// Deferred is a stream instance a paused projection left unapplied: its
// rows are caught up from the event store once the projection resumes.
// Token changes with every write, so a catch-up deletes the record only
// when nobody recorded the instance again since it read it.
type Deferred struct {
	Projection, Stream, StreamID string
	Token                        string
	At                           time.Time
}

func (d Deferred) key() string {
	return deferredPrefix + d.Projection + "#" + d.Stream + "#" + d.StreamID
}

// WorkerStatus is what a worker publishes for `host status`: a JSON
// document (the freshness of its last hour), and when.
type WorkerStatus struct {
	Worker string
	At     time.Time
	Status string
}

// Controls are the control items of the lease table.
type Controls struct {
	Pauses   map[string]Pause // by projection
	Deferred []Deferred
	Workers  []WorkerStatus
}

// Paused reports whether the projection is paused.
func (c Controls) Paused(projection string) bool { return c.Pauses[projection].Paused }

// ListAll reads every item of the table (a strongly consistent scan): the
// leases, and the control items.
func (t *Table) ListAll(ctx context.Context) ([]Lease, Controls, error) {
	var out []Lease
	ctl := Controls{Pauses: map[string]Pause{}}
	var start map[string]types.AttributeValue
	for {
		page, err := t.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start})
		if err != nil {
			var rnf *types.ResourceNotFoundException
			if errors.As(err, &rnf) {
				return nil, ctl, fmt.Errorf("%w: %s: create it with `host tables create` (the configuration's sidecar.leaseTable): %v", ErrNoTable, t.name, err)
			}
			return nil, ctl, fmt.Errorf("reading the leases of table %s: %w", t.name, err)
		}
		for _, it := range page.Items {
			key := str(it, AttrKey)
			if !IsControl(key) {
				out = append(out, fromItem(it))
				if by := str(it, AttrStatusBy); by != "" {
					ctl.addWorker(WorkerStatus{Worker: by, At: millis(it, AttrStatusAt), Status: str(it, AttrStatus)})
				}
				continue
			}
			switch {
			case strings.HasPrefix(key, pausePrefix):
				p := Pause{Projection: strings.TrimPrefix(key, pausePrefix), Reason: str(it, AttrReason), By: str(it, AttrBy), At: millis(it, AttrChangedAt)}
				if v, ok := it[AttrPaused].(*types.AttributeValueMemberBOOL); ok {
					p.Paused = v.Value
				}
				ctl.Pauses[p.Projection] = p
			case strings.HasPrefix(key, deferredPrefix):
				ctl.Deferred = append(ctl.Deferred, Deferred{Projection: str(it, AttrProjection), Stream: str(it, AttrStreamName),
					StreamID: str(it, AttrStreamID), Token: str(it, AttrToken), At: millis(it, AttrChangedAt)})
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, ctl, nil
		}
		start = page.LastEvaluatedKey
	}
}

// SetPaused pauses or resumes a projection across the fleet: every worker
// reads it at its next lease round.
func (t *Table) SetPaused(ctx context.Context, projection string, paused bool, by, reason string) error {
	it := map[string]types.AttributeValue{
		AttrKey: s(pausePrefix + projection), AttrPaused: &types.AttributeValueMemberBOOL{Value: paused},
		AttrChangedAt: n(t.now().UnixMilli()), AttrBy: s(by),
	}
	if reason != "" {
		it[AttrReason] = s(reason)
	}
	if _, err := t.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.name), Item: it}); err != nil {
		var rnf *types.ResourceNotFoundException
		if errors.As(err, &rnf) {
			return fmt.Errorf("%w: %s: create it with `host tables create` (the configuration's sidecar.leaseTable): %v", ErrNoTable, t.name, err)
		}
		return fmt.Errorf("writing the pause of projection %s in table %s: %w", projection, t.name, err)
	}
	return nil
}

// Defer records stream instances a paused projection left unapplied,
// each with a new token (BatchWriteItem, 25 at a time, unprocessed items
// retried until ctx ends).
func (t *Table) Defer(ctx context.Context, ds []Deferred) error {
	now := n(t.now().UnixMilli())
	for len(ds) > 0 {
		k := min(len(ds), 25)
		var reqs []types.WriteRequest
		for _, d := range ds[:k] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				AttrKey: s(d.key()), AttrProjection: s(d.Projection), AttrStreamName: s(d.Stream), AttrStreamID: s(d.StreamID),
				AttrToken: s(newToken()), AttrChangedAt: now,
			}}})
		}
		ds = ds[k:]
		for attempt := 1; len(reqs) > 0; attempt++ {
			out, err := t.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{t.name: reqs}})
			if err != nil {
				return fmt.Errorf("recording the stream instances a paused projection left, in table %s: %w", t.name, err)
			}
			reqs = out.UnprocessedItems[t.name]
			if len(reqs) > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(min(attempt, 10)) * 20 * time.Millisecond):
				}
			}
		}
	}
	return nil
}

// DoneDeferred deletes the record of a stream instance caught up, unless
// it was recorded again since it was read (its token changed); it reports
// whether it deleted it.
func (t *Table) DoneDeferred(ctx context.Context, d Deferred) (bool, error) {
	_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.name),
		Key: map[string]types.AttributeValue{AttrKey: s(d.key())}, ConditionExpression: aws.String("#t = :t"),
		ExpressionAttributeNames: map[string]string{"#t": AttrToken}, ExpressionAttributeValues: map[string]types.AttributeValue{":t": s(d.Token)}})
	if isConditional(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting the record of stream instance %s#%s of projection %s in table %s: %w", d.Stream, d.StreamID, d.Projection, t.name, err)
	}
	return true, nil
}

// PutWorkerStatus writes a worker's status document on a lease it holds
// (shard), conditioned on still owning it; the lease's counter is not
// moved, so the write races with no lease protocol write. A lease lost
// meanwhile is no error: the next round writes on another.
func (t *Table) PutWorkerStatus(ctx context.Context, shard, worker, status string) error {
	_, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.name),
		Key:                       map[string]types.AttributeValue{AttrKey: s(shard)},
		UpdateExpression:          aws.String("SET #st = :st, #by = :by, #at = :at"),
		ConditionExpression:       aws.String("#o = :by"),
		ExpressionAttributeNames:  map[string]string{"#st": AttrStatus, "#by": AttrStatusBy, "#at": AttrStatusAt, "#o": AttrOwner},
		ExpressionAttributeValues: map[string]types.AttributeValue{":st": s(status), ":by": s(worker), ":at": n(t.now().UnixMilli())}})
	if err != nil && !isConditional(err) {
		return fmt.Errorf("writing the status of worker %s on lease %s in table %s: %w", worker, shard, t.name, err)
	}
	return nil
}

// addWorker keeps the newest status of each worker.
func (c *Controls) addWorker(w WorkerStatus) {
	for i := range c.Workers {
		if c.Workers[i].Worker == w.Worker {
			if w.At.After(c.Workers[i].At) {
				c.Workers[i] = w
			}
			return
		}
	}
	c.Workers = append(c.Workers, w)
}

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func str(it map[string]types.AttributeValue, a string) string {
	if v, ok := it[a].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func millis(it map[string]types.AttributeValue, a string) time.Time {
	if v, ok := it[a].(*types.AttributeValueMemberN); ok {
		if ms, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			return time.UnixMilli(ms)
		}
	}
	return time.Time{}
}
