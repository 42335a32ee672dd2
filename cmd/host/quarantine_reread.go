package main

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// rereader is the Processor of `quarantine replay`. A record that fails
// again is run again from the event table's item as it is now, read by the
// record's keys with a consistent read, when that item differs from the
// record's image: an event repaired in place since (update-item) replays
// as it is now, as a gap-fill of a later event already reads it. An item
// that is gone or unchanged keeps the first result.
type rereader struct {
	h      *host.Host
	client *dynamodb.Client
	table  string
	reread map[string]bool // record ids (sequence number, or event id) that succeeded from the item
}

// ProcessBatch runs records through h; a batch of one record that failed
// is run again from the event table's item when it was repaired since.
func (p *rereader) ProcessBatch(ctx context.Context, records []host.Record) (*host.Result, error) {
	res, err := p.h.ProcessBatch(ctx, records)
	if err != nil || len(records) != 1 || len(res.Failed()) == 0 || len(records[0].DynamoDB.Keys) == 0 || records[0].DynamoDB.NewImage == nil {
		return res, err
	}
	r := records[0]
	key, kerr := ddbclient.ToAttributeMap(r.DynamoDB.Keys)
	if kerr != nil {
		return res, nil
	}
	out, gerr := p.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(p.table), Key: key, ConsistentRead: aws.Bool(true)})
	if gerr != nil || out.Item == nil {
		return res, nil
	}
	item, ierr := ddbclient.FromAttributeMap(out.Item)
	if ierr != nil || abi.ItemsEqual(item, r.DynamoDB.NewImage) {
		return res, nil // as it was given up: the same failure
	}
	r.DynamoDB.NewImage = item
	res2, err := p.h.ProcessBatch(ctx, []host.Record{r})
	if err == nil && len(res2.Failed()) == 0 {
		p.reread[recordID(r)] = true
	}
	return res2, err
}

// recordID is a record's identifier: its sequence number, else its event
// id.
func recordID(r host.Record) string {
	if r.DynamoDB.SequenceNumber != "" {
		return r.DynamoDB.SequenceNumber
	}
	return r.EventID
}
