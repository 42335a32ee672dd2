// Package dynamo implements store.DB with aws-sdk-go-v2: lossless conversion
// between abi values and the SDK's attribute values, error mapping onto the
// store package's sentinels, BatchGetItem with chunking and unprocessed-key
// retries, and per-operation request counting.
package dynamo

import (
	"context"
	cryptorand "crypto/rand"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyrand "github.com/aws/smithy-go/rand"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// DB is a store.DB backed by a *dynamodb.Client. It is safe for concurrent
// use. Every read it makes on a table is strongly consistent.
type DB struct {
	client  *dynamodb.Client
	counter *Counter
	opt     func(*dynamodb.Options)
	// wire, when set, sends the hot calls (GetItem, PutItem, UpdateItem,
	// DeleteItem, TransactWriteItems, Query, BatchGetItem) without the
	// SDK's middleware stack: a client built by ddbclient.NewClient with no
	// caller's middleware (ddbclient.Plain).
	wire *ddbclient.Wire
	// tokens makes TransactWriteItems' ClientRequestTokens on the wire
	// path: the client's IdempotencyTokenProvider, as the SDK's call
	// takes it, read once (Options copies the client's whole options).
	tokens dynamodb.IdempotencyTokenProvider
}

var _ store.DB = (*DB)(nil)

// New returns a DB using client. Requests it sends are counted (see Counts).
// The hot calls of a client ddbclient.NewClient built with no middleware of
// its caller's go straight to the wire (ddbclient.Wire): the same requests,
// signing, retries and errors, at a fraction of the SDK's CPU; any other
// client's go through the SDK.
func New(client *dynamodb.Client) *DB {
	c := NewCounter()
	d := &DB{client: client, counter: c, opt: c.ClientOption()}
	if w, ok := ddbclient.NewWire(context.Background(), client); ok {
		w.Attempt = c.add
		w.Failed = c.attempted
		d.wire = w
		d.tokens = client.Options().IdempotencyTokenProvider
		if d.tokens == nil {
			d.tokens = smithyrand.NewUUIDIdempotencyToken(cryptorand.Reader)
		}
	}
	return d
}

// NewSDK is New with every call through the SDK's client, never the wire
// path: for comparing the two.
func NewSDK(client *dynamodb.Client) *DB {
	c := NewCounter()
	return &DB{client: client, counter: c, opt: c.ClientOption()}
}

// Wire reports whether the hot calls go straight to the wire (see New).
func (d *DB) Wire() bool { return d.wire != nil }

// Client returns the underlying SDK client.
func (d *DB) Client() *dynamodb.Client { return d.client }

// Counts returns the HTTP requests this DB has sent so far, per operation
// name (GetItem, BatchGetItem, PutItem, UpdateItem, DeleteItem,
// TransactWriteItems, Query), retries and unprocessed-key rounds included.
func (d *DB) Counts() map[string]int64 { return d.counter.Counts() }

// Throttled returns the attempts DynamoDB refused for its rate so far, per
// operation name: the retryer retried them with backoff, so they cost
// time even when the request succeeded in the end.
func (d *DB) Throttled() map[string]int64 { return d.counter.Throttled() }

// ResetCounts sets every request count back to zero.
func (d *DB) ResetCounts() { d.counter.Reset() }

// GetItem implements store.DB (consistent read).
func (d *DB) GetItem(ctx context.Context, table string, key abi.Item) (abi.Item, error) {
	if d.wire != nil {
		return d.wireGetItem(ctx, table, key)
	}
	k, err := ddbclient.ToAttributeMap(key)
	if err != nil {
		return nil, fmt.Errorf("dynamo GetItem key: %w", err)
	}
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            k,
		ConsistentRead: aws.Bool(true),
	}, d.opt)
	if err != nil {
		return nil, mapError("GetItem on "+table, err)
	}
	if out.Item == nil {
		return nil, nil
	}
	return ddbclient.FromAttributeMap(out.Item)
}

// PutItem implements store.DB.
func (d *DB) PutItem(ctx context.Context, p store.Put) error {
	if d.wire != nil {
		return d.wirePutItem(ctx, p)
	}
	in, err := putInput(p)
	if err != nil {
		return fmt.Errorf("dynamo PutItem: %w", err)
	}
	_, err = d.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 in.TableName,
		Item:                      in.Item,
		ConditionExpression:       in.ConditionExpression,
		ExpressionAttributeNames:  in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues,
	}, d.opt)
	return mapError("PutItem on "+p.Table, err)
}

// UpdateItem implements store.DB; it returns the item after the update.
func (d *DB) UpdateItem(ctx context.Context, u store.Update) (abi.Item, error) {
	if d.wire != nil {
		return d.wireUpdateItem(ctx, u)
	}
	in, err := updateInput(u)
	if err != nil {
		return nil, fmt.Errorf("dynamo UpdateItem: %w", err)
	}
	out, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 in.TableName,
		Key:                       in.Key,
		UpdateExpression:          in.UpdateExpression,
		ConditionExpression:       in.ConditionExpression,
		ExpressionAttributeNames:  in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues,
		ReturnValues:              types.ReturnValueAllNew,
	}, d.opt)
	if err != nil {
		return nil, mapError("UpdateItem on "+u.Table, err)
	}
	return ddbclient.FromAttributeMap(out.Attributes)
}

