package quarantine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSAPI is the one method of *sqs.Client the SQS destination uses.
type SQSAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// SQS is a Destination sending each entry as one SQS message: the body is
// the entry's JSON (Entry.MarshalJSON), and the String attributes
// projection, stream and shard (when set) and the Number attribute attempts
// let consumers route without parsing it. For a FIFO queue (a URL ending
// in ".fifo") the message group is the shard, so one shard's entries stay
// in order, and the deduplication id is the entry's id.
type SQS struct {
	client   SQSAPI
	queueURL string
}

// NewSQS returns the destination sending to queueURL through client.
func NewSQS(client SQSAPI, queueURL string) (*SQS, error) {
	if client == nil {
		return nil, errors.New("quarantine queue: nil client: pass an *sqs.Client")
	}
	if queueURL == "" {
		return nil, errors.New("quarantine queue: empty queue URL: pass the queue's URL, e.g. https://sqs.us-east-1.amazonaws.com/123456789012/quarantine")
	}
	return &SQS{client: client, queueURL: queueURL}, nil
}

// Send implements Destination.
func (q *SQS) Send(ctx context.Context, e Entry) error {
	if e.ID == "" {
		e.ID = EntryID(e)
	}
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("quarantine queue: encoding entry %s: %w", e.ID, err)
	}
	attrs := map[string]types.MessageAttributeValue{
		"attempts": {DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(e.Attempts))},
	}
	for name, v := range map[string]string{"projection": e.Projection, "stream": e.Stream, "shard": e.Shard} {
		if v != "" { // SQS refuses an empty String attribute
			attrs[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.queueURL), MessageBody: aws.String(string(body)), MessageAttributes: attrs}
	if strings.HasSuffix(q.queueURL, ".fifo") {
		group := e.Shard
		if group == "" {
			group = "quarantine"
		}
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(e.ID)
	}
	if _, err := q.client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("quarantine queue %s: sending entry %s: %w", q.queueURL, e.ID, err)
	}
	return nil
}

var _ Destination = (*SQS)(nil)
