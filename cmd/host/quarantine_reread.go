package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	gone   map[string]bool // record ids passed over: their item was removed from the event table since
	// unread says, by record id, why a record that failed again could not
	// be checked against the event table's item (a repair made since
	// would not have been seen).
	unread map[string]string
}

// ProcessBatch runs records through h; a batch of one record that failed
// is run again from the event table's item when it was repaired since.
func (p *rereader) ProcessBatch(ctx context.Context, records []host.Record) (*host.Result, error) {
	res, err := p.h.ProcessBatch(ctx, records)
	if err == nil && len(records) == 1 && len(res.Failed()) == 0 {
		switch {
		case len(res.Corrected) == 1: // folded from the item as it is now (corrected since)
			p.reread[recordID(records[0])] = true
		case len(res.Obsolete) == 1: // passed over, as host run does: the item was removed
			p.gone[recordID(records[0])] = true
		}
	}
	if err != nil || len(records) != 1 || len(res.Failed()) == 0 || len(records[0].DynamoDB.Keys) == 0 || records[0].DynamoDB.NewImage == nil {
		return res, err
	}
	r := records[0]
	key, kerr := ddbclient.ToAttributeMap(r.DynamoDB.Keys)
	if kerr != nil {
		p.unread[recordID(r)] = fmt.Sprintf("its keys are not a DynamoDB key (%v), so the event table was not read for a repair", kerr)
		return res, nil
	}
	out, gerr := p.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(p.table), Key: key, ConsistentRead: aws.Bool(true)})
	var rnf *types.ResourceNotFoundException
	switch {
	case errors.As(gerr, &rnf):
		p.unread[recordID(r)] = fmt.Sprintf("event table %s does not exist, so a repair of its item could not be seen; create it (`host tables create`) or point the configuration at it, and replay again", p.table)
		return res, nil
	case gerr != nil:
		p.unread[recordID(r)] = fmt.Sprintf("its item in event table %s could not be read (%s), so a repair made there since was not seen; replay again once the table can be read", p.table, oneLine(ddbclient.Explain(gerr).Error()))
		return res, nil
	case out.Item == nil:
		p.unread[recordID(r)] = fmt.Sprintf("event table %s no longer holds its item (deleted since it was given up?): only the record as given up can be replayed", p.table)
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
