package feed

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	smithytime "github.com/aws/smithy-go/time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// WireAPI is a Streams client whose GetRecords a Reader sends on the wire
// path (ddbclient.Wire): the answer's records decoded straight into
// host.Record, without the SDK's middleware stack, its Record and
// AttributeValue types and their conversion. Errors are the SDK's (the
// same types, codes and retries), so the reader treats them alike. Its
// other calls are the client's.
type WireAPI struct {
	*dynamodbstreams.Client
	wire *ddbclient.Wire
}

// WithWire returns c as a WireAPI, or c itself when its endpoint does not
// resolve to a fixed URL. c must run no middleware of its caller's but
// ddbclient.KeepConnectionsMiddleware: the wire path leaves the SDK's
// stack out.
func WithWire(ctx context.Context, c *dynamodbstreams.Client) API {
	w, ok := ddbclient.NewStreamsWire(ctx, c)
	if !ok {
		return c
	}
	return &WireAPI{Client: c, wire: w}
}

// Wire returns the wire path's sender (its Attempt hook counts attempts).
func (a *WireAPI) Wire() *ddbclient.Wire { return a.wire }

// getRecords is GetRecords on the wire path: the records after iter, at
// most limit, and the next iterator (nil once the shard is finished).
func (a *WireAPI) getRecords(ctx context.Context, iter string, limit int) (recs []host.Record, next *string, err error) {
	buf := ddbclient.Buffer()
	buf.WriteString(`{"Limit":`)
	buf.WriteString(strconv.Itoa(limit))
	buf.WriteString(`,"ShardIterator":`)
	ddbjson.AppendString(buf, iter)
	buf.WriteByte('}')
	err = a.wire.CallBuffer(ctx, "GetRecords", buf, func(answer []byte) error {
		recs, next = nil, nil
		return ddbjson.Answer(answer, func(k []byte, v *ddbjson.Node) error {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "NextShardIterator":
				s, err := v.String()
				next = &s
				return err
			case "Records":
				return v.Array(func(v *ddbjson.Node) error {
					var r host.Record
					err := v.Object(func(k []byte, v *ddbjson.Node) error { return recordMember(&r, k, v) })
					recs = append(recs, r)
					return err
				})
			}
			return nil
		})
	})
	if err == nil && recs == nil {
		recs = []host.Record{}
	}
	return recs, next, err
}

// recordMember reads one member of a Streams API record as the SDK and
// streamsdk.Record read it (unknown members are left out).
func recordMember(r *host.Record, k []byte, v *ddbjson.Node) (err error) {
	if v.IsNull() {
		return nil
	}
	switch string(k) {
	case "eventID":
		r.EventID, err = v.String()
	case "eventName":
		r.EventName, err = v.String()
	case "eventVersion":
		r.EventVersion, err = v.String()
	case "eventSource":
		r.EventSource, err = v.String()
	case "awsRegion":
		r.AWSRegion, err = v.String()
	case "userIdentity":
		u := &host.UserIdentity{}
		r.UserIdentity = u
		err = v.Object(func(k []byte, v *ddbjson.Node) (err error) {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "Type":
				u.Type, err = v.String()
			case "PrincipalId":
				u.PrincipalID, err = v.String()
			}
			return err
		})
	case "dynamodb":
		d := &r.DynamoDB
		err = v.Object(func(k []byte, v *ddbjson.Node) (err error) {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "SequenceNumber":
				d.SequenceNumber, err = v.String()
			case "StreamViewType":
				d.StreamViewType, err = v.String()
			case "SizeBytes":
				var raw []byte
				if raw, err = v.Raw(); err == nil {
					d.SizeBytes, err = strconv.ParseInt(string(raw), 10, 64)
				}
			case "ApproximateCreationDateTime":
				var raw []byte
				if raw, err = v.Raw(); err == nil {
					var f float64
					if f, err = strconv.ParseFloat(string(raw), 64); err == nil {
						d.ApproximateCreationDateTime = smithytime.ParseEpochSeconds(f)
					}
				}
			case "Keys":
				d.Keys, err = v.Item()
			case "NewImage":
				d.NewImage, err = v.Item()
			case "OldImage":
				d.OldImage, err = v.Item()
			}
			return err
		})
	}
	return err
}
