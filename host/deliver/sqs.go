package deliver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/dynafold/dynafold/internal/keys"
)

// SQSAPI is the one method of *sqs.Client an SQS target uses.
type SQSAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// SQSOptions configures an SQS target. The zero value is ready to use.
type SQSOptions struct {
	// Encoding of the message body; Plain by default.
	Encoding Encoding
}

// SQS delivers an effect with SendMessage to one queue: the body is the
// effect's JSON form, and the message attributes stream, streamId (String),
// version, index (Number), idempotencyKey and, when set, projection (String)
// let consumers route and deduplicate without parsing it.
//
// For a FIFO queue (a URL ending in ".fifo") MessageGroupId is the row's key
// rendered "pk=…,sk=…" (attributes sorted), so one row's effects are received
// in order, and MessageDeduplicationId is the effect's idempotency key, so
// SQS drops a redelivery within its five-minute window. A rendering SQS would
// refuse (over 128 characters, or characters other than printable ASCII) is
// replaced by "row-" and the hex SHA-256 of the rendering: still one group
// per row. An effect without a row key is grouped by stream and stream id.
//
// Errors are classified as for every target (see Error): throttling, 5xx and
// network failures are retryable; other 4xx answers (a missing queue, denied
// access, an invalid message) are permanent. An SQS target is safe for
// concurrent use when its client is.
type SQS struct {
	client   SQSAPI
	queueURL string
	fifo     bool
	opts     SQSOptions
}

// NewSQS returns an SQS target sending to queueURL through client, usually an
// *sqs.Client configured as usual (region, credentials, endpoint).
func NewSQS(client SQSAPI, queueURL string, o SQSOptions) (*SQS, error) {
	if client == nil {
		return nil, fmt.Errorf("sqs target %q: nil client: pass an *sqs.Client", queueURL)
	}
	if queueURL == "" {
		return nil, fmt.Errorf("sqs target: empty queue URL: pass the queue's URL, e.g. https://sqs.us-east-1.amazonaws.com/123456789012/effects")
	}
	if err := checkEncoding(o.Encoding); err != nil {
		return nil, fmt.Errorf("sqs target %s: %w", queueURL, err)
	}
	return &SQS{client: client, queueURL: queueURL, fifo: strings.HasSuffix(queueURL, ".fifo"), opts: o}, nil
}

// Deliver sends e; see SQS.
func (q *SQS) Deliver(ctx context.Context, e Effect) error {
	ik := e.IdempotencyKey()
	body, err := e.json(q.opts.Encoding, ik)
	if err != nil {
		return newError("sqs", q.queueURL, e, true, err)
	}
	attrs := map[string]types.MessageAttributeValue{
		"version":        {DataType: aws.String("Number"), StringValue: aws.String(strconv.FormatUint(e.Version, 10))},
		"index":          {DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(e.Index))},
		"idempotencyKey": {DataType: aws.String("String"), StringValue: aws.String(ik)},
	}
	// SQS refuses an empty String attribute: an empty field is left out.
	for name, v := range map[string]string{"stream": e.Stream, "streamId": e.StreamID, "projection": e.Projection} {
		if v != "" {
			attrs[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(q.queueURL),
		MessageBody:       aws.String(string(body)),
		MessageAttributes: attrs,
	}
	if q.fifo {
		in.MessageGroupId = aws.String(groupID(e))
		in.MessageDeduplicationId = aws.String(ik)
	}
	if _, err := q.client.SendMessage(ctx, in); err != nil {
		return sdkError("sqs", q.queueURL, e, err)
	}
	return nil
}

// groupID returns the FIFO message group of e's row; see SQS.
func groupID(e Effect) string {
	g := keys.String(e.Key)
	if len(e.Key) == 0 {
		g = e.Stream + "#" + e.StreamID
	}
	if validGroupID(g) {
		return g
	}
	sum := sha256.Sum256([]byte(g))
	return "row-" + hex.EncodeToString(sum[:])
}

// validGroupID reports whether SQS accepts g as a MessageGroupId: 1 to 128
// characters, printable ASCII (letters, digits and punctuation).
func validGroupID(g string) bool {
	if g == "" || len(g) > 128 {
		return false
	}
	for i := 0; i < len(g); i++ {
		if g[i] <= ' ' || g[i] > '~' {
			return false
		}
	}
	return true
}