// DeleteItem implements store.DB.
func (d *DB) DeleteItem(ctx context.Context, del store.Delete) error {
	if d.wire != nil {
		return d.wireDeleteItem(ctx, del)
	}
	in, err := deleteInput(del)
	if err != nil {
		return fmt.Errorf("dynamo DeleteItem: %w", err)
	}
	_, err = d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 in.TableName,
		Key:                       in.Key,
		ConditionExpression:       in.ConditionExpression,
		ExpressionAttributeNames:  in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues,
	}, d.opt)
	return mapError("DeleteItem on "+del.Table, err)
}

// TransactWriteItems implements store.DB. A cancelled transaction is a
// *store.TxCanceledError (errors.As) with its reasons in item order.
func (d *DB) TransactWriteItems(ctx context.Context, writes []store.Write) error {
	if d.wire != nil {
		return d.wireTransactWriteItems(ctx, writes)
	}
	items := make([]types.TransactWriteItem, len(writes))
	for i, w := range writes {
		ti, err := transactItem(w)
		if err != nil {
			return fmt.Errorf("dynamo TransactWriteItems item %d: %w", i, err)
		}
		items[i] = ti
	}
	_, err := d.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}, d.opt)
	return mapError("TransactWriteItems", err)
}

// Query implements store.DB. A query of the table (no Index) is strongly
// consistent; a query of an index is eventually consistent.
func (d *DB) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if d.wire != nil {
		return d.wireQuery(ctx, q)
	}
	vals, err := valuesMap(q.Values)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo Query values: %w", err)
	}
	start, err := ddbclient.ToAttributeMap(q.StartKey)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo Query start key: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(q.Table),
		KeyConditionExpression:    aws.String(q.KeyCond),
		ExpressionAttributeNames:  namesMap(q.Names),
		ExpressionAttributeValues: vals,
		ExclusiveStartKey:         start,
		ScanIndexForward:          aws.Bool(!q.Backwards),
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	if q.Filter != "" {
		in.FilterExpression = aws.String(q.Filter)
	}
	if q.Limit > 0 {
		in.Limit = aws.Int32(q.Limit)
	}
	out, err := d.client.Query(ctx, in, d.opt)
	if err != nil {
		return store.Page{}, mapError("Query on "+q.Table, err)
	}
	page := store.Page{Items: make([]abi.Item, 0, len(out.Items))}
	for _, it := range out.Items {
		item, err := ddbclient.FromAttributeMap(it)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo Query: %w", err)
		}
		page.Items = append(page.Items, item)
	}
	if len(out.LastEvaluatedKey) > 0 {
		if page.LastKey, err = ddbclient.FromAttributeMap(out.LastEvaluatedKey); err != nil {
			return store.Page{}, fmt.Errorf("dynamo Query last key: %w", err)
		}
	}
	return page, nil
}

// Scan reads one page of a table scan (eventually consistent unless
// sc.Consistent), for operator commands; the engine never scans.
func (d *DB) Scan(ctx context.Context, sc store.Scan) (store.Page, error) {
	vals, err := valuesMap(sc.Values)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo Scan values: %w", err)
	}
	start, err := ddbclient.ToAttributeMap(sc.StartKey)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo Scan start key: %w", err)
	}
	in := &dynamodb.ScanInput{TableName: aws.String(sc.Table), ExpressionAttributeNames: namesMap(sc.Names),
		ExpressionAttributeValues: vals, ExclusiveStartKey: start}
	if sc.Filter != "" {
		in.FilterExpression = aws.String(sc.Filter)
	}
	if sc.Projection != "" {
		in.ProjectionExpression = aws.String(sc.Projection)
	}
	if sc.TotalSegments > 0 {
		in.Segment, in.TotalSegments = aws.Int32(int32(sc.Segment)), aws.Int32(int32(sc.TotalSegments))
	}
	if sc.Consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	out, err := d.client.Scan(ctx, in, d.opt)
	if err != nil {
		return store.Page{}, mapError("Scan on "+sc.Table, err)
	}
	page := store.Page{Items: make([]abi.Item, 0, len(out.Items))}
	for _, it := range out.Items {
		item, err := ddbclient.FromAttributeMap(it)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo Scan: %w", err)
		}
		page.Items = append(page.Items, item)
	}
	if len(out.LastEvaluatedKey) > 0 {
		if page.LastKey, err = ddbclient.FromAttributeMap(out.LastEvaluatedKey); err != nil {
			return store.Page{}, fmt.Errorf("dynamo Scan last key: %w", err)
		}
	}
	return page, nil
}
